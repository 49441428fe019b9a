package dev.sandbox.tck;

import dev.sandbox.SandboxProvider;
import dev.sandbox.SandboxSession;
import dev.sandbox.SessionOptions;
import java.time.Duration;
import java.util.function.Consumer;
import reactor.core.publisher.Mono;

/** What every part of the conformance kit needs from the provider's test class. */
public interface ConformanceBase {

    /** The longest any single kit step waits. */
    Duration WAIT = Duration.ofSeconds(30);

    /**
     * The provider under test; shared by the test class and closed by it.
     *
     * @return the provider
     */
    SandboxProvider provider();

    /**
     * Options for sessions made by the kit; providers may add their own settings (an image).
     *
     * @return the options, {@link SessionOptions#defaults()} unless overridden
     */
    default SessionOptions sessionOptions() {
        return SessionOptions.defaults();
    }

    /**
     * An absolute directory that exists inside every session, other than its workdir.
     *
     * @return the directory, {@code /tmp} unless overridden
     */
    default String otherDirectory() {
        return "/tmp";
    }

    /**
     * Runs a blocking body with a fresh session that is destroyed afterwards, whatever happens.
     *
     * @param body the steps, given the session
     */
    default void inSession(Consumer<SandboxSession> body) {
        provider()
                .withSession(sessionOptions(), s -> Mono.fromRunnable(() -> body.accept(s)))
                .then()
                .block(WAIT.multipliedBy(4));
    }
}
