package dev.sandbox.implementation.agent;

import java.nio.ByteBuffer;
import org.reactivestreams.Subscription;
import reactor.core.publisher.BaseSubscriber;

/**
 * Feeds a stream's {@code DATA} (a process's stdin, a write's content) from its source, one buffer at a time within
 * the agent's credit: a buffer is requested only when the previous one went out and the agent takes more.
 */
final class DataPump extends BaseSubscriber<ByteBuffer> {
    private final AgentConnection conn;
    private final AgentStream st;

    DataPump(AgentConnection conn, AgentStream st) {
        this.conn = conn;
        this.st = st;
    }

    /** Asks the stream's source for one more buffer when the agent's credit allows and nothing is pending. */
    static void pull(AgentStream st, Object lock) {
        DataPump p;
        synchronized (lock) {
            p = st.pump;
            if (p == null
                    || !st.pumpSubscribed
                    || !st.open
                    || st.dataPending != null
                    || st.sourceDone
                    || st.pumpRequested
                    || st.window.dataCredit() <= 0) {
                return;
            }
            st.pumpRequested = true;
        }
        p.request(1);
    }

    /** Stops reading the stream's source, if it has one. */
    static void dispose(AgentStream st) {
        DataPump p = st.pump;
        if (p != null) {
            p.dispose();
        }
    }

    @Override
    protected void hookOnSubscribe(Subscription s) {
        // a request made before this point would be lost: pull waits for it, then asks if credit came
        synchronized (conn.lock) {
            st.pumpSubscribed = true;
        }
        pull(st, conn.lock);
    }

    @Override
    protected void hookOnNext(ByteBuffer buf) {
        synchronized (conn.lock) {
            st.pumpRequested = false;
            if (!st.open) {
                return;
            }
            if (buf.hasRemaining()) {
                st.dataPending = buf;
                conn.writer.markReady(st);
            }
        }
        conn.writer.drain();
        pull(st, conn.lock);
    }

    @Override
    protected void hookOnComplete() {
        synchronized (conn.lock) {
            st.sourceDone = true;
            if (st.open) {
                conn.writer.markReady(st);
            }
        }
        conn.writer.drain();
    }

    @Override
    protected void hookOnError(Throwable t) {
        boolean wasOpen;
        synchronized (conn.lock) {
            wasOpen = st.open;
        }
        conn.cancel(st);
        if (wasOpen) {
            st.handler.fail(t);
        }
    }
}
