package dev.sandbox.server.implementation;

import dev.sandbox.ExecOptions;
import dev.sandbox.ExecResult;
import dev.sandbox.InvalidArgumentException;
import dev.sandbox.implementation.exec.BatchedExec;
import dev.sandbox.implementation.wire.RequestBodies;
import dev.sandbox.implementation.wire.ResourceBodies;
import dev.sandbox.implementation.wire.StreamFrames;
import java.util.concurrent.Executor;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;
import reactor.netty.http.server.HttpServerRequest;
import reactor.netty.http.server.HttpServerResponse;
import reactor.netty.http.server.HttpServerRoutes;

/**
 * The commands' routes: {@code run} (one answer), {@code exec} (a stream of frames with a window the client acks,
 * resumable from an offset), the release of an exec and the upload of a command's stdin.
 */
final class ExecRoutes extends Routes {
    /**
     * The routes of commands.
     *
     * @param state what the routes share
     */
    ExecRoutes(State state) {
        super(state);
    }

    @Override
    void register(HttpServerRoutes routes) {
        routes.post("/v1/sessions/{id}/run", guard(false, this::run));
        routes.post("/v1/sessions/{id}/exec", guard(false, this::exec));
        routes.get("/v1/sessions/{id}/execs/{exec}/events", guard(false, this::execEvents));
        routes.post("/v1/sessions/{id}/execs/{exec}/ack", guard(false, this::execAck));
        routes.delete("/v1/sessions/{id}/execs/{exec}", guard(false, this::execRelease));
        routes.put("/v1/sessions/{id}/stdin/{stdin}", guard(false, this::stdinUpload));
    }

    private Mono<Void> run(HttpServerRequest req, HttpServerResponse res) {
        return execBody(req).flatMap(n -> {
            ExecOptions options = options(n);
            String stdinId = n.stdinId();
            return withSession(
                            req,
                            s -> Mono.defer(() -> {
                                Runnable slot = limit.acquire();
                                // a session that can answers on the connection's event loop, where it is written;
                                // not unwrapped: a decorator (such as the observed session) sees every run
                                Mono<ExecResult> result = s instanceof BatchedExec direct
                                        ? direct.run(options, loopScheduler(res))
                                        : s.run(options);
                                return result.doFinally(sig -> slot.run());
                            }))
                    .doFinally(sig -> {
                        if (stdinId != null) {
                            stdins.abandon(stdinId);
                        }
                    })
                    .flatMap(r -> Http.json(res, 200, ResourceBodies.ExecResultBody.of(r)));
        });
    }

    private Mono<Void> exec(HttpServerRequest req, HttpServerResponse res) {
        Http.Format format = Http.format(req);
        return execBody(req).flatMap(n -> {
            ExecOptions options = options(n);
            String stdinId = n.stdinId();
            String execId = n.id() != null ? n.id() : newExecId();
            return withSession(req, s -> Mono.fromCallable(() -> openExec(s, options, stdinId, execId)))
                    .flatMap(channel -> sendExec(req, res, channel, -1, -1, format));
        });
    }

    static Scheduler loopScheduler(HttpServerResponse res) {
        Executor[] loop = new Executor[1];
        res.withConnection(c -> loop[0] = c.channel().eventLoop());
        return loop[0] == null ? Schedulers.parallel() : Schedulers.fromExecutor(loop[0]);
    }

    static String newExecId() {
        java.util.concurrent.ThreadLocalRandom r = java.util.concurrent.ThreadLocalRandom.current();
        return String.format("%016x%016x", r.nextLong(), r.nextLong());
    }

    private Mono<Void> sendExec(
            HttpServerRequest req,
            HttpServerResponse res,
            ExecChannel channel,
            long afterStdout,
            long afterStderr,
            Http.Format format) {
        boolean lineFrames =
                StreamFrames.BATCH_LINES.equals(req.requestHeaders().get(StreamFrames.BATCH_HEADER));
        io.netty.channel.EventLoop[] loop = new io.netty.channel.EventLoop[1];
        res.withConnection(c -> loop[0] = c.channel().eventLoop());
        Executor sender = loop[0] != null ? loop[0] : r -> Schedulers.parallel().schedule(r);
        Publisher<Http.Frame> body = channel.attach(afterStdout, afterStderr, format, lineFrames, sender);
        Http.streamHeaders(res, format)
                .header(StreamFrames.ACK_WINDOW_HEADER, Integer.toString(channel.windowLimit()))
                .header("Sandbox-Exec-Id", channel.id());
        // the frames are the window's own arrays, or one copy of a batch per frame: a deep prefetch costs at most
        // another window
        return res.send(Http.packed(res, format, Flux.from(body), config.heartbeat(), 1024))
                .then();
    }

    private Mono<Void> execEvents(HttpServerRequest req, HttpServerResponse res) {
        long afterStdout = Http.longQuery(req, "afterStdout", -1);
        long afterStderr = Http.longQuery(req, "afterStderr", -1);
        String lastEventId = req.requestHeaders().get("Last-Event-ID");
        if (lastEventId != null && Http.query(req, "afterStdout") == null) {
            String[] parts = lastEventId.split(":");
            try {
                afterStdout = Long.parseLong(parts[0].trim());
                afterStderr = parts.length > 1 ? Long.parseLong(parts[1].trim()) : -1;
            } catch (NumberFormatException e) {
                throw new InvalidArgumentException(
                        "Last-Event-ID", "Last-Event-ID must be '<stdout>:<stderr>', got '" + lastEventId + "'");
            }
        }
        long stdoutFrom = afterStdout;
        long stderrFrom = afterStderr;
        return inOwnSession(req, () -> {
            ExecChannel channel = execs.get(param(req, "exec"), param(req, "id"));
            return sendExec(req, res, channel, stdoutFrom, stderrFrom, Http.format(req));
        });
    }

    private Mono<Void> execAck(HttpServerRequest req, HttpServerResponse res) {
        return body(req).flatMap(n -> {
            RequestBodies.AckBody ack = RequestBodies.read(n, RequestBodies.AckBody.class);
            return inOwnSession(req, () -> {
                ExecChannel channel = execs.get(param(req, "exec"), param(req, "id"));
                channel.ack(ack.stdoutOffset(), ack.stderrOffset());
                return Http.noContent(res);
            });
        });
    }

    private Mono<Void> execRelease(HttpServerRequest req, HttpServerResponse res) {
        return inOwnSession(req, () -> {
            try {
                execs.get(param(req, "exec"), param(req, "id")).release();
            } catch (HttpError e) {
                // releasing an exec that is gone already is fine
            }
            return Http.noContent(res);
        });
    }

    private Mono<Void> stdinUpload(HttpServerRequest req, HttpServerResponse res) {
        return inOwnSession(req, () -> stdins.upload(param(req, "stdin"), Http.rawBody(req)))
                .then(Http.noContent(res));
    }
}
