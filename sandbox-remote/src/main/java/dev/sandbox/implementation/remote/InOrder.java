package dev.sandbox.implementation.remote;

import dev.sandbox.SandboxStateException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

/**
 * Runs calls to the server one after another, in the order they were subscribed: writes to a terminal or a standard
 * input travel as separate requests, possibly over different pooled connections, and must not overtake each other
 * when a caller fires the next write before the previous one completed. Like a local standard input, at most
 * {@value #MAX_PENDING} calls may wait at once.
 */
final class InOrder {
    static final int MAX_PENDING = 16;

    private Mono<Void> tail = Mono.empty(); // guarded by this
    private int pending; // guarded by this

    /**
     * Runs a call once every call subscribed before it has ended (in any way).
     *
     * @param what how to name the calls in an error, such as {@code "stdin writes"}
     * @param call the call, made when its turn comes
     * @return completes when the call completed
     */
    Mono<Void> run(String what, Supplier<Mono<Void>> call) {
        return Mono.defer(() -> {
            Sinks.Empty<Void> done = Sinks.empty();
            Mono<Void> before;
            synchronized (this) {
                if (pending >= MAX_PENDING) {
                    return Mono.error(new SandboxStateException(
                            "too many " + what + " pending (" + MAX_PENDING + "); wait for earlier ones"));
                }
                pending++;
                before = tail;
                tail = done.asMono();
            }
            AtomicBoolean ended = new AtomicBoolean();
            Runnable end = () -> {
                if (ended.compareAndSet(false, true)) {
                    synchronized (this) {
                        pending--;
                    }
                    done.tryEmitEmpty();
                }
            };
            // before the caller hears of the end, so a caller that then makes the next call finds room for it
            return before.then(Mono.defer(call)).doOnTerminate(end).doOnCancel(end);
        });
    }
}
