package dev.sandbox.blocking;

/**
 * Hears how far a file transfer of the {@link FileClient} has come: {@link FileClient#upload(java.nio.file.Path,
 * String, TransferListener) upload}, {@link FileClient#download(String, java.nio.file.Path, TransferListener)
 * download} and {@link FileClient#write(String, java.io.InputStream, TransferListener) write from a stream}. For a
 * directory the bytes are the content of its files, and {@link #entries} hears the entries (files, directories,
 * links) as well.
 *
 * <p>It is called on the thread that made the transfer call, at most once per 64 KiB moved, and a last time, with
 * {@code bytesDone == totalBytes}, once the transfer has completed (the file is in place); so it is never called
 * after the call has returned or thrown. An exception it throws aborts the transfer (nothing is left half-written;
 * a directory download leaves nothing at all) and is thrown by the transfer call.
 *
 * <pre>{@code
 * client.files().upload(Path.of("model.bin"), "model.bin", (done, total) ->
 *         System.out.printf("\r%d of %d MiB", done >> 20, total >> 20));
 * }</pre>
 */
@FunctionalInterface
public interface TransferListener {
    /** How many bytes pass between two progress calls at most: 64 KiB. */
    int STEP_BYTES = 64 * 1024;

    /**
     * Reports progress.
     *
     * @param bytesDone bytes moved so far
     * @param totalBytes the size of the transfer, or -1 while it is unknown (when writing from a stream); the last
     *     call always gives the final size
     */
    void progress(long bytesDone, long totalBytes);

    /**
     * Reports how many entries of a directory transfer are done, just before each {@link #progress} call of that
     * transfer (not called for a single file). Does nothing unless overridden.
     *
     * <pre>{@code
     * TransferListener listener = new TransferListener() {
     *     public void progress(long done, long total) {}
     *     public void entries(long done, long total) { System.err.printf("\r%d of %d files", done, total); }
     * };
     * }</pre>
     *
     * @param entriesDone entries copied so far
     * @param totalEntries how many there are, or -1 while unknown (a download); the last call gives the final count
     */
    default void entries(long entriesDone, long totalEntries) {}
}
