package dev.sandbox.implementation.files;

import dev.sandbox.FileOperationException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.AccessDeniedException;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.DirectoryNotEmptyException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.NotDirectoryException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.security.SecureRandom;
import java.util.HexFormat;
import java.util.concurrent.Callable;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * Streaming file I/O on this machine, shared by every provider that reads or writes host files: the local provider's
 * files, and the remote provider's uploads and downloads. Reads go one chunk per request; writes go to a hidden
 * temporary file beside the target that is renamed into place, so a reader never sees half a file. All of it runs on
 * bounded-elastic threads. Failures are {@link FileOperationException}s naming the path as the caller gave it.
 */
public final class LocalFileIo {
    /** Size of the chunks {@link #read} emits. */
    public static final int CHUNK_SIZE = 64 * 1024;

    private LocalFileIo() {}

    /**
     * Streams a file in chunks, reading one chunk per request.
     *
     * @param file the file
     * @param shownPath the path to name in errors
     * @return the content
     */
    public static Flux<ByteBuffer> read(Path file, String shownPath) {
        return read(() -> open(file, shownPath), shownPath);
    }

    /**
     * Streams a channel in chunks, reading one chunk per request, and closes it at the end.
     *
     * @param opener opens the channel when the stream is subscribed; may throw a {@link FileOperationException}
     * @param shownPath the path to name in errors
     * @return the content
     */
    public static Flux<ByteBuffer> read(Callable<FileChannel> opener, String shownPath) {
        return read(opener, shownPath, Long.MAX_VALUE);
    }

    /**
     * Streams at most {@code length} bytes of a channel from its position, in chunks, reading one chunk per request,
     * and closes it at the end.
     *
     * @param opener opens (and positions) the channel when the stream is subscribed; may throw a {@link
     *     FileOperationException}
     * @param shownPath the path to name in errors
     * @param length how many bytes at most; {@link Long#MAX_VALUE} for all
     * @return the content
     */
    public static Flux<ByteBuffer> read(Callable<FileChannel> opener, String shownPath, long length) {
        return Flux.using(
                        opener,
                        channel -> {
                            long[] left = {length};
                            return Flux.<ByteBuffer>generate(sink -> {
                                if (left[0] <= 0) {
                                    sink.complete();
                                    return;
                                }
                                ByteBuffer buf = ByteBuffer.allocate((int) Math.min(CHUNK_SIZE, left[0]));
                                try {
                                    if (channel.read(buf) < 0) {
                                        sink.complete();
                                    } else {
                                        left[0] -= buf.position();
                                        sink.next(buf.flip());
                                    }
                                } catch (IOException e) {
                                    sink.error(failure(shownPath, e));
                                }
                            });
                        },
                        LocalFileIo::closeQuietly)
                .subscribeOn(Schedulers.boundedElastic());
    }

    /**
     * Opens a file for reading, refusing a directory.
     *
     * @param file the file
     * @param shownPath the path to name in errors
     * @return the open channel, the caller's to close
     * @throws FileOperationException when it is a directory or cannot be opened
     */
    public static FileChannel openForRead(Path file, String shownPath) {
        return open(file, shownPath);
    }

    private static FileChannel open(Path file, String shownPath) {
        if (Files.isDirectory(file)) {
            throw failure(shownPath, FileOperationException.Reason.IS_A_DIRECTORY, null);
        }
        try {
            return FileChannel.open(file, StandardOpenOption.READ);
        } catch (IOException e) {
            throw failure(shownPath, e);
        }
    }

    /**
     * How {@link #writeAtomically(Path, String, Publisher, int, Buffers)} reaches a kind of buffer: its readable bytes
     * as NIO views (written without a copy through the heap when they are direct), and how it is freed.
     *
     * @param <T> the kind of buffer
     */
    public interface Buffers<T> {
        /**
         * The kind of buffer, to release those a failed or cancelled write leaves behind.
         *
         * @return the class
         */
        Class<T> type();

        /**
         * The buffer's readable bytes; the views are read, the buffer is left as it is.
         *
         * @param buffer the buffer
         * @return its bytes
         */
        ByteBuffer[] views(T buffer);

        /**
         * Frees a buffer once its bytes are written or dropped.
         *
         * @param buffer the buffer
         */
        void release(T buffer);
    }

    /**
     * Where an atomic write puts its temporary file and how it moves it onto the target: beside a host path, or
     * relative to an open directory. Closed once the write is over, whatever its outcome.
     */
    public interface Destination extends AutoCloseable {
        /**
         * The target's file name, from which the temporary file's name is made.
         *
         * @return the name
         */
        String targetName();

        /**
         * Creates the temporary file, failing if the name exists; never follows a symbolic link.
         *
         * @param tempName the temporary file's name, in the target's directory
         * @return the open channel
         * @throws IOException when it cannot be created
         */
        FileChannel createTemp(String tempName) throws IOException;

        /**
         * Renames the temporary file onto the target, replacing it.
         *
         * @param tempName the temporary file's name
         * @throws IOException when it cannot be renamed
         */
        void replaceTarget(String tempName) throws IOException;

        /**
         * Deletes the temporary file when it is still there.
         *
         * @param tempName the temporary file's name
         * @throws IOException when it cannot be deleted
         */
        void deleteTemp(String tempName) throws IOException;

        /**
         * Whether the target exists now (not following a final link): decides the marker of the temporary name.
         *
         * @return whether it exists
         */
        boolean targetExists();

        /**
         * Renames the temporary file to another temporary name in the same directory.
         *
         * @param from its name
         * @param to the new name
         * @throws IOException when it cannot be renamed
         */
        void renameTemp(String from, String to) throws IOException;

        /** Frees what the destination holds. */
        @Override
        void close();
    }

    /** The destination beside a host path. */
    private record Beside(Path parent, Path target) implements Destination {
        static Beside of(Path target, String shownPath) {
            Path parent = target.getParent();
            if (parent == null || !Files.isDirectory(parent)) {
                throw failure(
                        shownPath,
                        FileOperationException.Reason.NOT_FOUND,
                        new NoSuchFileException(String.valueOf(parent), null, "parent directory does not exist"));
            }
            if (Files.isDirectory(target, LinkOption.NOFOLLOW_LINKS)) {
                throw failure(shownPath, FileOperationException.Reason.IS_A_DIRECTORY, null);
            }
            return new Beside(parent, target);
        }

        @Override
        public String targetName() {
            return target.getFileName().toString();
        }

        @Override
        public FileChannel createTemp(String tempName) throws IOException {
            return FileChannel.open(parent.resolve(tempName), StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE);
        }

        @Override
        public void replaceTarget(String tempName) throws IOException {
            Path temp = parent.resolve(tempName);
            try {
                Files.move(temp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            } catch (AtomicMoveNotSupportedException e) {
                Files.move(temp, target, StandardCopyOption.REPLACE_EXISTING);
            }
        }

        @Override
        public void deleteTemp(String tempName) throws IOException {
            Files.deleteIfExists(parent.resolve(tempName));
        }

        @Override
        public boolean targetExists() {
            return Files.exists(target, LinkOption.NOFOLLOW_LINKS);
        }

        @Override
        public void renameTemp(String from, String to) throws IOException {
            Files.move(parent.resolve(from), parent.resolve(to), StandardCopyOption.ATOMIC_MOVE);
        }

        @Override
        public void close() {}
    }

    private static final Buffers<ByteBuffer> NIO = new Buffers<>() {
        @Override
        public Class<ByteBuffer> type() {
            return ByteBuffer.class;
        }

        @Override
        public ByteBuffer[] views(ByteBuffer buffer) {
            return new ByteBuffer[] {buffer.duplicate()};
        }

        @Override
        public void release(ByteBuffer buffer) {}
    };

    /**
     * Writes a file from a publisher through a temporary file renamed into place; the parent must exist.
     *
     * @param target the file to write
     * @param shownPath the path to name in errors
     * @param content the bytes, consumed with backpressure
     * @return the number of bytes written, once the file is in place
     */
    public static Mono<Long> writeAtomically(Path target, String shownPath, Publisher<ByteBuffer> content) {
        return writeAtomically(target, shownPath, content, 2, NIO);
    }

    /**
     * Writes a file from buffers of any kind through a temporary file renamed into place, releasing each buffer once
     * written. Up to {@code prefetch} buffers wait for the writing thread; those left when the write fails or is
     * cancelled are released.
     *
     * @param target the file to write
     * @param shownPath the path to name in errors
     * @param content the bytes, consumed with backpressure
     * @param prefetch how many buffers may wait for the writing thread
     * @param buffers how to read and free the buffers
     * @param <T> the kind of buffer
     * @return the number of bytes written, once the file is in place
     */
    public static <T> Mono<Long> writeAtomically(
            Path target, String shownPath, Publisher<T> content, int prefetch, Buffers<T> buffers) {
        return writeAtomically(() -> Beside.of(target, shownPath), shownPath, content, prefetch, buffers);
    }

    /**
     * Writes a file from a publisher through a temporary file that a destination renames into place.
     *
     * @param destination opens the destination when the write is subscribed (on a bounded-elastic thread); may throw
     *     a {@link FileOperationException}; closed once the write is over
     * @param shownPath the path to name in errors
     * @param content the bytes, consumed with backpressure
     * @return the number of bytes written, once the file is in place
     */
    public static Mono<Long> writeAtomically(
            Callable<Destination> destination, String shownPath, Publisher<ByteBuffer> content) {
        return writeAtomically(destination, shownPath, content, 2, NIO);
    }

    private static <T> Mono<Long> writeAtomically(
            Callable<Destination> destination,
            String shownPath,
            Publisher<T> content,
            int prefetch,
            Buffers<T> buffers) {
        Scheduler io = Schedulers.boundedElastic();
        return Mono.usingWhen(
                Mono.fromCallable(() -> TempFile.in(destination.call(), shownPath))
                        .subscribeOn(io),
                temp -> Flux.from(content)
                        .publishOn(io, prefetch)
                        .reduce(0L, (count, buf) -> {
                            try {
                                return count + temp.write(buffers.views(buf), shownPath);
                            } finally {
                                buffers.release(buf);
                            }
                        })
                        .switchIfEmpty(Mono.just(0L))
                        .doOnNext(count -> temp.commit(shownPath))
                        .doOnDiscard(buffers.type(), buffers::release),
                temp -> Mono.fromRunnable(temp::discard).subscribeOn(io),
                (temp, error) -> Mono.fromRunnable(temp::discard).subscribeOn(io),
                temp -> Mono.fromRunnable(temp::discard).subscribeOn(io));
    }

    /**
     * The typed error for an I/O failure on a path.
     *
     * @param path the path to name
     * @param e the failure
     * @return the exception to throw
     */
    public static FileOperationException failure(String path, IOException e) {
        FileOperationException.Reason reason;
        if (e instanceof NoSuchFileException) {
            reason = FileOperationException.Reason.NOT_FOUND;
        } else if (e instanceof FileAlreadyExistsException) {
            reason = FileOperationException.Reason.ALREADY_EXISTS;
        } else if (e instanceof DirectoryNotEmptyException) {
            reason = FileOperationException.Reason.DIRECTORY_NOT_EMPTY;
        } else if (e instanceof AccessDeniedException) {
            reason = FileOperationException.Reason.PERMISSION_DENIED;
        } else if (e instanceof NotDirectoryException) {
            reason = FileOperationException.Reason.NOT_A_DIRECTORY;
        } else {
            String reasonText = e instanceof FileSystemException fse ? fse.getReason() : e.getMessage();
            String text = reasonText == null ? "" : reasonText;
            if (text.contains("No space left")) {
                reason = FileOperationException.Reason.DISK_FULL;
            } else if (text.contains("Is a directory")) {
                reason = FileOperationException.Reason.IS_A_DIRECTORY;
            } else if (text.contains("Not a directory")) {
                reason = FileOperationException.Reason.NOT_A_DIRECTORY;
            } else if (text.contains("Permission denied")) {
                reason = FileOperationException.Reason.PERMISSION_DENIED;
            } else {
                reason = FileOperationException.Reason.IO_ERROR;
            }
        }
        return failure(path, reason, e);
    }

    /**
     * The typed error for a path.
     *
     * @param path the path to name
     * @param reason why the operation failed
     * @param cause the underlying error, or {@code null}
     * @return the exception to throw
     */
    public static FileOperationException failure(String path, FileOperationException.Reason reason, Throwable cause) {
        String what = switch (reason) {
            case NOT_FOUND -> "no such file or directory";
            case NOT_A_DIRECTORY -> "not a directory";
            case IS_A_DIRECTORY -> "is a directory";
            case ALREADY_EXISTS -> "already exists";
            case DIRECTORY_NOT_EMPTY -> "directory not empty";
            case PERMISSION_DENIED -> "permission denied";
            case DISK_FULL -> "no space left on device";
            case TOO_LARGE -> "file too large";
            case IO_ERROR -> "I/O error" + (cause == null ? "" : ": " + cause.getMessage());
        };
        return new FileOperationException(path, reason, path + ": " + what, cause);
    }

    private static void closeQuietly(FileChannel channel) {
        try {
            channel.close();
        } catch (IOException ignored) {
            // nothing to lose on a failed close of a channel we are done with
        }
    }

    /**
     * The prefix of every temporary file of an atomic write, on every provider (the Docker agent uses the same):
     * watches hide files whose names start with it. The full name is the prefix, 16 random hex digits and one marker
     * letter: {@code o} when the target existed (an overwrite), {@code n} when it did not, re-checked just before the
     * rename so that a watch can report the rename as one {@code MODIFIED} or {@code CREATED} of the target.
     */
    public static final String TEMP_PREFIX = ".dev-sandbox-write-";

    /** The marker of a temporary name whose target existed. */
    public static final char OVERWRITE = 'o';

    /** The marker of a temporary name whose target did not exist. */
    public static final char NEW = 'n';

    /**
     * Whether a file name is one of the SDK's temporary names.
     *
     * @param name a file name (no directory)
     * @return whether it starts with {@link #TEMP_PREFIX}
     */
    public static boolean isTempName(String name) {
        return name.startsWith(TEMP_PREFIX);
    }

    /**
     * The marker letter of a temporary name.
     *
     * @param name a temporary name
     * @return its last letter
     */
    public static char markerOf(String name) {
        return name.isEmpty() ? 0 : name.charAt(name.length() - 1);
    }

    private static String tempName(boolean overwrite) {
        byte[] random = new byte[8];
        RANDOM.nextBytes(random);
        return TEMP_PREFIX + HexFormat.of().formatHex(random) + (overwrite ? OVERWRITE : NEW);
    }

    private static final SecureRandom RANDOM = new SecureRandom();

    /** The hidden temporary file a write goes to before it is renamed into place. */
    private static final class TempFile {
        private final Destination destination;
        private String name; // guarded by this after construction
        private final FileChannel channel;
        private boolean committed; // guarded by this
        private boolean discarded; // guarded by this

        private TempFile(Destination destination, String name, FileChannel channel) {
            this.destination = destination;
            this.name = name;
            this.channel = channel;
        }

        static TempFile in(Destination destination, String shownPath) {
            try {
                String name = tempName(destination.targetExists());
                return new TempFile(destination, name, destination.createTemp(name));
            } catch (IOException e) {
                destination.close();
                throw failure(shownPath, e);
            } catch (RuntimeException e) {
                destination.close();
                throw e;
            }
        }

        long write(ByteBuffer[] parts, String shownPath) {
            long n = 0;
            for (ByteBuffer part : parts) {
                n += part.remaining();
            }
            try {
                for (long left = n; left > 0; ) {
                    left -= channel.write(parts);
                }
            } catch (IOException e) {
                throw failure(shownPath, e);
            }
            return n;
        }

        synchronized void commit(String shownPath) {
            try {
                channel.close();
                // the target may have appeared or gone while the data came: say so in the name a watch sees
                String current = name;
                boolean exists = destination.targetExists();
                if (exists != (markerOf(name) == OVERWRITE)) {
                    String renamed = name.substring(0, name.length() - 1) + (exists ? OVERWRITE : NEW);
                    try {
                        destination.renameTemp(name, renamed);
                        current = renamed;
                    } catch (IOException e) {
                        // keep the old name: the watch reports the other kind, the write still succeeds
                    }
                }
                name = current;
                destination.replaceTarget(name);
                committed = true;
            } catch (IOException e) {
                throw failure(shownPath, e);
            }
        }

        synchronized void discard() {
            if (discarded) {
                return;
            }
            discarded = true;
            try {
                channel.close();
                if (!committed) {
                    destination.deleteTemp(name);
                }
            } catch (IOException ignored) {
                // best effort: the temporary file has a unique, hidden name
            } finally {
                destination.close();
            }
        }
    }
}
