package dev.sandbox.blocking;

import dev.sandbox.BackendException;
import dev.sandbox.ExecOptions;
import dev.sandbox.InvalidArgumentException;
import dev.sandbox.SandboxTimeoutException;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Publisher;
import reactor.core.Disposable;
import reactor.core.Exceptions;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/** The one place where the facade waits on the reactive API: thread checks, timeouts, interrupts and unwrapping. */
final class Blocking {
    /** The most a blocking write hands to the reactive API at once, so that a large write is never copied whole. */
    static final int WRITE_SLICE = 64 * 1024;

    private Blocking() {}

    /** Fails when the caller runs on a Reactor thread that must never block. */
    static void checkCanBlock(String method) {
        if (Schedulers.isInNonBlockingThread()) {
            throw new IllegalStateException(method + " blocks and must not be called on the non-blocking thread '"
                    + Thread.currentThread().getName()
                    + "'; call it from another thread (for example Schedulers.boundedElastic()) or use the reactive"
                    + " SandboxSession instead");
        }
    }

    /**
     * The call with the calling thread's context: when Micrometer's context-propagation library is on the class path,
     * the thread locals it knows (the current observation and so the trace id, MDC entries with a registered
     * accessor) are captured at subscription into the Reactor {@code Context} the reactive call sees, where
     * operators and observations find them; without the library this is the call itself (Reactor checks once).
     * Subscribe to the result on the caller's thread.
     */
    static <T> Mono<T> withCallerContext(Mono<T> call) {
        return call.contextCapture();
    }

    /** The stream with the calling thread's context, as {@link #withCallerContext(Mono)}. */
    static <T> Flux<T> withCallerContext(Publisher<? extends T> stream) {
        return Flux.<T>from(stream).contextCapture();
    }

    /** Fails, without clearing the flag, when the caller is already interrupted. */
    static void checkNotInterrupted(String operation) {
        if (Thread.currentThread().isInterrupted()) {
            throw new SandboxInterruptedException(operation, null);
        }
    }

    /**
     * Waits as {@link #await} does for an operation that answers a value: one that completes without a value (a
     * provider breaking its contract) fails with a {@link BackendException} naming the operation, rather than
     * returning {@code null} from a method whose result is declared non-null.
     */
    static <T> T awaitValue(Mono<T> mono, Duration timeout, String method, String operation) {
        T value = await(mono, timeout, method, operation);
        if (value == null) {
            throw new BackendException("the " + operation + " completed without a value", null);
        }
        return value;
    }

    /**
     * Subscribes and waits for the result. A timeout or interrupt cancels the subscription, which for a command kills
     * it.
     *
     * @return the value, or {@code null} when the publisher completed without one (as a {@code Mono<Void>} does)
     */
    static <T> @Nullable T await(Mono<T> mono, Duration timeout, String method, String operation) {
        checkCanBlock(method);
        checkNotInterrupted(operation);
        CompletableFuture<T> result = new CompletableFuture<>();
        Disposable subscription = withCallerContext(mono)
                .subscribe(result::complete, result::completeExceptionally, () -> result.complete(null));
        try {
            return result.get(nanos(timeout), TimeUnit.NANOSECONDS);
        } catch (TimeoutException e) {
            subscription.dispose();
            throw new SandboxTimeoutException(operation, timeout);
        } catch (InterruptedException e) {
            subscription.dispose();
            Thread.currentThread().interrupt();
            throw new SandboxInterruptedException(operation, e);
        } catch (ExecutionException e) {
            throw rethrow(causeOf(e), operation);
        }
    }

    /**
     * Hands {@code bytes} to a reactive write (stdin, a terminal) in slices of at most {@link #WRITE_SLICE}, waiting
     * for each at most {@code timeout} before the next, so the writes arrive in order and are paced by the reader. An
     * empty array is one empty write.
     */
    static void writeInSlices(
            byte[] bytes, Function<ByteBuffer, Mono<Void>> write, Duration timeout, String method, String operation) {
        int off = 0;
        do {
            int len = Math.min(WRITE_SLICE, bytes.length - off);
            await(write.apply(ByteBuffer.wrap(bytes, off, len)), timeout, method, operation);
            off += len;
        } while (off < bytes.length);
    }

    /** The failure a future completed with; the wrapper itself in the (unused by the JDK) case that it has none. */
    static Throwable causeOf(ExecutionException e) {
        Throwable cause = e.getCause();
        return cause != null ? cause : e;
    }

    /**
     * The error to throw for a failure signalled by the reactive API: Reactor's wrappers removed, unchecked errors
     * unchanged (with the waiting caller's stack added as a suppressed exception), checked ones wrapped.
     */
    static RuntimeException rethrow(Throwable failure, String operation) {
        Throwable error = Exceptions.unwrap(failure);
        if (error instanceof Error e) {
            throw e;
        }
        if (error instanceof RuntimeException e) {
            e.addSuppressed(new Exception("the blocking call that waited for " + operation));
            return e;
        }
        return new BackendException(operation + " failed", error);
    }

    static Duration requirePositive(Duration timeout, String field) {
        Objects.requireNonNull(timeout, field);
        if (timeout.isZero() || timeout.isNegative()) {
            throw new InvalidArgumentException(field, field + " must be positive, got " + timeout);
        }
        return timeout;
    }

    /** The duration in nanoseconds, saturated so that very long timeouts mean "practically forever". */
    static long nanos(Duration timeout) {
        try {
            return timeout.toNanos();
        } catch (ArithmeticException e) {
            return Long.MAX_VALUE;
        }
    }

    /** A short description of a command for messages: its argv, cut when long. */
    static String describe(ExecOptions options) {
        List<String> argv = options.argv();
        String shown = argv.toString();
        return shown.length() > 120 ? shown.substring(0, 117) + "..." : shown;
    }
}
