package dev.sandbox.implementation.egress;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.concurrent.CompletableFuture;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * Reads a connection's bytes up to the end of an HTTP request head (the first empty line), one chunk at a time and no
 * further, then hands the rest of the connection, from the byte after the head, to one later subscriber with its
 * demand passed through. The head is bounded ({@value #MAX_HEAD} bytes): past it, {@link #head()} fails and the
 * connection is cancelled.
 */
final class HeadSplitter implements CoreSubscriber<ByteBuffer> {
    /** The longest request head read. */
    static final int MAX_HEAD = 32 * 1024;

    /** A head longer than {@link #MAX_HEAD}. */
    static final class HeadTooLargeException extends RuntimeException {
        private static final long serialVersionUID = 1L;

        HeadTooLargeException() {
            super("the request head is longer than " + MAX_HEAD + " bytes");
        }
    }

    private final CompletableFuture<byte[]> head = new CompletableFuture<>();
    private final ByteArrayOutputStream read = new ByteArrayOutputStream();
    private volatile Subscription upstream;
    private byte[] leftover = new byte[0];
    private Subscriber<? super ByteBuffer> rest; // guarded by this
    private boolean completed; // guarded by this
    private Throwable failed; // guarded by this

    /**
     * The head, once read, with its final empty line; fails when the connection ends or errs first, or is too long.
     *
     * @return the head's bytes
     */
    CompletableFuture<byte[]> head() {
        return head;
    }

    /**
     * The connection after the head: what was read past it first, then the rest as asked for. Subscribe once, after
     * {@link #head()} completed.
     *
     * @return the bytes
     */
    Flux<ByteBuffer> rest() {
        Flux<ByteBuffer> after = Flux.<ByteBuffer>from(this::handOver);
        return leftover.length == 0 ? after : Flux.concat(Mono.just(ByteBuffer.wrap(leftover)), after);
    }

    /** Stops reading: the connection is cancelled. */
    void cancel() {
        Subscription s = upstream;
        if (s != null) {
            s.cancel();
        }
        head.completeExceptionally(new IllegalStateException("cancelled"));
    }

    private void handOver(Subscriber<? super ByteBuffer> s) {
        boolean done;
        Throwable error;
        synchronized (this) {
            if (rest != null) {
                s.onSubscribe(new Subscription() {
                    @Override
                    public void request(long n) {}

                    @Override
                    public void cancel() {}
                });
                s.onError(new IllegalStateException("the rest of a connection is subscribed once"));
                return;
            }
            rest = s;
            done = completed;
            error = failed;
        }
        Subscription up = upstream;
        s.onSubscribe(new Subscription() {
            @Override
            public void request(long n) {
                up.request(n);
            }

            @Override
            public void cancel() {
                up.cancel();
            }
        });
        if (error != null) {
            s.onError(error);
        } else if (done) {
            s.onComplete();
        }
    }

    @Override
    public void onSubscribe(Subscription s) {
        upstream = s;
        s.request(1);
    }

    @Override
    public void onNext(ByteBuffer b) {
        Subscriber<? super ByteBuffer> r;
        synchronized (this) {
            r = rest;
        }
        if (r != null) {
            r.onNext(b);
            return;
        }
        if (head.isDone()) {
            return; // more than asked for before the hand-over: not a source to read from
        }
        int from = Math.max(0, read.size() - 3);
        if (read.size() + b.remaining() > MAX_HEAD + 3) {
            upstream.cancel();
            head.completeExceptionally(new HeadTooLargeException());
            return;
        }
        byte[] chunk = new byte[b.remaining()];
        b.get(chunk);
        read.write(chunk, 0, chunk.length);
        byte[] all = read.toByteArray();
        int end = endOfHead(all, from);
        if (end < 0) {
            if (all.length > MAX_HEAD) {
                upstream.cancel();
                head.completeExceptionally(new HeadTooLargeException());
            } else {
                upstream.request(1);
            }
            return;
        }
        leftover = Arrays.copyOfRange(all, end, all.length);
        head.complete(Arrays.copyOf(all, end));
    }

    /** The index just past the first {@code CRLF CRLF} (or {@code LF LF}) at or after {@code from}, or -1. */
    static int endOfHead(byte[] b, int from) {
        for (int i = from; i < b.length; i++) {
            if (b[i] != '\n') {
                continue;
            }
            if (i + 1 < b.length && b[i + 1] == '\n') {
                return i + 2;
            }
            if (i + 2 < b.length && b[i + 1] == '\r' && b[i + 2] == '\n') {
                return i + 3;
            }
        }
        return -1;
    }

    @Override
    public void onError(Throwable t) {
        Subscriber<? super ByteBuffer> r;
        synchronized (this) {
            r = rest;
            failed = t;
        }
        if (r != null) {
            r.onError(t);
        }
        head.completeExceptionally(t);
    }

    @Override
    public void onComplete() {
        Subscriber<? super ByteBuffer> r;
        synchronized (this) {
            r = rest;
            completed = true;
        }
        if (r != null) {
            r.onComplete();
        }
        head.completeExceptionally(new IllegalStateException("the connection ended before its request head"));
    }
}
