package dev.sandbox.micrometer;

import static dev.sandbox.micrometer.SandboxObservationNames.*;

import dev.sandbox.ExecEvent;
import dev.sandbox.ExecResult;
import dev.sandbox.SessionClosedException;
import io.micrometer.context.ContextSnapshot;
import io.micrometer.context.ContextSnapshotFactory;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import io.micrometer.observation.contextpropagation.ObservationThreadLocalAccessor;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BiConsumer;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Publisher;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.SignalType;
import reactor.util.context.Context;
import reactor.util.context.ContextView;

/** Observes the calls of one observed provider and its sessions: observations, counters and log lines. */
@SuppressWarnings("try") // the scopes of thread locals are used only for their closing
final class Instrumentation {
    private static final Logger LOG = LoggerFactory.getLogger(SandboxObservations.class);
    private static final ContextSnapshotFactory SNAPSHOTS =
            ContextSnapshotFactory.builder().build();

    final ObservationRegistry registry;
    final String provider;
    private final @Nullable Counters counters; // null without a MeterRegistry

    Instrumentation(ObservationRegistry registry, @Nullable MeterRegistry meters, String provider) {
        this.registry = registry;
        this.provider = provider;
        this.counters = meters == null ? null : new Counters(meters, provider);
    }

    /** Observes a call that answers at most one value. */
    <T> Mono<T> mono(
            String name,
            @Nullable String sessionId,
            Supplier<? extends Mono<T>> call,
            BiConsumer<Call, ? super T> onValue) {
        return Mono.fromDirect(observe(name, sessionId, call, onValue, true));
    }

    /**
     * Observes a call: an observation starts when it is subscribed and stops when it completes, fails or is
     * cancelled. The call is made, and its publisher subscribed, with the caller's context (and the session id) in
     * the thread locals, so that what the SDK logs there carries them; the call's publisher sees the observation and
     * the session id in its Reactor context.
     */
    <T> Flux<T> flux(
            String name,
            @Nullable String sessionId,
            Supplier<? extends Publisher<T>> call,
            BiConsumer<Call, ? super T> onValue) {
        return observe(name, sessionId, call, onValue, false);
    }

    /**
     * The observed call. A single-valued call (a Mono's) stops its observation at its value, before handing it on:
     * a subscriber such as {@code block()} takes the value as the end of the call, without waiting for completion.
     */
    private <T> Flux<T> observe(
            String name,
            @Nullable String sessionId,
            Supplier<? extends Publisher<T>> call,
            BiConsumer<Call, ? super T> onValue,
            boolean single) {
        return Flux.deferContextual(callerContext -> {
            Observation parent = callerContext.getOrDefault(ObservationThreadLocalAccessor.KEY, null);
            Observation observation = Observation.createNotStarted(name, registry)
                    .parentObservation(parent != null ? parent : registry.getCurrentObservation())
                    .lowCardinalityKeyValue(PROVIDER, provider);
            if (sessionId != null) {
                observation.highCardinalityKeyValue(SESSION_ID, sessionId);
            }
            observation.start();
            Context extra = Context.of(ObservationThreadLocalAccessor.KEY, observation);
            if (sessionId != null) {
                extra = extra.put(SESSION_ID, sessionId);
            }
            ContextView context = Context.of(callerContext).putAll(extra.readOnly());
            Call observed = new Call(name, sessionId, observation, context);
            Publisher<T> source;
            try (ContextSnapshot.Scope scope = SNAPSHOTS.setThreadLocalsFrom(context)) {
                LOG.debug("{} starts{}", name, observed.inSession());
                source = call.get();
            } catch (RuntimeException e) {
                source = Flux.error(e);
            }
            Publisher<T> made = source;
            Flux<T> subscribedWithin = Flux.from(subscriber -> {
                try (ContextSnapshot.Scope scope = SNAPSHOTS.setThreadLocalsFrom(context)) {
                    made.subscribe(subscriber);
                }
            });
            Context inner = extra;
            return subscribedWithin
                    .contextWrite(c -> c.putAll(inner.readOnly()))
                    .doOnNext(value -> {
                        onValue.accept(observed, value);
                        if (single) {
                            observed.stop(SignalType.ON_COMPLETE, null);
                        }
                    })
                    // before the terminal signal goes on: whoever waits for the call sees its observation stopped
                    .doOnComplete(() -> observed.stop(SignalType.ON_COMPLETE, null))
                    .doOnError(e -> observed.stop(SignalType.ON_ERROR, e))
                    .doOnCancel(() -> observed.stop(SignalType.CANCEL, null));
        });
    }

    /** Counts what an exec delivers and notes its exit. */
    void execEvent(Call call, ExecEvent event) {
        switch (event) {
            case ExecEvent.Line line -> {
                if (counters != null) {
                    counters.line(line.stream(), line.nextOffset() - line.offset());
                }
            }
            case ExecEvent.Chunk chunk -> {
                if (counters != null) {
                    counters.execBytes(chunk.stream(), chunk.size());
                }
            }
            case ExecEvent.Exit exit -> call.exit(exit.code(), exit.termination());
        }
    }

    /** Counts a run's output and notes its exit. */
    void runResult(Call call, ExecResult result) {
        call.exit(result.exitCode(), result.termination());
        if (counters != null) {
            counters.runStdout.increment(result.stdoutBytes());
            counters.runStderr.increment(result.stderrBytes());
        }
    }

    /** Counts file bytes moved by the given operation: read, write, upload or download. */
    void fileBytes(String operation, long bytes) {
        if (counters != null && bytes > 0) {
            counters.file(operation).increment(bytes);
        }
    }

    /** One observed call. */
    final class Call {
        private final String name;
        private final @Nullable String sessionId;
        private final Observation observation;
        private final ContextView context;
        private volatile String exitCode = NONE;
        private volatile String termination = NONE;
        private final AtomicBoolean stopped = new AtomicBoolean();
        private volatile @Nullable String created;

        Call(String name, @Nullable String sessionId, Observation observation, ContextView context) {
            this.name = name;
            this.sessionId = sessionId;
            this.observation = observation;
            this.context = context;
        }

        void exit(int code, ExecEvent.Termination how) {
            exitCode = Integer.toString(code);
            termination = how == null ? NONE : how.name();
        }

        /** The session the call made (create): its id becomes a high-cardinality tag and is logged. */
        void session(String id) {
            created = id;
            observation.highCardinalityKeyValue(SESSION_ID, id);
        }

        private String inSession() {
            return sessionId == null ? "" : " in session " + sessionId;
        }

        /** Stops the observation, once: a cancellation racing the end of the call counts only if it came first. */
        void stop(SignalType signal, @Nullable Throwable failure) {
            if (!stopped.compareAndSet(false, true)) {
                return;
            }
            String outcome = switch (signal) {
                case CANCEL -> OUTCOME_CANCELLED;
                case ON_ERROR -> OUTCOME_ERROR;
                default -> OUTCOME_SUCCESS;
            };
            String endReason = failure instanceof SessionClosedException closed && closed.reason() != null
                    ? closed.reason().name()
                    : NONE;
            observation.lowCardinalityKeyValue(OUTCOME, outcome).lowCardinalityKeyValue(END_REASON, endReason);
            if (name.equals(EXEC) || name.equals(RUN)) {
                observation
                        .lowCardinalityKeyValue(EXIT_CODE, exitCode)
                        .lowCardinalityKeyValue(TERMINATION, termination);
            }
            if (failure != null && signal == SignalType.ON_ERROR) {
                observation.error(failure);
            }
            try (ContextSnapshot.Scope scope = SNAPSHOTS.setThreadLocalsFrom(context)) {
                if (failure != null && signal == SignalType.ON_ERROR) {
                    LOG.debug("{}{} ends: {}: {}", name, inSession(), outcome, failure.toString());
                } else if (!NONE.equals(exitCode)) {
                    LOG.debug("{}{} ends: {}, exit {} ({})", name, inSession(), outcome, exitCode, termination);
                } else if (created != null) {
                    LOG.debug("{} ends: {}, session {}", name, outcome, created);
                } else {
                    LOG.debug("{}{} ends: {}", name, inSession(), outcome);
                }
            }
            observation.stop();
        }
    }

    /** The counters of one provider, made once. */
    private static final class Counters {
        final Counter execStdout;
        final Counter execStderr;
        final Counter runStdout;
        final Counter runStderr;
        final Counter stdoutLines;
        final Counter stderrLines;
        final Counter read;
        final Counter write;
        final Counter upload;
        final Counter download;

        Counters(MeterRegistry meters, String provider) {
            execStdout = output(meters, provider, "exec", "stdout");
            execStderr = output(meters, provider, "exec", "stderr");
            runStdout = output(meters, provider, "run", "stdout");
            runStderr = output(meters, provider, "run", "stderr");
            stdoutLines = lines(meters, provider, "stdout");
            stderrLines = lines(meters, provider, "stderr");
            read = file(meters, provider, "read");
            write = file(meters, provider, "write");
            upload = file(meters, provider, "upload");
            download = file(meters, provider, "download");
        }

        void line(ExecEvent.StreamKind stream, long bytes) {
            (stream == ExecEvent.StreamKind.STDERR ? stderrLines : stdoutLines).increment();
            execBytes(stream, bytes);
        }

        void execBytes(ExecEvent.StreamKind stream, long bytes) {
            if (bytes > 0) {
                (stream == ExecEvent.StreamKind.STDERR ? execStderr : execStdout).increment(bytes);
            }
        }

        Counter file(String operation) {
            return switch (operation) {
                case "read" -> read;
                case "write" -> write;
                case "upload" -> upload;
                default -> download;
            };
        }

        private static Counter output(MeterRegistry meters, String provider, String operation, String stream) {
            return Counter.builder(OUTPUT_BYTES)
                    .description("bytes of command output")
                    .baseUnit("bytes")
                    .tag(PROVIDER, provider)
                    .tag(OPERATION, operation)
                    .tag(STREAM, stream)
                    .register(meters);
        }

        private static Counter lines(MeterRegistry meters, String provider, String stream) {
            return Counter.builder(OUTPUT_LINES)
                    .description("lines of command output delivered by exec")
                    .tag(PROVIDER, provider)
                    .tag(STREAM, stream)
                    .register(meters);
        }

        private static Counter file(MeterRegistry meters, String provider, String operation) {
            return Counter.builder(FILE_BYTES)
                    .description("bytes of file content transferred")
                    .baseUnit("bytes")
                    .tag(PROVIDER, provider)
                    .tag(OPERATION, operation)
                    .register(meters);
        }
    }
}
