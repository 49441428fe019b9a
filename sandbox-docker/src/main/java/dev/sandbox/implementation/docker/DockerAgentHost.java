package dev.sandbox.implementation.docker;

import dev.sandbox.SessionTerminatedException;
import dev.sandbox.implementation.agent.AgentTransport;
import dev.sandbox.implementation.agentsession.AgentHost;

/**
 * A session container as its {@link dev.sandbox.implementation.agentsession.SessionAgent} sees it: one daemon exec
 * of the relay per connection ({@link DockerAgentTransport}), and one inspect of the container for its working
 * directory or its end.
 */
final class DockerAgentHost implements AgentHost {
    private final DockerControl control;
    private final DockerDataPlane data;
    private final String sessionId;
    private final String containerId;

    DockerAgentHost(DockerControl control, DockerDataPlane data, String sessionId, String containerId) {
        this.control = control;
        this.data = data;
        this.sessionId = sessionId;
        this.containerId = containerId;
    }

    @Override
    public AgentTransport transport() {
        return new DockerAgentTransport(control, data, sessionId, containerId);
    }

    @Override
    public String workdir() {
        var c = control.inspectContainer(containerId);
        if (c == null) {
            throw new SessionTerminatedException(sessionId, "its container no longer exists");
        }
        String workdir = c.getConfig() == null ? null : c.getConfig().getWorkingDir();
        return workdir == null || workdir.isEmpty() ? "/" : workdir;
    }

    @Override
    public String endCause() {
        var c = control.inspectContainer(containerId);
        if (c == null) {
            return "its container no longer exists";
        }
        if (c.getState() == null || !Boolean.TRUE.equals(c.getState().getRunning())) {
            return ContainerDeath.describe(c);
        }
        return null;
    }
}
