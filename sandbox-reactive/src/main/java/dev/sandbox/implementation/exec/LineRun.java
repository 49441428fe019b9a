package dev.sandbox.implementation.exec;

import dev.sandbox.ExecEvent;

/**
 * Consecutive whole lines of one stream packed in a transport's own form, so that a server can send many lines
 * without making a string and an event of each. The framer ({@link ExecRunner#execBatches}) fills runs through this
 * interface and knows nothing of their encoding; the remote module's {@code LineBatch} is the one implementation.
 * Internal: not part of the public API.
 *
 * <p>Every {@code append} answers whether the line went in; a run that refuses a line is full (or the line does
 * not fit its shape) and the framer starts another or sends the line as an event of its own.
 */
public interface LineRun {
    /**
     * Adds the run of whole lines starting at {@code pos} whose bytes need no transformation to go in (what the
     * factory's {@link Factory#plainLineAt} accepts), as many as fit.
     *
     * @param b the bytes
     * @param pos where the first line starts
     * @param end where the bytes end
     * @param maxLine lines this long or longer are not added
     * @return where the first line not added starts ({@code pos} when none was added)
     */
    int appendPlainLines(byte[] b, int pos, int end, int maxLine);

    /**
     * Adds one whole line of plain bytes (see {@link Factory#plainLineAt}), without its newline.
     *
     * @param b the bytes
     * @param off where the line starts
     * @param len its length
     * @return whether it was added
     */
    boolean appendPlain(byte[] b, int off, int len);

    /**
     * Adds one whole line of ASCII bytes (no byte of {@code 0x80} or more, not ending in {@code \r}), without its
     * newline.
     *
     * @param b the bytes
     * @param off where the line starts
     * @param len its length
     * @return whether it was added
     */
    boolean appendAscii(byte[] b, int off, int len);

    /**
     * Adds a line already decoded.
     *
     * @param line the line
     * @return whether it was added (a partial line, or one whose text does not match its byte length, is not)
     */
    boolean append(ExecEvent.Line line);

    /**
     * Makes runs of one kind.
     *
     * @param <R> the kind of run
     */
    interface Factory<R extends LineRun> {
        /**
         * Whether a whole line that {@link LineRun#appendPlainLines} takes as it is starts at {@code pos}.
         *
         * @param b the bytes
         * @param pos where the line starts
         * @param maxLine lines this long or longer do not count
         * @return whether such a line, ended by a newline within {@code b}, starts there
         */
        boolean plainLineAt(byte[] b, int pos, int maxLine);

        /**
         * Starts an empty run.
         *
         * @param stdout whether the lines are stdout's
         * @param offset the stream offset where the first line will start
         * @param capacity about how many bytes are expected
         * @return the run
         */
        R open(boolean stdout, long offset, int capacity);

        /**
         * Starts a run with a line.
         *
         * @param line the line
         * @return the run, or {@code null} when the line cannot go into one
         */
        R of(ExecEvent.Line line);
    }
}
