package dev.sandbox.implementation.kubernetes;

import dev.sandbox.SessionEndReason;
import dev.sandbox.implementation.agentsession.AgentSession;
import dev.sandbox.kubernetes.KubernetesSandboxProvider;
import java.time.Duration;
import java.util.Map;
import reactor.core.publisher.Mono;

/** A handle to a Kubernetes session: the agent-backed session, its pod as the sandbox. */
final class KubernetesSession extends AgentSession {
    private final KubernetesSessions sessions;
    private final KubernetesSessions.KubeSessionState state;

    KubernetesSession(KubernetesSessions sessions, KubernetesSessions.KubeSessionState state) {
        super(state);
        this.sessions = sessions;
        this.state = state;
    }

    @Override
    protected String providerName() {
        return KubernetesSandboxProvider.NAME;
    }

    @Override
    protected String processLauncher() {
        return KubernetesSandboxProvider.PROCESS_LAUNCHER;
    }

    @Override
    protected boolean providerClosed() {
        return sessions.isClosed();
    }

    @Override
    protected Mono<Void> setTimers(Duration lifetime, Duration idleTimeout) {
        return sessions.setTimers(state, lifetime, idleTimeout);
    }

    @Override
    protected String[] reservedLabelPrefixes() {
        return new String[] {"dev.sandbox/", KubernetesSessions.LABEL_PREFIX};
    }

    @Override
    protected Mono<Void> recordLabels(Map<String, String> labels) {
        return sessions.recordLabels(state, labels);
    }

    @Override
    protected Mono<Void> destroySession() {
        return sessions.destroy(state, SessionEndReason.DESTROYED);
    }

    @Override
    public String toString() {
        return "KubernetesSession{" + state.id + ", namespace=" + sessions.namespace() + "}";
    }
}
