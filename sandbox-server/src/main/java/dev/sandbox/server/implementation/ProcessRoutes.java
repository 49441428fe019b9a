package dev.sandbox.server.implementation;

import dev.sandbox.BackgroundOptions;
import dev.sandbox.BackgroundProcess;
import dev.sandbox.ExecEvent;
import dev.sandbox.ExecOptions;
import dev.sandbox.ProcessInfo;
import dev.sandbox.SandboxSession;
import dev.sandbox.implementation.wire.RequestBodies;
import dev.sandbox.implementation.wire.ResourceBodies;
import dev.sandbox.implementation.wire.StreamFrames;
import java.time.Duration;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.netty.http.server.HttpServerRequest;
import reactor.netty.http.server.HttpServerResponse;
import reactor.netty.http.server.HttpServerRoutes;

/** The background processes' routes: start, list, get, exit, output, signal, kill, stdin and collect. */
final class ProcessRoutes extends Routes {
    /**
     * The routes of background processes.
     *
     * @param state what the routes share
     */
    ProcessRoutes(State state) {
        super(state);
    }

    @Override
    void register(HttpServerRoutes routes) {
        routes.post("/v1/sessions/{id}/processes", guard(false, this::startProcess));
        routes.get("/v1/sessions/{id}/processes", guard(false, this::listProcesses));
        routes.get("/v1/sessions/{id}/processes/{pid}", guard(false, this::getProcess));
        routes.get("/v1/sessions/{id}/processes/{pid}/exit", guard(false, this::processExit));
        routes.get("/v1/sessions/{id}/processes/{pid}/output", guard(false, this::processOutput));
        routes.post("/v1/sessions/{id}/processes/{pid}/signal", guard(false, this::processSignal));
        routes.post("/v1/sessions/{id}/processes/{pid}/kill", guard(false, this::processKill));
        routes.post("/v1/sessions/{id}/processes/{pid}/stdin", guard(false, this::processStdin));
        routes.post("/v1/sessions/{id}/processes/{pid}/stdin/close", guard(false, this::processStdinClose));
        routes.post("/v1/sessions/{id}/processes/{pid}/collect", guard(false, this::processCollect));
    }

    private Mono<BackgroundProcess> process(HttpServerRequest req, SandboxSession s) {
        return s.process(param(req, "pid"));
    }

    private static ResourceBodies.ProcessInfoBody processJson(BackgroundProcess p) {
        ExecEvent.Exit exit = p.exitNow().orElse(null);
        return ResourceBodies.ProcessInfoBody.of(new ProcessInfo(
                p.id(), p.argv(), p.pid().orElse(-1), p.startedAt(), exit == null, exit == null ? null : exit.code()));
    }

    private Mono<Void> startProcess(HttpServerRequest req, HttpServerResponse res) {
        return execBody(req).flatMap(n -> {
            ExecOptions options = options(n);
            BackgroundOptions background = n.background();
            return withSession(
                            req,
                            s -> Mono.defer(() -> {
                                Runnable slot = limit.acquire();
                                return s.start(options, background)
                                        .doOnNext(p -> p.exit().subscribe(x -> slot.run(), e -> slot.run()))
                                        .doOnError(e -> slot.run())
                                        .doOnCancel(slot);
                            }))
                    .flatMap(p -> Http.json(res, 201, processJson(p)));
        });
    }

    private Mono<Void> listProcesses(HttpServerRequest req, HttpServerResponse res) {
        return withSession(req, s -> s.processes().collectList()).flatMap(list -> {
            return Http.json(res, 200, ResourceBodies.ProcessList.of(list));
        });
    }

    private Mono<Void> getProcess(HttpServerRequest req, HttpServerResponse res) {
        return withSession(req, s -> process(req, s)).flatMap(p -> Http.json(res, 200, processJson(p)));
    }

    private Mono<Void> processExit(HttpServerRequest req, HttpServerResponse res) {
        long wait = Math.max(0, Math.min(MAX_EXIT_WAIT_MS, Http.longQuery(req, "waitMs", 0)));
        return withSession(req, s -> process(req, s))
                .flatMap(p -> wait == 0
                        ? Mono.justOrEmpty(p.exitNow())
                        : p.exit().timeout(Duration.ofMillis(wait), Mono.empty()))
                .flatMap(x -> Http.json(res, 200, ResourceBodies.ExitBody.of(x)))
                .switchIfEmpty(Mono.defer(() -> Http.noContent(res)));
    }

    private Mono<Void> processOutput(HttpServerRequest req, HttpServerResponse res) {
        long afterStdout = Http.longQuery(req, "afterStdout", -1);
        long afterStderr = Http.longQuery(req, "afterStderr", -1);
        long stdout = afterStdout >= 0 ? afterStdout : Http.longQuery(req, "stdout", 0);
        long stderr = afterStderr >= 0 ? afterStderr : Http.longQuery(req, "stderr", 0);
        boolean follow = Http.boolQuery(req, "follow", true);
        Http.Format format = Http.format(req);
        return withSession(req, s -> process(req, s)).flatMap(p -> {
            long[] last = {afterStdout, afterStderr};
            Flux<ExecEvent> events = follow ? p.output(stdout, stderr) : p.snapshot(stdout, stderr);
            Flux<Http.Frame> frames = events.<Http.Frame>handle((e, sink) -> {
                        if (e instanceof ExecEvent.Line l) {
                            int stream = l.stream() == ExecEvent.StreamKind.STDOUT ? 0 : 1;
                            if (l.offset() <= last[stream]) {
                                return; // the line resumed at, delivered before
                            }
                            last[stream] = l.offset();
                            sink.next(new Http.Frame(
                                    stream == 0 ? "stdout" : "stderr", StreamFrames.event(e), last[0] + ":" + last[1]));
                        } else if (e instanceof ExecEvent.Chunk c) {
                            int stream = c.stream() == ExecEvent.StreamKind.STDOUT ? 0 : 1;
                            if (c.offset() <= last[stream]) {
                                return; // the chunk resumed at, delivered before
                            }
                            last[stream] = c.offset();
                            sink.next(new Http.Frame("chunk", StreamFrames.event(e), last[0] + ":" + last[1]));
                        } else {
                            sink.next(new Http.Frame("exit", StreamFrames.event(e), null));
                        }
                    })
                    .concatWith(follow ? Flux.empty() : Flux.just(new Http.Frame("end", StreamFrames.END_EVENT, null)));
            return Http.stream(res, format, frames, config.heartbeat());
        });
    }

    private Mono<Void> processSignal(HttpServerRequest req, HttpServerResponse res) {
        return body(req)
                .flatMap(n -> {
                    int signal = RequestBodies.read(n, RequestBodies.SignalBody.class)
                            .number();
                    return withSession(req, s -> process(req, s).flatMap(p -> p.signal(signal)));
                })
                .then(Http.noContent(res));
    }

    private Mono<Void> processKill(HttpServerRequest req, HttpServerResponse res) {
        return withSession(req, s -> process(req, s).flatMap(BackgroundProcess::kill))
                .then(Http.noContent(res));
    }

    private Mono<Void> processStdin(HttpServerRequest req, HttpServerResponse res) {
        return withSession(req, s -> process(req, s))
                .flatMap(p -> Http.rawBody(req).concatMap(p::writeStdin, 1).then())
                .then(Http.noContent(res));
    }

    private Mono<Void> processStdinClose(HttpServerRequest req, HttpServerResponse res) {
        return withSession(req, s -> process(req, s).flatMap(BackgroundProcess::closeStdin))
                .then(Http.noContent(res));
    }

    private Mono<Void> processCollect(HttpServerRequest req, HttpServerResponse res) {
        return withSession(req, s -> process(req, s).flatMap(BackgroundProcess::collect))
                .flatMap(r -> Http.json(res, 200, ResourceBodies.ExecResultBody.of(r)));
    }
}
