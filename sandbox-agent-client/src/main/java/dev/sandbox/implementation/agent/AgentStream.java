package dev.sandbox.implementation.agent;

import java.nio.ByteBuffer;
import java.util.Locale;
import org.reactivestreams.Publisher;

/**
 * One stream's protocol state: everything still to send for it (its request, a {@code CLOSE}, signals, a terminal
 * size, a buffer of {@code DATA}) and its {@link StreamWindow}. Guarded by the connection's lock; what the stream does
 * with its frames is its {@link Handler}'s.
 */
final class AgentStream {

    /** What a stream does with the frames for it; called on the transport's thread, outside the lock. */
    interface Handler {
        /**
         * A frame for this stream arrived (credit already charged).
         *
         * @param f the frame
         * @param payloadLength its payload's length
         */
        void onFrame(AgentFrame f, int payloadLength);

        /**
         * The stream failed: the connection ended, or its data source failed.
         *
         * @param t why
         */
        void fail(Throwable t);
    }

    final Handler handler;
    final StreamWindow window = new StreamWindow();
    int id;
    boolean open;
    ByteBuffer request;
    boolean requestSent;
    boolean closePending;
    long signals;
    boolean resizePending;
    /** A resize or signal was asked for while no data was pending: it goes before the next data. */
    boolean controlFirst;

    int cols;
    int rows;
    /** In the writer's queue of streams with something to send. */
    boolean queued;

    // outbound data (stdin, a write's content)
    Publisher<ByteBuffer> source;
    DataPump pump;
    /**
     * The source called the pump's {@code onSubscribe}: only then can a request reach it. A source may do so later and
     * on another thread (a server's request body subscribes on its event loop), after the agent's credit came.
     */
    boolean pumpSubscribed;

    ByteBuffer dataPending;
    boolean sourceDone;
    /** STARTED or READY arrived: the agent takes DATA and EOF from now on. */
    boolean accepting;

    boolean eofSent;
    boolean pumpRequested;

    AgentStream(Handler handler) {
        this.handler = handler;
    }

    /** Whether the writer has {@code DATA} or an {@code EOF} to send once the agent grants credit. */
    boolean dataWaiting() {
        return dataPending != null || (sourceDone && !eofSent);
    }

    /** The protocol's name of a frame, for messages. */
    static String frameName(AgentFrame f) {
        return f.getClass().getSimpleName().toUpperCase(Locale.ROOT);
    }

    /** The error for a frame a stream does not expect. */
    static AgentProtocolException unexpected(AgentFrame f, String what) {
        return new AgentProtocolException("unexpected " + frameName(f) + " on stream "
                + Integer.toUnsignedString(f.stream()) + " (" + what + ")");
    }
}
