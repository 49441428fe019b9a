package dev.sandbox.implementation.remote;

import dev.sandbox.BackgroundProcess;
import dev.sandbox.ExecEvent;
import dev.sandbox.ExecResult;
import dev.sandbox.InvalidArgumentException;
import dev.sandbox.ProcessInfo;
import dev.sandbox.implementation.wire.RequestBodies;
import dev.sandbox.implementation.wire.ResourceBodies;
import io.netty.handler.codec.http.HttpMethod;
import java.nio.ByteBuffer;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/** A handle to a background process of a session on a sandbox server. */
final class RemoteBackgroundProcess implements BackgroundProcess {
    /** How long one wait for the exit lasts on the server before the client asks again. */
    private static final long EXIT_WAIT_MS = 20_000;

    private final RemoteTransport t;
    private final RemoteSession session;
    private final String path;
    private final ProcessInfo info;
    private final InOrder stdin = new InOrder();
    private volatile ExecEvent.Exit exit;

    RemoteBackgroundProcess(RemoteTransport t, RemoteSession session, String sessionPath, ProcessInfo info) {
        this.t = t;
        this.session = session;
        this.path = sessionPath + "/processes/" + RemoteTransport.enc(info.id());
        this.info = info;
    }

    @Override
    public String id() {
        return info.id();
    }

    @Override
    public OptionalLong pid() {
        return info.pid() < 0 ? OptionalLong.empty() : OptionalLong.of(info.pid());
    }

    @Override
    public List<String> argv() {
        return info.argv();
    }

    @Override
    public Instant startedAt() {
        return info.startedAt();
    }

    @Override
    public Mono<ExecEvent.Exit> exit() {
        return Mono.defer(() -> {
            session.checkOpen();
            ExecEvent.Exit known = exit;
            if (known != null) {
                return Mono.just(known);
            }
            return t.longCall(HttpMethod.GET, path + "/exit?waitMs=" + EXIT_WAIT_MS, null)
                    .map(n -> ResourceBodies.read(n, ResourceBodies.ExitBody.class)
                            .exit())
                    .repeatWhenEmpty(Integer.MAX_VALUE, ticks -> ticks)
                    .doOnNext(this::ended);
        });
    }

    private void ended(ExecEvent.Exit e) {
        exit = e;
    }

    /** The exit this handle has learnt of (from {@link #exit()} or an output stream); never asks the server. */
    @Override
    public Optional<ExecEvent.Exit> exitNow() {
        return Optional.ofNullable(exit);
    }

    @Override
    public Flux<ExecEvent> output(long stdoutOffset, long stderrOffset) {
        return lines(stdoutOffset, stderrOffset, true);
    }

    @Override
    public Flux<ExecEvent> snapshot(long stdoutOffset, long stderrOffset) {
        return lines(stdoutOffset, stderrOffset, false);
    }

    private Flux<ExecEvent> lines(long stdoutOffset, long stderrOffset, boolean follow) {
        return Flux.defer(() -> {
            session.checkOpen();
            offset("stdoutOffset", stdoutOffset);
            offset("stderrOffset", stderrOffset);
            return RemoteStreams.output(t, path, stdoutOffset, stderrOffset, follow, this::ended);
        });
    }

    private static void offset(String field, long offset) {
        if (offset < 0) {
            throw new InvalidArgumentException(field, field + " must not be negative, got " + offset);
        }
    }

    @Override
    public Mono<ExecResult> collect() {
        return Mono.defer(() -> {
            session.checkOpen();
            return t.longCall(HttpMethod.POST, path + "/collect", null)
                    .map(ResourceBodies::execResult)
                    .switchIfEmpty(Mono.error(() -> RemoteErrors.protocol("the server sent no result for collect")));
        });
    }

    @Override
    public Mono<Void> signal(int signal) {
        return signal(t, session, path, signal);
    }

    /**
     * Sends a signal to a process or PTY of a remote session through its {@code /signal} route.
     *
     * @param t the transport
     * @param session the session, checked first
     * @param path the process's or PTY's route
     * @param signal a signal number from 1 to 64
     * @return completes when the server sent it
     */
    static Mono<Void> signal(RemoteTransport t, RemoteSession session, String path, int signal) {
        return Mono.defer(() -> {
            session.checkOpen();
            if (signal < 1 || signal > 64) {
                throw new InvalidArgumentException("signal", "signal must be from 1 to 64, got " + signal);
            }
            RequestBodies.SignalBody body = new RequestBodies.SignalBody((long) signal);
            return t.call(HttpMethod.POST, path + "/signal", body).then();
        });
    }

    @Override
    public Mono<Void> kill() {
        return signal(9);
    }

    @Override
    public Mono<Void> writeStdin(ByteBuffer bytes) {
        return Mono.defer(() -> {
            session.checkOpen();
            byte[] copy = new byte[bytes.remaining()];
            bytes.duplicate().get(copy);
            return stdin.run(
                    "stdin writes",
                    () -> t.upload(HttpMethod.POST, path + "/stdin", Mono.just(ByteBuffer.wrap(copy)), true)
                            .then());
        });
    }

    @Override
    public Mono<Void> closeStdin() {
        return Mono.defer(() -> {
            session.checkOpen();
            // after the writes before it, as a local standard input closes after its queued writes
            return stdin.run(
                    "stdin writes",
                    () -> t.call(HttpMethod.POST, path + "/stdin/close", null).then());
        });
    }

    @Override
    public String toString() {
        return "RemoteBackgroundProcess{" + info.id() + " " + info.argv() + "}";
    }
}
