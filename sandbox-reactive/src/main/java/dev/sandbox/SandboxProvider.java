package dev.sandbox;

import java.time.Duration;
import java.util.Map;
import java.util.function.Function;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import reactor.util.retry.Retry;

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
     * Returns a new handle to the live session with this name ({@link SessionOptions#withName(String)}).
     *
     * <p>A method of its own, not {@link #attach(String)} taking either an id or a name: ids and names are different
     * keys, and one lookup that accepted both would let a name that happens to look like another session's id (or an
     * id chosen to look like a name) reach the wrong session. Here the argument is only ever compared with names, and
     * {@code attach} only ever with ids. A session that is ending (destroyed, its container or pod not yet gone) is
     * not found.
     *
     * <p>The default fails with {@link UnsupportedFeatureException}, for a provider without names.
     *
     * <pre>{@code
     * provider.attachByName("nightly-build")
     *     .flatMap(s -> s.run(ExecOptions.of("make")));
     * }</pre>
     *
     * @param name the session's name
     * @return a handle, {@link SessionNotFoundException} when no live session has the name, or {@link
     *     InvalidArgumentException} naming {@code name} for a name no session can have
     */
    default Mono<SandboxSession> attachByName(String name) {
        return Mono.error(new UnsupportedFeatureException(name(), "named sessions"));
    }

    /**
     * Attaches to the session with this name, or creates it with these options when there is none; callers racing
     * on one name all get the same session, exactly one of them creating it. The create is atomic at the provider
     * (its name is taken in one step: a map entry on the local provider, the container name on Docker, a Lease named
     * after it on Kubernetes), so this never checks and then creates blindly: it tries to attach, creates when there is
     * nothing to attach to, and on {@link SessionNameInUseException} (another caller won) attaches to the winner.
     *
     * <p>A name held by a session that is ending (destroyed, its container or pod not yet removed, such as a pod that
     * is still {@code Terminating}) is waited for, up to {@value #NAME_WAIT_SECONDS} seconds, polling every 100 ms;
     * then this fails with a retryable {@link SessionNameInUseException}. The options' own name, when set, must be
     * this name. The session created has the options given; one attached to keeps the options it was created with.
     *
     * <pre>{@code
     * Mono<SandboxSession> shared = provider.createOrAttach("team-cache", SessionOptions.defaults());
     * }</pre>
     *
     * <p>The default works from {@link #attachByName(String)} and a {@link #create(SessionOptions)} that takes the
     * name atomically; on a provider without names it fails with {@link UnsupportedFeatureException}.
     *
     * @param name the session's name
     * @param options options for the session when it is created
     * @return the session, created or attached to
     */
    default Mono<SandboxSession> createOrAttach(String name, SessionOptions options) {
        return Mono.defer(() -> {
            SessionOptions.validateName(name);
            if (options.name().isPresent() && !options.name().get().equals(name)) {
                throw new InvalidArgumentException(
                        "name",
                        "name '" + name + "' differs from the options' name '"
                                + options.name().get() + "'");
            }
            SessionOptions named = options.withName(name);
            Mono<SandboxSession> once = attachByName(name)
                    .onErrorResume(
                            SessionNotFoundException.class,
                            absent -> create(named)
                                    .onErrorResume(SessionNameInUseException.class, taken -> attachByName(name)));
            return once.retryWhen(Retry.fixedDelay(NAME_WAIT_SECONDS * 10L, Duration.ofMillis(100))
                    // not found after the create was refused: the holder is ending (or still starting)
                    .filter(e -> e instanceof SessionNotFoundException
                            || (e instanceof SessionNameInUseException taken && taken.isRetryable()))
                    .onRetryExhaustedThrow((spec, signal) -> new SessionNameInUseException(name, true)));
        });
    }

    /** How long {@link #createOrAttach(String, SessionOptions)} waits for an ending session to free its name. */
    int NAME_WAIT_SECONDS = 30;

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
