package dev.sandbox.implementation.remote;

import dev.sandbox.ExecEvent;
import dev.sandbox.ExecOptions;
import dev.sandbox.FileEvent;
import dev.sandbox.implementation.wire.LineSplitter;
import dev.sandbox.implementation.wire.RequestBodies;
import dev.sandbox.implementation.wire.StreamFrames;
import dev.sandbox.implementation.wire.WireJson;
import io.netty.handler.codec.http.HttpMethod;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.Collections;
import java.util.Iterator;
import java.util.List;
import java.util.NoSuchElementException;
import java.util.Spliterator;
import java.util.Spliterators;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import java.util.function.LongConsumer;
import org.reactivestreams.Publisher;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * The resumable streams of the remote provider.
 *
 * <p><b>Exec streams.</b> The client names each exec with a fresh id. The server keeps every event it has sent in a
 * bounded window until the client acknowledges it ({@code POST .../execs/{id}/ack} with the offsets of the last line
 * delivered on each stream, sent each time a quarter of the window has been delivered). When the connection drops,
 * the client reconnects ({@code GET .../execs/{id}/events?afterStdout=&afterStderr=}) and the server replays the
 * window from the first event after those offsets: nothing is lost or repeated. Since the window only empties on
 * acknowledgements, a subscriber that stops reading stops the process too. When the stream ends or is cancelled the
 * client releases the exec ({@code DELETE}), which kills the process if it still runs.
 *
 * <p><b>Background output.</b> The process's ring already serves any offset, so a dropped stream is reopened from the
 * offset of the last line delivered on each stream, skipping that line.
 */
public final class RemoteStreams {
    private static final Logger LOG = LoggerFactory.getLogger(RemoteStreams.class);
    /** Events queued ahead of the subscriber, per stream. */
    private static final int DELIVERY_PREFETCH = 64;
    /** The pause before an acknowledgement that failed is sent again. */
    private static final Duration ACK_RETRY = Duration.ofMillis(100);

    private RemoteStreams() {}

    /** What the client has delivered of an exec stream; the delivery fields are used by one thread at a time. */
    private static final class ExecState {
        final String id;
        volatile boolean started;
        long lastStdout = -1;
        long lastStderr = -1;
        volatile boolean ended;
        /** The stream's last item (the exit or an error) has been read; it may not be delivered yet. */
        volatile boolean received;

        long window = 1024 * 1024;
        long sinceAck;
        /** Offsets waiting to be acknowledged; the newest replace older ones. */
        final AtomicReference<long[]> pendingAck = new AtomicReference<>();

        final AtomicBoolean acking = new AtomicBoolean();
        /** The exec's stream on the command channel, while it is the one delivering. */
        volatile RemoteChannel.ExecStream onChannel;

        ExecState(String id) {
            this.id = id;
        }
    }

    /**
     * Streams a command run on the server, resuming after a dropped connection.
     *
     * <p>With the command channel ({@link RemoteChannel}) on, the exec opens as a stream of the channel and is
     * acknowledged and released there; if the channel breaks once the server has opened the exec, the exec is
     * resumed from its offsets on the next channel (over REST when the server refuses the channel), as a dropped
     * REST stream is.
     *
     * @param t the transport
     * @param sessionId the session's id
     * @param sessionPath {@code /v1/sessions/{id}}
     * @param options validated options
     * @return the events
     */
    public static Flux<ExecEvent> exec(RemoteTransport t, String sessionId, String sessionPath, ExecOptions options) {
        return Flux.defer(() -> {
            ExecState st = new ExecState(RemoteTransport.newId());
            String stdinId = options.stdin().isPresent() ? RemoteTransport.newId() : null;
            RequestBodies.ExecBody body =
                    RequestBodies.ExecBody.of(options, stdinId).withId(st.id);
            String execPath = sessionPath + "/execs/" + st.id;
            Flux<LineSplitter.Sized> events = Flux.defer(() -> {
                        st.onChannel = null;
                        Flux<LineSplitter.Sized> rest = st.started
                                ? t.stream(
                                        HttpMethod.GET,
                                        execPath + "/events?afterStdout=" + st.lastStdout + "&afterStderr="
                                                + st.lastStderr,
                                        null,
                                        res -> window(st, res.responseHeaders().get(StreamFrames.ACK_WINDOW_HEADER)),
                                        true)
                                : t.stream(
                                        HttpMethod.POST,
                                        sessionPath + "/exec",
                                        body,
                                        res -> {
                                            st.started = true;
                                            window(st, res.responseHeaders().get(StreamFrames.ACK_WINDOW_HEADER));
                                        },
                                        true);
                        RemoteChannel channel = t.channel();
                        Flux<LineSplitter.Sized> lines;
                        if (channel == null) {
                            lines = rest;
                        } else {
                            boolean resume = st.started;
                            long afterStdout = st.lastStdout;
                            long afterStderr = st.lastStderr;
                            byte[] json = resume ? null : WireJson.bytes(body);
                            // a server that refuses the channel never saw the command: send it over REST; one
                            // whose queue for a slot was full did nothing either: send it again later
                            lines = Flux.defer(() -> {
                                        LongConsumer opened = w -> {
                                            st.window = w;
                                            st.started = true;
                                        };
                                        RemoteChannel.ExecStream onChannel = resume
                                                ? channel.resume(sessionId, st.id, afterStdout, afterStderr, opened)
                                                : channel.exec(sessionId, json, opened);
                                        st.onChannel = onChannel;
                                        return onChannel.items();
                                    })
                                    .retryWhen(t.busyRetry())
                                    .onErrorResume(RemoteChannel.Refused.class, e -> {
                                        st.onChannel = null;
                                        return rest;
                                    });
                        }
                        // items arrive on a parallel worker (see RemoteTransport.stream)
                        return lines.doOnNext(sized -> {
                                    if (sized.item() instanceof StreamFrames.ErrorItem
                                            || (sized.item() instanceof StreamFrames.EventItem(ExecEvent e)
                                                    && e instanceof ExecEvent.Exit)) {
                                        st.received = true;
                                    }
                                })
                                .concatWith(Flux.defer(() -> st.received
                                        ? Flux.empty()
                                        : Flux.error(new RemoteTransport.StreamDropped(
                                                "the exec stream ended before the exit"))));
                    })
                    .retryWhen(t.reconnects())
                    .onErrorMap(t::transportError)
                    // an error that never reached the body (a refused connection, an error answer) comes on an
                    // event loop: signal it on a worker, like everything else
                    .onErrorResume(e -> Mono.<LineSplitter.Sized>error(e).publishOn(Schedulers.parallel()));
            Disposable[] upload = new Disposable[1];
            return events.doOnSubscribe(s -> {
                        if (stdinId != null) {
                            upload[0] = uploadStdin(
                                    t, sessionPath, stdinId, options.stdin().get());
                        }
                    })
                    .doFinally(signal -> {
                        st.ended = true;
                        if (upload[0] != null) {
                            upload[0].dispose();
                        }
                        // releases the server's window; kills the process if it still runs (a cancel)
                        RemoteChannel.ExecStream onChannel = st.onChannel;
                        if (onChannel == null || !onChannel.cancel()) {
                            t.fireAndForget(HttpMethod.DELETE, execPath);
                        }
                    })
                    // last, so that the operators above see one item per frame: a lines frame becomes its line
                    // events one at a time, as they are asked for, and what is handed out here is what was delivered
                    .concatMapIterable(sized -> new Delivery(t, execPath, st, sized), 1);
        });
    }

    private static void window(ExecState st, String header) {
        if (header != null) {
            try {
                st.window = Math.max(1, Long.parseLong(header));
            } catch (NumberFormatException e) {
                // keep the default
            }
        }
    }

    /**
     * The events one stream item yields, produced as they are asked for: a line event, the lines of a {@code lines}
     * frame, the exit, or nothing. Lines the client has delivered already (a server that replays more than asked)
     * are skipped; what is handed out counts as delivered, for the acknowledgements and a resume.
     */
    private static final class Delivery implements Iterable<ExecEvent>, Iterator<ExecEvent> {
        private final RemoteTransport t;
        private final String execPath;
        private final ExecState st;
        private final int wireBytes;
        private final Iterator<? extends ExecEvent> events;
        private ExecEvent pending;
        private boolean counted;

        Delivery(RemoteTransport t, String execPath, ExecState st, LineSplitter.Sized sized) {
            this.t = t;
            this.execPath = execPath;
            this.st = st;
            this.wireBytes = sized.wireBytes();
            switch (sized.item()) {
                case StreamFrames.EventItem(ExecEvent e) -> events = List.of(e).iterator();
                case StreamFrames.LinesItem lines -> events = lines.iterator();
                case StreamFrames.ErrorItem(RuntimeException error) -> {
                    st.ended = true;
                    throw error;
                }
                default -> events = Collections.emptyIterator(); // heartbeats and anything newer
            }
        }

        @Override
        public Iterator<ExecEvent> iterator() {
            return this;
        }

        /** Reactor iterates through a spliterator: one that calls this iterator directly saves a layer per event. */
        @Override
        public Spliterator<ExecEvent> spliterator() {
            return new Spliterators.AbstractSpliterator<>(Long.MAX_VALUE, Spliterator.ORDERED | Spliterator.NONNULL) {
                @Override
                public boolean tryAdvance(Consumer<? super ExecEvent> action) {
                    if (!hasNext()) {
                        return false;
                    }
                    action.accept(next());
                    return true;
                }
            };
        }

        @Override
        public boolean hasNext() {
            while (pending == null && events.hasNext()) {
                ExecEvent e = events.next();
                if (e instanceof ExecEvent.Stdout l) {
                    if (l.offset() > st.lastStdout) {
                        pending = e;
                    }
                } else if (e instanceof ExecEvent.Stderr l) {
                    if (l.offset() > st.lastStderr) {
                        pending = e;
                    }
                } else if (e instanceof ExecEvent.Chunk c) {
                    if (c.offset() > (c.stream() == ExecEvent.StreamKind.STDOUT ? st.lastStdout : st.lastStderr)) {
                        pending = e;
                    }
                } else {
                    pending = e;
                }
            }
            return pending != null;
        }

        @Override
        public ExecEvent next() {
            if (!hasNext()) {
                throw new NoSuchElementException();
            }
            ExecEvent e = pending;
            pending = null;
            if (e instanceof ExecEvent.Stdout l) {
                st.lastStdout = l.offset();
            } else if (e instanceof ExecEvent.Stderr l) {
                st.lastStderr = l.offset();
            } else if (e instanceof ExecEvent.Chunk c) {
                if (c.stream() == ExecEvent.StreamKind.STDOUT) {
                    st.lastStdout = c.offset();
                } else {
                    st.lastStderr = c.offset();
                }
            } else {
                st.ended = true;
            }
            if (!counted) {
                counted = true;
                st.sinceAck += wireBytes;
            }
            if (!st.ended && st.sinceAck >= st.window / 4) {
                st.sinceAck = 0;
                ack(t, execPath, st);
            }
            return e;
        }
    }

    /**
     * Sends the delivered offsets; one acknowledgement in flight at a time, the latest offsets win. A sender that
     * finishes looks for offsets offered meanwhile after clearing its flag, so none is left unsent (a lost
     * acknowledgement would stall a stream whose window is full).
     */
    private static void ack(RemoteTransport t, String execPath, ExecState st) {
        RemoteChannel.ExecStream onChannel = st.onChannel;
        if (onChannel != null && onChannel.ack(st.lastStdout, st.lastStderr)) {
            return;
        }
        st.pendingAck.set(new long[] {st.lastStdout, st.lastStderr});
        sendAcks(t, execPath, st);
    }

    private static void sendAcks(RemoteTransport t, String execPath, ExecState st) {
        if (!st.acking.compareAndSet(false, true)) {
            return;
        }
        long[] offsets = st.pendingAck.getAndSet(null);
        if (offsets == null || st.ended) {
            st.acking.set(false);
            if (st.pendingAck.get() != null && !st.ended) {
                sendAcks(t, execPath, st);
            }
            return;
        }
        RequestBodies.AckBody body = new RequestBodies.AckBody(offsets[0], offsets[1]);
        // answered on the event loop (no hop): the next acknowledgement goes out as soon as this one is done
        t.quickCall(HttpMethod.POST, execPath + "/ack", body)
                .onErrorResume(e -> {
                    // offer the offsets again (unless newer ones came) and try later: while the stream lives, an
                    // acknowledgement must get through or a full window would stall it
                    LOG.debug("acknowledging exec {} failed: {}", st.id, e.toString());
                    st.pendingAck.compareAndSet(null, offsets);
                    return Mono.delay(ACK_RETRY).then(Mono.empty());
                })
                .doFinally(s -> {
                    st.acking.set(false);
                    if (st.pendingAck.get() != null && !st.ended) {
                        sendAcks(t, execPath, st);
                    }
                })
                .subscribe();
    }

    /**
     * Starts streaming a stdin publisher to the server, where the command named {@code stdinId} reads it.
     *
     * @param t the transport
     * @param sessionPath the session's path
     * @param stdinId the upload's id
     * @param stdin the bytes
     * @return the running upload
     */
    public static Disposable uploadStdin(
            RemoteTransport t, String sessionPath, String stdinId, Publisher<ByteBuffer> stdin) {
        return t.upload(HttpMethod.PUT, sessionPath + "/stdin/" + stdinId, stdin, true)
                .subscribe(ok -> {}, e -> LOG.debug("stdin upload {} ended with {}", stdinId, e.toString()));
    }

    /**
     * Streams a background process's output from offsets, reopening a dropped stream from the last line delivered.
     *
     * @param t the transport
     * @param processPath {@code /v1/sessions/{id}/processes/{pid}}
     * @param stdoutOffset where stdout starts
     * @param stderrOffset where stderr starts
     * @param follow whether to follow the live output to the exit
     * @param onExit called with the exit when it is delivered
     * @return the events
     */
    public static Flux<ExecEvent> output(
            RemoteTransport t,
            String processPath,
            long stdoutOffset,
            long stderrOffset,
            boolean follow,
            java.util.function.Consumer<ExecEvent.Exit> onExit) {
        return Flux.defer(() -> {
                    // where each stream resumes: just past the last event delivered (a partial line or a chunk
                    // ends mid-line, and the server frames again from there)
                    long[] next = {-1, -1};
                    boolean[] ended = {false};
                    return Flux.defer(() -> {
                                long out = next[0] >= 0 ? next[0] : stdoutOffset;
                                long err = next[1] >= 0 ? next[1] : stderrOffset;
                                String path =
                                        processPath + "/output?stdout=" + out + "&stderr=" + err + "&follow=" + follow;
                                return t.stream(HttpMethod.GET, path, null, res -> {})
                                        .<ExecEvent>handle((sized, sink) -> {
                                            switch (sized.item()) {
                                                case StreamFrames.EventItem(ExecEvent e) -> {
                                                    if (e instanceof ExecEvent.Line l) {
                                                        int s = l.stream() == ExecEvent.StreamKind.STDOUT ? 0 : 1;
                                                        if (l.offset() < next[s]) {
                                                            return; // delivered before
                                                        }
                                                        next[s] = l.nextOffset();
                                                    } else if (e instanceof ExecEvent.Chunk c) {
                                                        int s = c.stream() == ExecEvent.StreamKind.STDOUT ? 0 : 1;
                                                        if (c.offset() < next[s]) {
                                                            return; // delivered before
                                                        }
                                                        next[s] = c.nextOffset();
                                                    } else {
                                                        ended[0] = true;
                                                        onExit.accept((ExecEvent.Exit) e);
                                                    }
                                                    sink.next(e);
                                                }
                                                case StreamFrames.ErrorItem(RuntimeException error) -> {
                                                    ended[0] = true;
                                                    sink.error(error);
                                                }
                                                case StreamFrames.OtherItem(String type, String ignored) -> {
                                                    if (type.equals("end")) {
                                                        ended[0] = true;
                                                    }
                                                }
                                                default -> {}
                                            }
                                        })
                                        .concatWith(Flux.defer(() -> ended[0]
                                                ? Flux.empty()
                                                : Flux.error(new RemoteTransport.StreamDropped(
                                                        "the output stream ended before its end"))));
                            })
                            .retryWhen(t.reconnects())
                            .onErrorMap(t::transportError);
                })
                .publishOn(Schedulers.parallel(), DELIVERY_PREFETCH);
    }

    /**
     * Watches a directory. The server's {@code ready} (sent once its provider's watch is live) becomes the one {@link
     * FileEvent.Kind#READY}; a dropped watch is reopened and, once live again, reports one {@link
     * FileEvent.Kind#OVERFLOW}, since changes may have been missed meanwhile.
     *
     * @param t the transport
     * @param path {@code /v1/sessions/{id}/files/watch?path=...}
     * @return READY, then the changes
     */
    public static Flux<FileEvent> watch(RemoteTransport t, String path) {
        return Flux.defer(() -> {
                    boolean[] ready = {false};
                    return Flux.defer(() -> t.stream(HttpMethod.GET, path, null, res -> {})
                                    .<FileEvent>handle((sized, sink) -> {
                                        switch (sized.item()) {
                                            case StreamFrames.FileItem(FileEvent e) -> sink.next(e);
                                            case StreamFrames.ErrorItem(RuntimeException error) -> sink.error(error);
                                            case StreamFrames.OtherItem(String type, String dirPath) -> {
                                                if (type.equals("ready") && dirPath != null) {
                                                    sink.next(new FileEvent(
                                                            ready[0] ? FileEvent.Kind.OVERFLOW : FileEvent.Kind.READY,
                                                            dirPath));
                                                    ready[0] = true;
                                                }
                                            }
                                            default -> {}
                                        }
                                    })
                                    .concatWith(
                                            Flux.error(new RemoteTransport.StreamDropped("the watch stream ended"))))
                            .retryWhen(t.reconnects())
                            .onErrorMap(t::transportError);
                })
                .publishOn(Schedulers.parallel(), DELIVERY_PREFETCH);
    }
}
