package dev.sandbox.implementation.agent;

import java.util.ArrayDeque;
import java.util.concurrent.atomic.AtomicInteger;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.Exceptions;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Operators;

/**
 * A stream whose answers are many items, delivered as demanded. Bounded: the agent's credit bounds the bytes
 * queued, and chunks merge once more than {@value #MERGE_AFTER} wait, so their count stays small too.
 */
abstract class ItemStream<T> extends Flux<T> implements Subscription, AgentStream.Handler {
    /** Queued chunks beyond which new chunks are merged into queued ones. */
    static final int MERGE_AFTER = 16;
    /** The largest merged chunk. */
    static final int MAX_MERGED = 64 * 1024;

    final AgentConnection conn;
    final String what;
    final AgentStream st;
    private final int[] outputFds;
    private final int window;
    private final ArrayDeque<Item> queue = new ArrayDeque<>();
    private final AtomicInteger wip = new AtomicInteger();
    private CoreSubscriber<? super T> actual; // guarded by this; dropped on cancel (rule 3.13)
    private boolean subscribedOnce; // guarded by this
    private long requested;
    private boolean done;
    private Throwable error;
    private boolean cancelled;
    private boolean terminated;

    /**
     * @param outputFds the fds credited as output (1 and 2), or 0: the stream is credited on fd 0
     */
    ItemStream(AgentConnection conn, String what, int window, int... outputFds) {
        this.conn = conn;
        this.window = window;
        this.what = what;
        this.outputFds = outputFds;
        this.st = new AgentStream(this);
    }

    abstract ClientFrame request(int id);

    abstract T map(Item item);

    @Override
    public abstract void onFrame(AgentFrame f, int length);

    /** Called before the request goes out; may end the stream at once. */
    boolean beforeOpen() {
        return true;
    }

    @Override
    public void subscribe(CoreSubscriber<? super T> s) {
        synchronized (this) {
            if (subscribedOnce) {
                Operators.error(s, new IllegalStateException(what + " may be subscribed once"));
                return;
            }
            subscribedOnce = true;
            actual = s;
        }
        s.onSubscribe(this);
        if (!beforeOpen()) {
            return;
        }
        boolean output = outputFds.length > 0 && outputFds[0] != 0;
        Throwable e = conn.open(st, this::request, output ? 0 : window, output ? window : 0);
        if (e != null) {
            fault(e);
        }
    }

    void push(Item it) {
        synchronized (this) {
            if (cancelled || done) {
                return;
            }
            if (it.value == null && queue.size() >= MERGE_AFTER && merge(it)) {
                // merged
            } else {
                queue.add(it);
            }
        }
        drain();
    }

    /** Merges a chunk into the last queued chunk of its fd (the tail, or the one before it); with this. */
    private boolean merge(Item it) {
        Item tail = queue.peekLast();
        if (tail == null || tail.value != null) {
            return false;
        }
        if (tail.fd == it.fd) {
            if (contiguous(tail, it) && tail.len + it.len <= MAX_MERGED) {
                tail.append(it);
                return true;
            }
            return false;
        }
        Item last = queue.pollLast();
        Item prev = queue.peekLast();
        boolean merged = false;
        if (prev != null
                && prev.value == null
                && prev.fd == it.fd
                && contiguous(prev, it)
                && prev.len + it.len <= MAX_MERGED) {
            prev.append(it);
            merged = true;
        }
        queue.addLast(last);
        return merged;
    }

    private static boolean contiguous(Item a, Item b) {
        return a.fd == 0 || a.offset + a.len == b.offset;
    }

    void complete() {
        synchronized (this) {
            if (done) {
                return;
            }
            done = true;
        }
        drain();
    }

    void fault(Throwable t) {
        synchronized (this) {
            if (done) {
                return;
            }
            done = true;
            error = t;
            // errors are not queued behind items a subscriber may never request: what was queued is dropped
            queue.clear();
        }
        drain();
    }

    @Override
    public void fail(Throwable t) {
        fault(t);
    }

    @Override
    public void request(long n) {
        if (n <= 0) {
            fault(new IllegalArgumentException("request must be positive, was " + n));
            conn.cancel(st);
            return;
        }
        synchronized (this) {
            requested = Operators.addCap(requested, n);
        }
        drain();
    }

    @Override
    public void cancel() {
        synchronized (this) {
            if (cancelled) {
                return;
            }
            cancelled = true;
            actual = null;
            queue.clear();
        }
        onCancel();
        conn.cancel(st);
    }

    /** Hook for subclasses, before the {@code CLOSE}. */
    void onCancel() {}

    private void drain() {
        if (wip.getAndIncrement() != 0) {
            return;
        }
        int missed = 1;
        do {
            for (; ; ) {
                Item it = null;
                boolean end = false;
                Throwable err = null;
                CoreSubscriber<? super T> a;
                synchronized (this) {
                    a = actual;
                    if (cancelled || terminated || a == null) {
                        break;
                    }
                    if (requested > 0 && !queue.isEmpty()) {
                        it = queue.poll();
                        if (requested != Long.MAX_VALUE) {
                            requested--;
                        }
                    } else if (queue.isEmpty() && done) {
                        end = true;
                        terminated = true;
                        err = error;
                    }
                }
                if (it != null) {
                    try {
                        a.onNext(map(it));
                    } catch (Throwable e) {
                        // a subscriber that throws fails its own stream, not the connection it shares
                        Exceptions.throwIfFatal(e);
                        cancel();
                        synchronized (this) {
                            terminated = true;
                        }
                        a.onError(e);
                        break;
                    }
                    conn.writer.consumed(st, it.fd, it.cost());
                    continue;
                }
                if (end) {
                    if (err != null) {
                        a.onError(err);
                    } else {
                        a.onComplete();
                    }
                }
                break;
            }
            missed = wip.addAndGet(-missed);
        } while (missed != 0);
    }
}
