package dev.sandbox.implementation.remote;

import dev.sandbox.SessionStats;
import dev.sandbox.implementation.stats.StatsStream;
import dev.sandbox.implementation.wire.StatsFrames;
import dev.sandbox.implementation.wire.StreamFrames;
import io.netty.handler.codec.http.HttpMethod;
import java.time.Duration;
import reactor.core.publisher.Flux;
import reactor.core.scheduler.Schedulers;

/**
 * A remote session's resource stats: the server's stream of {@code stats} frames ({@code GET
 * /v1/sessions/{id}/stats?intervalMs=N}), each read as a reading and checked by the client's own {@link
 * StatsStream.Checker} (a server is not trusted more than a sandbox). A dropped stream is reopened as a watch is; its
 * first sample comes again at once, and cumulative figures stay monotonic across the reopening.
 */
final class RemoteStats {
    /** Samples handed on ahead of the subscriber: few, since the server samples only while it is asked. */
    private static final int DELIVERY_PREFETCH = 2;

    private RemoteStats() {}

    /**
     * The samples.
     *
     * @param t the transport
     * @param sessionPath {@code /v1/sessions/{id}}
     * @param interval the interval, already checked
     * @return the samples
     */
    static Flux<SessionStats> stats(RemoteTransport t, String sessionPath, Duration interval) {
        String path = sessionPath + "/stats?intervalMs=" + interval.toMillis();
        return Flux.defer(() -> {
                    StatsStream.Checker checker = new StatsStream.Checker();
                    return Flux.defer(() -> t.stream(HttpMethod.GET, path, null, res -> {})
                                    .<SessionStats>handle((sized, sink) -> {
                                        switch (sized.item()) {
                                            case StreamFrames.StatsItem(var sample) ->
                                                sink.next(checker.check(StatsFrames.reading(sample)));
                                            case StreamFrames.ErrorItem(RuntimeException error) -> sink.error(error);
                                            default -> {}
                                        }
                                    })
                                    .concatWith(
                                            Flux.error(new RemoteTransport.StreamDropped("the stats stream ended"))))
                            .retryWhen(t.reconnects())
                            .onErrorMap(t::transportError);
                })
                .publishOn(Schedulers.parallel(), DELIVERY_PREFETCH);
    }
}
