package dev.sandbox.implementation.remote;

import com.fasterxml.jackson.databind.JsonNode;
import dev.sandbox.BackendException;
import dev.sandbox.ExecEvent;
import dev.sandbox.implementation.wire.ChannelFrames;
import dev.sandbox.implementation.wire.LineSplitter;
import dev.sandbox.implementation.wire.StreamFrames;
import dev.sandbox.implementation.wire.WireJson;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.handler.codec.http.websocketx.BinaryWebSocketFrame;
import io.netty.handler.codec.http.websocketx.WebSocketFrame;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.IntFunction;
import java.util.function.LongConsumer;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.MonoSink;
import reactor.core.publisher.Sinks;
import reactor.core.scheduler.Schedulers;
import reactor.util.concurrent.Queues;

/**
 * The remote provider's command channel: one WebSocket to {@code /v1/channel} per provider, opened on the first
 * command and again after it breaks, carrying every {@code run} and {@code exec} as frames ({@link ChannelFrames}) on
 * streams this client numbers.
 *
 * <p>A run answers its result on the event loop that read it. An exec's items are queued per stream (bounded: the
 * server sends at most its window of unacknowledged output, which this side checks) and decoded on a worker, as the
 * REST streams are. When the socket breaks, every command on it fails with a {@link RemoteTransport.StreamDropped}:
 * an exec the server had opened is resumed by {@link RemoteStreams} from its offsets on the next socket ({@link
 * #resume}); a run fails with the retryable error a REST run gets for a cut connection. When the server refuses the
 * upgrade (an older server without the route answers 404), the commands waiting fail with {@link Refused}, which
 * sends them over REST; after a 404 or 405 every later command goes over REST too.
 */
public final class RemoteChannel {
    /** The longest message accepted from the server: one event of the longest stream line. */
    static final int MAX_MESSAGE = LineSplitter.MAX_LINE + ChannelFrames.HEADER;
    /** How long a closing provider's socket may take to write its last frames (its commands' cancels). */
    static final java.time.Duration GOODBYE_WAIT = java.time.Duration.ofSeconds(2);
    /** Frames waiting to be written (opens, acknowledgements, cancels); past that a command fails, retryable. */
    private static final int OUT_QUEUE = 1 << 16;
    /** Items of one exec handed to its worker ahead of demand. */
    private static final int DELIVERY_PREFETCH = 4;

    private final RemoteTransport t;
    private final Object lock = new Object();
    private Conn current; // guarded by lock
    private volatile boolean unsupported;
    private volatile boolean closed;

    /**
     * A channel over a transport; nothing is opened until the first command.
     *
     * @param t the transport whose client, token and TLS the socket uses
     */
    public RemoteChannel(RemoteTransport t) {
        this.t = t;
    }

    /**
     * Whether commands should go over the channel: not after the server said it has no such route.
     *
     * @return {@code true} while the channel may be used
     */
    public boolean usable() {
        return !unsupported && !closed;
    }

    /** Closes the socket; commands on it fail as for a dropped connection. */
    public void close() {
        closed = true;
        Conn c;
        synchronized (lock) {
            c = current;
            current = null;
        }
        if (c != null) {
            c.end(new RemoteTransport.StreamDropped("the remote provider was closed"));
        }
    }

    /** The server refused the upgrade: the command was not sent and may go over REST. */
    public static final class Refused extends RuntimeException {
        private static final long serialVersionUID = 1L;

        Refused(Throwable cause) {
            super("the sandbox server refused the command channel", cause, false, false);
        }
    }

    private Conn conn() {
        synchronized (lock) {
            if (current == null || current.ended) {
                current = new Conn();
                current.start();
            }
            return current;
        }
    }

    /** What the channel hands one stream's frames to. */
    private interface Receiver {
        void onFrame(ChannelFrames.Frame f);

        void dropped(Throwable cause);
    }

    /** One WebSocket and its streams. */
    private final class Conn {
        final Sinks.Many<byte[]> out = Sinks.many()
                .unicast()
                .onBackpressureBuffer(Queues.<byte[]>unbounded(256).get());
        /** Frames in {@link #out} not yet taken by the socket; at most {@link #OUT_QUEUE}. */
        final AtomicInteger queued = new AtomicInteger();

        final Map<Integer, Receiver> streams = new ConcurrentHashMap<>();
        final AtomicInteger next = new AtomicInteger();
        volatile boolean ended;
        Disposable socket;

        void start() {
            socket = t.<Void>websocket("/v1/channel", MAX_MESSAGE, (in, o) -> {
                        Mono<Void> send = o.sendObject(out.asFlux().map(b -> {
                                    queued.decrementAndGet();
                                    return new BinaryWebSocketFrame(Unpooled.wrappedBuffer(b));
                                }))
                                .then();
                        Mono<Void> receive = in.aggregateFrames(MAX_MESSAGE)
                                .receiveFrames()
                                .doOnNext(this::onMessage)
                                .then();
                        return Mono.firstWithSignal(send, receive);
                    })
                    .subscribe(
                            x -> {},
                            e -> end(e),
                            () -> end(new RemoteTransport.StreamDropped("the command channel was closed")));
        }

        private void onMessage(WebSocketFrame frame) {
            if (!(frame instanceof BinaryWebSocketFrame)) {
                return;
            }
            byte[] message = ByteBufUtil.getBytes(frame.content());
            int at = 0;
            while (at < message.length) {
                ChannelFrames.Frame f = ChannelFrames.decode(message, at, MAX_MESSAGE, false);
                Receiver r = streams.get(f.stream());
                if (r != null) {
                    r.onFrame(f);
                }
                at = f.end();
            }
        }

        /** Numbers a new stream, or -1 when this socket has ended. */
        int register(Receiver r) {
            synchronized (this) {
                int id = next.incrementAndGet();
                if (ended || id <= 0) {
                    return -1;
                }
                streams.put(id, r);
                return id;
            }
        }

        boolean send(byte[] frame) {
            synchronized (this) {
                if (ended || queued.get() >= OUT_QUEUE) {
                    return false;
                }
                queued.incrementAndGet();
                return out.tryEmitNext(frame).isSuccess();
            }
        }

        void end(Throwable cause) {
            List<Receiver> left;
            boolean goodbye = closed; // the provider itself is closing, not the connection failing
            synchronized (this) {
                if (ended) {
                    return;
                }
                ended = true;
                if (goodbye) {
                    // nobody will resume these: every command still open is cancelled (the server kills it), and the
                    // frames already queued (a cancel sent just before, as by a CLI on Ctrl-C) go out first
                    for (Integer id : streams.keySet()) {
                        out.tryEmitNext(ChannelFrames.cancel(id));
                    }
                }
                out.tryEmitComplete();
                left = new ArrayList<>(streams.values());
                streams.clear();
            }
            if (socket != null) {
                if (goodbye) {
                    // the socket ends by itself once the queued frames are written; this only bounds the wait
                    Disposable s = socket;
                    Mono.delay(GOODBYE_WAIT).subscribe(x -> s.dispose());
                } else {
                    socket.dispose();
                }
            }
            Throwable mapped = mapEnd(cause);
            left.forEach(r -> r.dropped(mapped));
        }
    }

    private Throwable mapEnd(Throwable cause) {
        for (Throwable c = cause; c != null; c = c.getCause()) {
            if (c instanceof RemoteTransport.WebSocketRefused refused) {
                if (refused.status() == 404 || refused.status() == 405) {
                    unsupported = true;
                }
                return new Refused(refused);
            }
        }
        if (cause instanceof RemoteTransport.StreamDropped) {
            return cause;
        }
        RemoteTransport.StreamDropped d = new RemoteTransport.StreamDropped("the command channel broke: " + cause);
        d.initCause(cause);
        return d;
    }

    /**
     * The error an error frame stands for; a {@code 503 ServerBusy} (the server's queue for a slot was full or its
     * wait over: nothing was done) becomes a retryable {@link dev.sandbox.remote.ServerBusyException}, as the guard's
     * answer with {@code Retry-After: 1} does.
     */
    private static RuntimeException error(ChannelFrames.Frame f) {
        int status = ChannelFrames.errorStatus(f);
        return BusyRetry.answer(status, status == 503 ? "1" : null, ChannelFrames.errorBody(f));
    }

    private static BackendException queueFull() {
        return new BackendException("too many commands are waiting to be sent on the command channel", null, true);
    }

    // ------------------------------------------------------------------ run

    /**
     * Runs a command: its result's JSON, delivered on the event loop that read it.
     *
     * @param sessionId the session
     * @param body the exec body's JSON
     * @return the result's JSON; a {@link Refused} when the channel could not be opened
     */
    public Mono<JsonNode> run(String sessionId, byte[] body) {
        return Mono.create(sink -> {
            Conn c = conn();
            RunReceiver r = new RunReceiver(c, sink);
            int id = c.register(r);
            if (id < 0) {
                c = conn(); // the socket ended just now: once more on a fresh one
                r = new RunReceiver(c, sink);
                id = c.register(r);
                if (id < 0) {
                    sink.error(new RemoteTransport.StreamDropped("the command channel closed"));
                    return;
                }
            }
            r.id = id;
            Conn conn = c;
            int stream = id;
            sink.onCancel(() -> {
                if (conn.streams.remove(stream) != null) {
                    conn.send(ChannelFrames.cancel(stream));
                }
            });
            if (!c.send(ChannelFrames.open(ChannelFrames.OPEN_RUN, id, sessionId, body))) {
                c.streams.remove(id);
                sink.error(c.ended ? new RemoteTransport.StreamDropped("the command channel closed") : queueFull());
            }
        });
    }

    private static final class RunReceiver implements Receiver {
        final Conn conn;
        final MonoSink<JsonNode> sink;
        volatile int id;

        RunReceiver(Conn conn, MonoSink<JsonNode> sink) {
            this.conn = conn;
            this.sink = sink;
        }

        @Override
        public void onFrame(ChannelFrames.Frame f) {
            conn.streams.remove(f.stream());
            switch (f.type()) {
                case ChannelFrames.RESULT -> {
                    byte[] json = new byte[f.length()];
                    System.arraycopy(f.bytes(), f.offset(), json, 0, json.length);
                    JsonNode n = WireJson.lenient(json);
                    if (n == null) {
                        sink.error(RemoteErrors.protocol("the sandbox server sent a run result that is not JSON"));
                    } else {
                        sink.success(n);
                    }
                }
                case ChannelFrames.ERROR -> sink.error(error(f));
                default ->
                    sink.error(RemoteErrors.protocol("the sandbox server sent frame type " + f.type() + " for a run"));
            }
        }

        @Override
        public void dropped(Throwable cause) {
            sink.error(cause);
        }
    }

    // ------------------------------------------------------------------ exec

    /**
     * Opens an exec on the channel.
     *
     * @param sessionId the session
     * @param body the exec body's JSON, naming the exec's id
     * @param onOpened called with the server's window once the exec started
     * @return the stream
     */
    public ExecStream exec(String sessionId, byte[] body, LongConsumer onOpened) {
        return new ExecStream(n -> ChannelFrames.open(ChannelFrames.OPEN_EXEC, n, sessionId, body), onOpened);
    }

    /**
     * Continues an exec the server holds (opened on a channel that broke, or over REST) on a new stream, from the
     * offsets of the last lines delivered.
     *
     * @param sessionId the session
     * @param execId the exec's id
     * @param afterStdout the offset of the last stdout line delivered, or -1
     * @param afterStderr the offset of the last stderr line delivered, or -1
     * @param onOpened called with the server's window once the exec is attached
     * @return the stream
     */
    public ExecStream resume(
            String sessionId, String execId, long afterStdout, long afterStderr, LongConsumer onOpened) {
        return new ExecStream(n -> ChannelFrames.resume(n, sessionId, execId, afterStdout, afterStderr), onOpened);
    }

    /** One exec on the channel: its items, and the acknowledgements and the cancel going back. */
    public final class ExecStream implements Receiver {
        private final IntFunction<byte[]> open;
        private final LongConsumer onOpened;
        private final Sinks.Many<ChannelFrames.Frame> queue = Sinks.many()
                .unicast()
                .onBackpressureBuffer(Queues.<ChannelFrames.Frame>unbounded(64).get());
        private final AtomicLong queuedBytes = new AtomicLong();
        private volatile long maxQueued = 4L * 1024 * 1024 + MAX_MESSAGE;
        private volatile Conn conn;
        private volatile int id;

        ExecStream(IntFunction<byte[]> open, LongConsumer onOpened) {
            this.open = open;
            this.onOpened = onOpened;
        }

        /**
         * Sends the open and gives the exec's items, each with its size, up to and including its exit or error.
         *
         * @return the items
         */
        public Flux<LineSplitter.Sized> items() {
            return Flux.defer(() -> {
                        Conn c = conn();
                        int n = c.register(this);
                        if (n < 0) {
                            return Flux.error(new RemoteTransport.StreamDropped("the command channel closed"));
                        }
                        conn = c;
                        id = n;
                        if (!c.send(open.apply(n))) {
                            c.streams.remove(n);
                            return Flux.error(
                                    c.ended
                                            ? new RemoteTransport.StreamDropped("the command channel closed")
                                            : queueFull());
                        }
                        return queue.asFlux();
                    })
                    .publishOn(Schedulers.parallel(), DELIVERY_PREFETCH)
                    .map(f -> {
                        queuedBytes.addAndGet(-f.length());
                        return new LineSplitter.Sized(
                                StreamFrames.streamItem(f.bytes(), f.offset(), f.length()), f.length() + 1);
                    })
                    .takeUntil(sized -> sized.item() instanceof StreamFrames.ErrorItem
                            || (sized.item() instanceof StreamFrames.EventItem(ExecEvent e)
                                    && e instanceof ExecEvent.Exit));
        }

        @Override
        public synchronized void onFrame(ChannelFrames.Frame f) {
            switch (f.type()) {
                case ChannelFrames.OPENED -> {
                    long window = ChannelFrames.openedWindow(f);
                    maxQueued = 4 * window + MAX_MESSAGE;
                    onOpened.accept(window);
                }
                case ChannelFrames.EVENT -> {
                    if (queuedBytes.addAndGet(f.length()) > maxQueued) {
                        fail(RemoteErrors.protocol("the sandbox server sent more than its window on an exec stream"));
                    } else if (queue.tryEmitNext(f).isFailure()) {
                        fail(RemoteErrors.protocol("an exec stream's queue refused an item"));
                    }
                }
                case ChannelFrames.ERROR -> {
                    conn.streams.remove(f.stream());
                    queue.tryEmitError(error(f));
                }
                default ->
                    fail(RemoteErrors.protocol("the sandbox server sent frame type " + f.type() + " on an exec"));
            }
        }

        private void fail(RuntimeException e) {
            Conn c = conn;
            if (c != null && c.streams.remove(id) != null) {
                c.send(ChannelFrames.cancel(id));
            }
            queue.tryEmitError(e);
        }

        @Override
        public synchronized void dropped(Throwable cause) {
            queue.tryEmitError(cause);
        }

        /**
         * Acknowledges what was delivered.
         *
         * @param stdout the offset of the last stdout line delivered, or -1
         * @param stderr the offset of the last stderr line delivered, or -1
         * @return {@code false} when the socket is gone (acknowledge over REST)
         */
        public boolean ack(long stdout, long stderr) {
            Conn c = conn;
            return c != null && c.streams.containsKey(id) && c.send(ChannelFrames.ack(id, stdout, stderr));
        }

        /**
         * Ends the stream, releasing the exec on the server (killing its command if it runs).
         *
         * @return {@code false} when the socket is gone (release over REST)
         */
        public boolean cancel() {
            Conn c = conn;
            if (c == null) {
                return false;
            }
            c.streams.remove(id);
            return c.send(ChannelFrames.cancel(id));
        }
    }
}
