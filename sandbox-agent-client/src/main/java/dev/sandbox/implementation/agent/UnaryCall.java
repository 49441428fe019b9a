package dev.sandbox.implementation.agent;

import java.util.function.IntFunction;
import reactor.core.publisher.Mono;
import reactor.core.publisher.MonoSink;

/** A one-answer request ({@code STAT}, {@code MKDIR}, {@code TIMERS}, {@code INPUT}, a background spawn, ...). */
final class UnaryCall {
    private UnaryCall() {}

    /**
     * Sends a request on a stream of its own and waits for its answer, at most {@link
     * AgentConnection.Options#replyTimeout()}.
     *
     * @param conn the connection
     * @param what the request, for messages
     * @param started whether a {@code STARTED} comes before the {@code OK} (a background spawn): then it is the answer
     * @param request makes the request from the stream id
     * @return the {@code OK} (or the {@code STARTED}); an {@link AgentErrnoException} for an {@code ERROR}
     */
    static Mono<AgentFrame> send(AgentConnection conn, String what, boolean started, IntFunction<ClientFrame> request) {
        Mono<AgentFrame> m = Mono.create((MonoSink<AgentFrame> sink) -> {
            AgentStream st = new AgentStream(new AgentStream.Handler() {
                private AgentFrame.Started start;

                @Override
                public void onFrame(AgentFrame f, int length) {
                    switch (f) {
                        case AgentFrame.Ok ok -> sink.success(start != null ? start : ok);
                        case AgentFrame.Started s when started && start == null -> start = s;
                        case AgentFrame.Error e -> sink.error(new AgentErrnoException(what, e.code(), e.message()));
                        default -> throw AgentStream.unexpected(f, what);
                    }
                }

                @Override
                public void fail(Throwable t) {
                    sink.error(t);
                }
            });
            sink.onCancel(() -> conn.cancel(st));
            Throwable e = conn.open(st, request, 0, 0);
            if (e != null) {
                sink.error(e);
            }
        });
        return m.timeout(conn.options().replyTimeout(), Mono.error(() -> conn.noAnswer(what)));
    }
}
