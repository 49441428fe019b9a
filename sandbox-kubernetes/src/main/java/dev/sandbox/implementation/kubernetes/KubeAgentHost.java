package dev.sandbox.implementation.kubernetes;

import dev.sandbox.BackendException;
import dev.sandbox.SessionTerminatedException;
import dev.sandbox.implementation.agent.AgentFileInfo;
import dev.sandbox.implementation.agent.AgentTransport;
import dev.sandbox.implementation.agentsession.AgentHost;
import dev.sandbox.implementation.agentsession.SessionAgent;
import io.fabric8.kubernetes.api.model.Pod;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Mono;

/**
 * A session pod as its agent's host: each connection is one {@code exec} of {@code sandbox-agent relay} in the
 * session container, through the API server; the pod's end is read from the provider's watch (no call).
 */
final class KubeAgentHost implements AgentHost {
    private static final Logger LOG = LoggerFactory.getLogger(KubeAgentHost.class);

    private final KubeDataPlane data;
    private final String namespace;
    private final String pod;
    private final String workdir;
    private final Supplier<Pod> lastSeen;
    private volatile SessionAgent agent;

    /**
     * The host of one session.
     *
     * @param data the data plane
     * @param namespace the pod's namespace
     * @param pod the pod's name
     * @param workdir the working directory the pod was made with, or {@code null} for the image's
     * @param lastSeen the pod as the provider's watch last saw it, {@code null} once deleted
     */
    KubeAgentHost(KubeDataPlane data, String namespace, String pod, String workdir, Supplier<Pod> lastSeen) {
        this.data = data;
        this.namespace = namespace;
        this.pod = pod;
        this.workdir = workdir;
        this.lastSeen = lastSeen;
    }

    /** Called once the session's agent is made: the image's working directory is asked of it. */
    void agent(SessionAgent agent) {
        this.agent = agent;
    }

    @Override
    public AgentTransport transport() {
        return outbound -> {
            StringBuilder stderr = new StringBuilder();
            AtomicInteger seen = new AtomicInteger();
            return data.exec(
                            namespace,
                            pod,
                            PodSpecs.CONTAINER,
                            List.of(PodSpecs.AGENT_PATH, "relay"),
                            outbound,
                            stderr::append)
                    .doOnNext(b -> seen.addAndGet(b.remaining()))
                    // a relay that carried the connection and then ended non-zero (its pod deleted, the agent
                    // gone): the pipe's end, as on Docker; naming the session's end is the watch's job
                    .onErrorResume(e -> e instanceof KubeDataPlane.ExecFailed && seen.get() > 0, e -> Mono.empty())
                    .onErrorMap(
                            KubeDataPlane.ExecFailed.class,
                            e -> new BackendException(
                                    "cannot reach the sandbox agent of pod " + pod + ": "
                                            + e.status().message()
                                            + (stderr.isEmpty() ? "" : " (" + PodStates.cut(stderr.toString()) + ")"),
                                    e,
                                    false))
                    .concatWith(Mono.<ByteBuffer>defer(() -> {
                        if (seen.get() == 0 && !stderr.isEmpty()) {
                            return Mono.error(new BackendException(
                                    "cannot reach the sandbox agent of pod " + pod + ": "
                                            + PodStates.cut(stderr.toString().strip()),
                                    null,
                                    false));
                        }
                        if (!stderr.isEmpty()) {
                            LOG.debug("agent relay of pod {} said: {}", pod, stderr);
                        }
                        return Mono.empty();
                    }));
        };
    }

    @Override
    public String workdir() {
        if (workdir != null) {
            return workdir;
        }
        String end = endCause();
        if (end != null) {
            throw new SessionTerminatedException(pod, end);
        }
        // the image's WORKDIR is in neither the pod's spec nor its status: the agent (process 1) started there
        SessionAgent agent = this.agent;
        AgentFileInfo cwd = agent == null
                ? null
                : agent.connection().flatMap(c -> c.files().stat("/proc/1/cwd")).block(SessionAgent.CONNECT_TIMEOUT);
        String target = cwd == null ? null : cwd.linkTarget();
        // hostile input: an absolute path of sane length, else the root
        if (target == null || !target.startsWith("/") || target.length() > 4096 || target.indexOf('\0') >= 0) {
            return "/";
        }
        return target;
    }

    @Override
    public String endCause() {
        Pod p = lastSeen.get();
        if (p == null) {
            return "its pod no longer exists";
        }
        if (p.getMetadata().getDeletionTimestamp() != null) {
            return "its pod is being deleted";
        }
        return PodStates.ended(p);
    }
}
