package dev.sandbox.implementation.agentsession;

import dev.sandbox.SessionTerminatedException;
import dev.sandbox.implementation.agent.AgentTransport;

/**
 * What a provider that runs the agent gives a {@link SessionAgent}: pipes to the agent of one sandbox (its container
 * or pod), and what the provider's control plane knows about that sandbox. The methods that ask the control plane
 * block; the session agent calls them on {@code boundedElastic} only.
 */
public interface AgentHost {
    /**
     * A new pipe to the sandbox's agent: one per connection (one relay each).
     *
     * @return the transport of one connection
     */
    AgentTransport transport();

    /**
     * The sandbox's default working directory, asked once. Blocking.
     *
     * @return the directory commands start in, {@code /} when the sandbox sets none
     * @throws SessionTerminatedException when the sandbox no longer exists
     */
    String workdir();

    /**
     * Why the sandbox ended, asked after a lost connection and by {@link SessionAgent#checkRunning()}. Blocking.
     *
     * @return the cause (such as {@code its container no longer exists}), or {@code null} while the sandbox runs
     */
    String endCause();
}
