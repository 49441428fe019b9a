package dev.sandbox.server.implementation;

import dev.sandbox.FileEvent;
import dev.sandbox.FileInfo;
import dev.sandbox.FileOperationException;
import dev.sandbox.SandboxFiles;
import dev.sandbox.implementation.wire.StreamFrames;
import reactor.core.publisher.Mono;
import reactor.netty.http.server.HttpServerRequest;
import reactor.netty.http.server.HttpServerResponse;
import reactor.netty.http.server.HttpServerRoutes;

/** The route that watches a directory: a stream of file events that starts with {@code ready} once the watch is live. */
final class WatchRoutes extends Routes {
    /**
     * The route of watches.
     *
     * @param state what the routes share
     */
    WatchRoutes(State state) {
        super(state);
    }

    @Override
    void register(HttpServerRoutes routes) {
        routes.get("/v1/sessions/{id}/files/watch", guard(true, this::fileWatch));
    }

    /**
     * Checks a path to watch before the stream starts, so that a refusal gets its status: a missing path is 404, a
     * path out of the root 403, a file 409. A symbolic link is followed by listing it.
     */
    private static Mono<FileInfo> watchable(SandboxFiles files, String path) {
        return files.stat(path).flatMap(info -> switch (info.type()) {
            case DIRECTORY -> Mono.just(info);
            case SYMLINK -> files.list(path).then(Mono.just(info));
            default ->
                Mono.error(new FileOperationException(
                        path, FileOperationException.Reason.NOT_A_DIRECTORY, path + ": not a directory", null));
        });
    }

    private Mono<Void> fileWatch(HttpServerRequest req, HttpServerResponse res) {
        String path = requiredQuery(req, "path");
        boolean recursive = Http.boolQuery(req, "recursive", false);
        Http.Format format = Http.format(req);
        return withSession(
                        req,
                        // "ready" goes out when the provider's watch says it is live (its READY), not when the
                        // stream opens: a client that acts on it never loses a change
                        s -> watchable(s.files(), path)
                                .map(info -> s.files()
                                        .watch(path, recursive)
                                        .map(e -> e.kind() == FileEvent.Kind.READY
                                                ? new Http.Frame("ready", StreamFrames.ready(e.path()), null)
                                                : new Http.Frame("file", StreamFrames.fileEvent(e), null))))
                .flatMap(events -> Http.stream(res, format, events, config.heartbeat()));
    }
}
