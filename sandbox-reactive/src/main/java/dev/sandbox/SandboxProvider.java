package dev.sandbox;

import java.util.Map;
import java.util.function.Function;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * Creates and finds sandbox sessions of one kind: local processes, Docker containers, or sessions on a remote
 * server.
 *
 * <pre>{@code
 * SandboxProvider provider = LocalSandboxProvider.create();
 * Flux<ExecEvent> events = provider.withSession(SessionOptions.defaults(),
 *         session -> session.exec(ExecOptions.of("uname", "-a")));
 * }</pre>
 */
public interface SandboxProvider extends AutoCloseable {

    /**
     * The provider's name, such as {@code local}, {@code docker} or {@code remote}.
     *
     * @return the name
     */
    String name();

    /**
     * Creates a session.
     *
     * @param options workdir, environment, secrets and labels
     * @return the new session
     */
    Mono<SandboxSession> create(SessionOptions options);

    /**
     * Returns a new handle to an existing session.
     *
     * @param sessionId the session's id
     * @return a handle, or {@link SessionNotFoundException}
     */
    Mono<SandboxSession> attach(String sessionId);

    /**
     * Lists the sessions whose labels include every given label.
     *
     * @param labels labels to match; an empty map lists every session
     * @return the matching sessions
     */
    Flux<SessionInfo> list(Map<String, String> labels);

    /**
     * Creates a session from a snapshot, where the provider supports snapshots.
     *
     * @param snapshotRef the snapshot's reference
     * @param options options for the new session
     * @return the new session, or {@link UnsupportedFeatureException}
     */
    default Mono<SandboxSession> restore(String snapshotRef, SessionOptions options) {
        return Mono.error(new UnsupportedFeatureException(name(), "snapshots"));
    }

    /**
     * Creates a session, runs {@code body} with it, and destroys the session when the body's publisher completes,
     * fails or is cancelled.
     *
     * @param options options for the session
     * @param body what to do with the session
     * @param <T> the body's element type
     * @return the body's elements
     */
    default <T> Flux<T> withSession(
            SessionOptions options, Function<? super SandboxSession, ? extends Publisher<T>> body) {
        return Flux.usingWhen(
                create(options), body, SandboxSession::destroy, (s, e) -> s.destroy(), SandboxSession::destroy);
    }

    /**
     * Releases the provider and waits until it is released. Providers whose sessions live in this JVM (the local
     * provider) destroy them here. Idempotent. Each provider bounds the wait (a {@link SandboxTimeoutException} when
     * it runs out; the release goes on in the background). On a Reactor non-blocking thread, where waiting is not
     * allowed, it starts the release and returns at once: use {@link #closeAsync()} there to know when it is done.
     * After close, {@link #create}, {@link #attach} and {@link #list} fail with {@link ProviderClosedException}.
     */
    @Override
    void close();

    /**
     * Releases the provider without blocking the calling thread: the same release as {@link #close()}, started when
     * the returned {@code Mono} is subscribed and completing when it is done. Idempotent: every subscription, to this
     * or to a later call, completes (or fails) with the first release; cancelling a subscription does not stop it.
     * From the start of the release, the provider refuses new work with {@link ProviderClosedException}.
     *
     * <pre>{@code
     * // in a WebFlux application's shutdown hook, or anywhere on an event loop
     * provider.closeAsync()
     *     .timeout(Duration.ofSeconds(30))
     *     .subscribe(null, e -> log.warn("provider did not close cleanly", e));
     * }</pre>
     *
     * <p>The default runs {@link #close()} on {@link Schedulers#boundedElastic()}; the SDK's providers release
     * without holding a thread where they can.
     *
     * @return completes once the provider's resources are released
     */
    default Mono<Void> closeAsync() {
        return Mono.<Void>fromRunnable(this::close).subscribeOn(Schedulers.boundedElastic());
    }
}
