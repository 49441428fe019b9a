package dev.sandbox.implementation;

import dev.sandbox.ProviderClosedException;
import dev.sandbox.SandboxTimeoutException;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.core.scheduler.Schedulers;

/**
 * A provider's close, once: {@link #closeAsync} starts the release on its first subscription and every subscription
 * (this one, later ones, and those of {@link #close}) gets its outcome; {@link #close} waits for it within a bound.
 * The release runs detached from the subscriber, so cancelling a wait does not stop it half-way.
 */
public final class ProviderCloser {
    private static final Logger LOG = LoggerFactory.getLogger(ProviderCloser.class);

    private final String provider;
    private final Supplier<Mono<Void>> release;
    private final AtomicBoolean started = new AtomicBoolean();
    private final Sinks.Empty<Void> done = Sinks.empty();

    /**
     * Creates the closer.
     *
     * @param provider the provider's name, for errors
     * @param release what closing does; called once, and must not block the thread that subscribes to it
     */
    public ProviderCloser(String provider, Supplier<Mono<Void>> release) {
        this.provider = provider;
        this.release = release;
    }

    /**
     * Whether the close has started.
     *
     * @return {@code true} once closing was asked for
     */
    public boolean isClosed() {
        return started.get();
    }

    /**
     * Fails when the close has started.
     *
     * @throws ProviderClosedException when it has
     */
    public void ensureOpen() {
        if (started.get()) {
            throw new ProviderClosedException(provider);
        }
    }

    /**
     * Starts the release on the first subscription; completes with it.
     *
     * @return completes once released
     */
    public Mono<Void> closeAsync() {
        return Mono.defer(() -> {
            if (started.compareAndSet(false, true)) {
                Mono.defer(release)
                        .subscribe(
                                null,
                                e -> {
                                    LOG.debug("closing the {} provider failed: {}", provider, e.toString());
                                    done.tryEmitError(e);
                                },
                                done::tryEmitEmpty);
            }
            return done.asMono();
        });
    }

    /**
     * Starts the release and waits for it up to {@code timeout}; on a Reactor non-blocking thread, only starts it.
     *
     * @param timeout the longest wait
     * @throws SandboxTimeoutException when the release takes longer (it goes on in the background)
     */
    public void close(Duration timeout) {
        if (Schedulers.isInNonBlockingThread()) {
            closeAsync().subscribe(null, e -> LOG.warn("closing the {} provider failed: {}", provider, e.toString()));
            return;
        }
        closeAsync()
                .timeout(
                        timeout,
                        Mono.error(() -> new SandboxTimeoutException("closing the " + provider + " provider", timeout)))
                .block();
    }
}
