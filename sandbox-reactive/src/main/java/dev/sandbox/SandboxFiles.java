package dev.sandbox;

import dev.sandbox.implementation.files.SandboxTree;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * The files of a session, from {@link SandboxSession#files()}. Relative paths resolve against the session's
 * workdir. Contents are streamed in chunks with backpressure, never held whole in memory; writes go to a temporary
 * file that is renamed into place, so a reader never sees half a file.
 *
 * <p>Failures are {@link FileOperationException}s that name the path and give a {@link
 * FileOperationException.Reason}; a path that escapes what the provider allows is an {@link
 * InvalidArgumentException}.
 *
 * <p>Writes create missing parent directories unless {@link WriteOptions#withCreateParents(boolean)} says not to.
 * {@link #list(String, int)} walks a tree in pre-order (a directory, then its entries, each directory's entries
 * sorted by name), never following a symbolic link, and refuses trees of more than {@link #LIST_MAX_ENTRIES}
 * entries; {@link #read(String, long, long)} reads a range of a file.
 *
 * <p>On the local provider, whose files are the host's, the files API stays inside the session's workdir even when
 * the commands of the session change it under the API's feet: a symbolic link inside the workdir is followed only
 * while it stays inside (one that is absolute or climbs out with {@code ..} is an {@link InvalidArgumentException}),
 * and a regular file with more than one hard link is not read ({@link #read}, {@link #readAllBytes}, {@link
 * #download}: {@link FileOperationException.Reason#PERMISSION_DENIED}, naming the path), since a hard link may be a
 * file outside the workdir. Writing such a path replaces the link with a new file and leaves the other names as they
 * were. See {@code LocalSandboxProvider}.
 *
 * <pre>{@code
 * SandboxFiles files = session.files();
 * files.mkdir("data")
 *     .then(files.upload(Path.of("input.csv"), "data/input.csv"))
 *     .then(session.run(ExecOptions.shell("wc -l data/input.csv > data/count.txt")))
 *     .then(files.readAllBytes("data/count.txt", 1024))
 *     .map(bytes -> new String(bytes, StandardCharsets.UTF_8))
 *     .subscribe(System.out::println);
 * }</pre>
 */
public interface SandboxFiles {

    /** Size of the chunks {@link #read(String)} emits. */
    int CHUNK_SIZE = 64 * 1024;

    /**
     * The deepest {@link #list(String, int)} goes: a larger depth (such as {@link Integer#MAX_VALUE}, "all of it")
     * lists this many levels, and the entries of directories deeper than that are not listed.
     */
    int LIST_MAX_DEPTH = 64;

    /**
     * The most entries one {@link #list} call returns: a directory or tree with more, or whose paths add up to more
     * than {@link #LIST_MAX_PATH_CHARS} characters, fails with {@link FileOperationException.Reason#TOO_LARGE} naming
     * the path (nothing is cut silently), since code in a sandbox can make a tree of any size. List a smaller
     * subtree, or a smaller depth.
     */
    int LIST_MAX_ENTRIES = 50_000;

    /** The most characters the paths of one {@link #list} call's entries add up to; see {@link #LIST_MAX_ENTRIES}. */
    int LIST_MAX_PATH_CHARS = 16 << 20;

    /**
     * Streams a file's content in chunks of up to {@link #CHUNK_SIZE} bytes, read only as fast as requested.
     *
     * @param path the file
     * @return the content
     */
    Flux<ByteBuffer> read(String path);

    /**
     * Streams a range of a file: at most {@code length} bytes from byte {@code offset}, in chunks of up to {@link
     * #CHUNK_SIZE}. A range running past the end stops at the end; an offset at or past the end gives no bytes.
     *
     * <pre>{@code
     * // the last KiB of a log, whatever its size
     * long size = files.stat("app.log").block(timeout).size();
     * files.read("app.log", Math.max(0, size - 1024), 1024).subscribe(chunk -> ...);
     * }</pre>
     *
     * @param path the file
     * @param offset the first byte to read, {@code >= 0}
     * @param length how many bytes at most, {@code >= 0}; {@link Long#MAX_VALUE} for the rest of the file
     * @return the bytes of the range; {@link InvalidArgumentException} naming {@code offset} or {@code length} when
     *     negative
     */
    Flux<ByteBuffer> read(String path, long offset, long length);

    /**
     * Reads a range of a file into memory: at most {@code length} bytes from byte {@code offset}, fewer when the file
     * ends first.
     *
     * <pre>{@code
     * byte[] header = files.readAllBytes("data.bin", 0, 16).block(timeout);
     * }</pre>
     *
     * @param path the file
     * @param offset the first byte to read, {@code >= 0}
     * @param length how many bytes at most, {@code 0 ..} {@link Integer#MAX_VALUE}{@code - 8}
     * @return the bytes; {@link InvalidArgumentException} naming {@code offset} or {@code length} when out of range
     */
    default Mono<byte[]> readAllBytes(String path, long offset, long length) {
        if (length > Integer.MAX_VALUE - 8) {
            return Mono.error(new InvalidArgumentException(
                    "length",
                    "length must be at most " + (Integer.MAX_VALUE - 8) + " to read into memory, got " + length));
        }
        return read(path, offset, length)
                .collect(java.io.ByteArrayOutputStream::new, (out, b) -> {
                    byte[] chunk = new byte[b.remaining()];
                    b.duplicate().get(chunk);
                    out.writeBytes(chunk);
                })
                .map(java.io.ByteArrayOutputStream::toByteArray);
    }

    /**
     * Reads a whole file, refusing one larger than the cap.
     *
     * @param path the file
     * @param maxBytes the largest size accepted
     * @return the content, or {@link FileOperationException.Reason#TOO_LARGE}
     */
    Mono<byte[]> readAllBytes(String path, long maxBytes);

    /**
     * Writes a file from a publisher, replacing it if it exists, with the {@linkplain WriteOptions#defaults() default
     * options}: missing parent directories are created.
     *
     * @param path the file
     * @param content the bytes, consumed with backpressure
     * @return the new file's info
     */
    default Mono<FileInfo> write(String path, Publisher<ByteBuffer> content) {
        return write(path, content, WriteOptions.defaults());
    }

    /**
     * Writes a file from a publisher, replacing it if it exists, atomically (a reader sees the old file or the new
     * one, never half of it).
     *
     * <pre>{@code
     * files.write("a/new/dir/out.txt", Flux.just(ByteBuffer.wrap(bytes)), WriteOptions.defaults()).block(timeout);
     * }</pre>
     *
     * @param path the file
     * @param content the bytes, consumed with backpressure
     * @param options whether missing parents are created; without, a missing parent is {@link
     *     FileOperationException.Reason#NOT_FOUND}
     * @return the new file's info
     */
    Mono<FileInfo> write(String path, Publisher<ByteBuffer> content, WriteOptions options);

    /**
     * Writes a file from bytes, replacing it if it exists; missing parent directories are created.
     *
     * @param path the file
     * @param content the bytes
     * @return the new file's info
     */
    default Mono<FileInfo> write(String path, byte[] content) {
        return write(path, content, WriteOptions.defaults());
    }

    /**
     * Writes a file from bytes, replacing it if it exists.
     *
     * <pre>{@code
     * files.write("must/exist/x.txt", bytes, WriteOptions.defaults().withCreateParents(false)).block(timeout);
     * }</pre>
     *
     * @param path the file
     * @param content the bytes (copied when the call is made)
     * @param options whether missing parents are created
     * @return the new file's info
     */
    default Mono<FileInfo> write(String path, byte[] content, WriteOptions options) {
        byte[] copy = content.clone();
        return write(
                path,
                Flux.defer(() -> {
                    List<ByteBuffer> chunks = new ArrayList<>();
                    for (int off = 0; off < copy.length; off += CHUNK_SIZE) {
                        chunks.add(ByteBuffer.wrap(copy, off, Math.min(CHUNK_SIZE, copy.length - off))
                                .asReadOnlyBuffer());
                    }
                    return Flux.fromIterable(chunks);
                }),
                options);
    }

    /**
     * Writes several files in one call, in the map's iteration order (pass a {@link java.util.LinkedHashMap} to
     * choose it), each atomically and with missing parent directories created. The call as a whole is not atomic:
     * it fails with the error of the first file, in that order, that could not be written (a {@link
     * FileOperationException} naming its path); the files before it are written, those after it may or may not be.
     * Providers send the files together where they can: one request on the remote provider (its body, the contents in
     * base64, is held by the server while written, so it takes up to 32 MiB encoded, about 24 MiB of content, and
     * the server's upload limit; write larger sets file by file), pipelined on the Docker agent's connection.
     *
     * <pre>{@code
     * Map<String, byte[]> files = new LinkedHashMap<>();
     * files.put("src/main.py", mainPy);
     * files.put("src/util.py", utilPy);
     * List<FileInfo> written = session.files().writeAll(files).block(timeout);
     * }</pre>
     *
     * @param files path to content; an empty map writes nothing
     * @return the new files' infos, in the map's order
     */
    default Mono<List<FileInfo>> writeAll(Map<String, byte[]> files) {
        List<Map.Entry<String, byte[]>> entries = new ArrayList<>();
        for (Map.Entry<String, byte[]> e : files.entrySet()) {
            entries.add(Map.entry(e.getKey(), e.getValue().clone()));
        }
        return Flux.fromIterable(entries)
                .concatMap(e -> write(e.getKey(), e.getValue()))
                .collectList();
    }

    /**
     * Copies a file or a directory tree from this machine into the sandbox, creating missing parent directories.
     *
     * <p>A regular file is written to {@code path}, replacing a file there. A directory becomes the directory {@code
     * path} (made with its parents when missing; an existing one is merged into: files of the same name are
     * replaced): its files, subdirectories (empty ones too) and symbolic links, copied as links with their targets as
     * they are (not followed, not checked: the tree is yours), with permission bits. Sockets, FIFOs and devices are
     * skipped. A tree that fails half-way leaves in the sandbox what was copied until then.
     *
     * <pre>{@code
     * files.upload(Path.of("project"), "work/project").block(Duration.ofMinutes(1));
     * }</pre>
     *
     * @param local a regular file or a directory on this machine
     * @param path where to put it in the sandbox
     * @return the info of {@code path} once copied
     */
    Mono<FileInfo> upload(Path local, String path);

    /**
     * {@link #upload(Path, String)}, telling {@code progress} how far it came: entries and bytes so far, after each
     * chunk and each entry (on the transfer's threads: do not block in it). A file reports 1 entry at its end.
     *
     * <pre>{@code
     * files.upload(Path.of("data"), "data", p -> System.err.printf("\r%d files, %d bytes", p.entries(), p.bytes()))
     *     .block(Duration.ofMinutes(5));
     * }</pre>
     *
     * @param local a regular file or a directory on this machine
     * @param path where to put it in the sandbox
     * @param progress hears progress
     * @return the info of {@code path} once copied
     */
    default Mono<FileInfo> upload(Path local, String path, Consumer<TransferProgress> progress) {
        return SandboxTree.upload(this, local, path, progress);
    }

    /**
     * Copies a file or a directory tree from the sandbox to this machine.
     *
     * <p>A file replaces the local file {@code local} atomically (its bytes go to a temporary file renamed into
     * place). A directory becomes the new local directory {@code local}, which must not exist ({@link
     * FileOperationException.Reason#ALREADY_EXISTS}); its parent must. What a sandbox sends is treated as hostile: the
     * tree is built in a hidden temporary directory beside {@code local} and renamed to it only once complete, so a
     * failed or cancelled download leaves nothing behind; nothing is ever written outside it nor through a symbolic link. An entry
     * is refused, failing the download with a {@link FileOperationException} naming it, when its name is absolute,
     * holds a {@code ..} component or a control character (NUL, newline, escape...), or repeats an earlier one; when
     * it is a symbolic link whose target is absolute or leads out of the downloaded tree; or when it is a hard link
     * or a device (sockets, FIFOs and devices in the sandbox directory are skipped). Limits: 100,000 entries, names
     * and link targets of 4,096 bytes, 128 levels, 64 GiB of content ({@link FileOperationException.Reason#TOO_LARGE}).
     * Permission bits are kept without setuid, setgid and sticky bits; directories stay readable, writable and
     * searchable by you.
     *
     * <pre>{@code
     * long bytes = files.download("work/out", Path.of("out")).block(Duration.ofMinutes(1));
     * }</pre>
     *
     * @param path the file or directory in the sandbox
     * @param local where to put it on this machine
     * @return the number of content bytes copied
     */
    Mono<Long> download(String path, Path local);

    /**
     * {@link #download(String, Path)}, telling {@code progress} how far it came: entries and bytes so far (on the
     * transfer's threads: do not block in it). A file reports 1 entry at its end.
     *
     * <pre>{@code
     * files.download("out", Path.of("out"), p -> log.debug("{} bytes", p.bytes())).block(Duration.ofMinutes(5));
     * }</pre>
     *
     * @param path the file or directory in the sandbox
     * @param local where to put it on this machine
     * @param progress hears progress
     * @return the number of content bytes copied
     */
    default Mono<Long> download(String path, Path local, Consumer<TransferProgress> progress) {
        return SandboxTree.download(this, path, local, progress);
    }

    /**
     * Lists a directory's entries (not recursively), in name order; the same as {@code list(path, 1)}.
     *
     * @param path the directory
     * @return one info per entry
     */
    default Flux<FileInfo> list(String path) {
        return list(path, 1);
    }

    /**
     * Lists a directory and its subdirectories to a depth: 1 gives the directory's entries, 2 also the entries of its
     * subdirectories, and so on up to {@link #LIST_MAX_DEPTH} ({@link Integer#MAX_VALUE} for "as deep as allowed").
     * Entries come in pre-order: each directory right before its own entries, the entries of one directory sorted by
     * name. Symbolic links are listed, never followed (a link to a directory is one {@link FileInfo.Type#SYMLINK}
     * entry). A tree of more than {@link #LIST_MAX_ENTRIES} entries fails with {@link
     * FileOperationException.Reason#TOO_LARGE} naming the path.
     *
     * <pre>{@code
     * files.list("src", Integer.MAX_VALUE)
     *     .filter(f -> f.type() == FileInfo.Type.FILE && f.name().endsWith(".py"))
     *     .subscribe(f -> System.out.println(f.path()));
     * }</pre>
     *
     * @param path the directory
     * @param depth how many levels, {@code >= 1}
     * @return one info per entry; {@link InvalidArgumentException} naming {@code depth} when it is below 1
     */
    Flux<FileInfo> list(String path, int depth);

    /**
     * Describes a path without following a final symbolic link.
     *
     * @param path the path
     * @return its info
     */
    Mono<FileInfo> stat(String path);

    /**
     * Whether a path exists, without following a final symbolic link (a dangling link exists: it is there). A path
     * through a regular file ({@code file.txt/x}) does not exist.
     *
     * <pre>{@code
     * files.exists("venv")
     *     .flatMap(there -> there ? Mono.empty() : session.run(ExecOptions.shell("python3 -m venv venv")).then())
     *     .block(timeout);
     * }</pre>
     *
     * @param path the path
     * @return {@code true} or {@code false}; failures other than not found (permission denied, a path outside what the
     *     provider allows) are errors
     */
    default Mono<Boolean> exists(String path) {
        return stat(path)
                .map(info -> true)
                .onErrorResume(
                        e -> e instanceof FileOperationException f
                                && (f.reason() == FileOperationException.Reason.NOT_FOUND
                                        || f.reason() == FileOperationException.Reason.NOT_A_DIRECTORY),
                        e -> Mono.just(false));
    }

    /**
     * Creates a directory and any missing parents, and says whether this call created it. A directory that exists
     * already (or a symbolic link to one, as {@code mkdir -p} accepts) is not an error: the answer is {@code false}, as
     * E2B's {@code make_dir} answers, so that code which must be the one to create a directory (a lock, a fresh output
     * directory) can tell, without a separate {@link #exists} that another process could race. The answer is
     * {@code true} only when this call's own {@code mkdir} made the last component; when two calls race, at most one
     * gets {@code true}.
     *
     * <pre>{@code
     * boolean fresh = files.mkdir("out").block(timeout);
     * }</pre>
     *
     * @param path the directory
     * @return {@code true} when this call created it, {@code false} when it was a directory already; fails with
     *     {@link FileOperationException.Reason#ALREADY_EXISTS} when something other than a directory is there, and
     *     {@link FileOperationException.Reason#NOT_A_DIRECTORY} when a parent is not a directory
     */
    Mono<Boolean> mkdir(String path);

    /**
     * Removes a file, a symbolic link (not its target) or an empty directory; the same as {@link #remove(String,
     * boolean) remove(path, false)}.
     *
     * @param path the path
     * @return completes when it is gone, also when it was not there
     */
    Mono<Void> remove(String path);

    /**
     * Removes a path; with {@code recursive}, a directory and everything in it. A path that is not there (one that
     * {@link #exists} reports as {@code false}: missing, or beneath a regular file) is not an error: removal is
     * idempotent, like {@code rm -f} and E2B's {@code remove}, since what the caller wants, the path gone, is so; a
     * retried call after a lost reply, or a cleanup racing the sandbox's own, then succeeds. A caller who must know
     * whether it was there asks {@link #exists} first.
     *
     * <pre>{@code
     * files.remove("build", true).block(timeout); // whether or not there was a build directory
     * }</pre>
     *
     * @param path the path
     * @param recursive whether to remove a non-empty directory
     * @return completes when it is gone, also when it was not there; fails when it is there but cannot be removed (a
     *     non-empty directory without {@code recursive}: {@link FileOperationException.Reason#DIRECTORY_NOT_EMPTY})
     */
    Mono<Void> remove(String path, boolean recursive);

    /**
     * Moves or renames a path; fails with {@link FileOperationException.Reason#ALREADY_EXISTS} if the target exists.
     *
     * @param from the path to move
     * @param to the new path
     * @return completes when moved
     */
    Mono<Void> move(String from, String to);

    /**
     * Watches a directory, not recursively: the same as {@link #watch(String, boolean) watch(path, false)}.
     *
     * <pre>{@code
     * session.files().watch("inbox")
     *     .filter(e -> e.kind() == FileEvent.Kind.CREATED)
     *     .subscribe(e -> System.out.println(e.path()));
     * }</pre>
     *
     * @param path the directory
     * @return {@link FileEvent.Kind#READY} once, then the changes
     */
    default Flux<FileEvent> watch(String path) {
        return watch(path, false);
    }

    /**
     * Watches a directory for created, modified and deleted entries, until cancelled; with {@code recursive}, its
     * subdirectories at any depth too, including those created (or moved in) while the watch runs.
     *
     * <p><b>Ready.</b> The first event is always one {@link FileEvent.Kind#READY} naming the watched directory's
     * absolute path: every change made after it arrived (or after it was emitted, by a subscriber that acts on it) is
     * reported. Changes made between subscribing and {@code READY} may or may not be. The watch never completes by
     * itself (a deleted watched directory is one {@code DELETED} on some providers, nothing on others). A missing path or a file fails
     * with a {@link FileOperationException} ({@code NOT_FOUND}, {@code NOT_A_DIRECTORY}) instead.
     *
     * <p><b>Events.</b> Paths are absolute, at any depth. Every provider reports the same events for these changes:
     *
     * <table>
     *   <caption>change and events, in order</caption>
     *   <tr><th>change</th><th>events</th></tr>
     *   <tr><td>{@link #write} of a new path</td><td>{@code CREATED}</td></tr>
     *   <tr><td>{@link #write} over an existing file (the SDK's atomic rename over it)</td><td>{@code
     *       MODIFIED}</td></tr>
     *   <tr><td>a program creating a file and writing it ({@code echo x > f})</td><td>{@code CREATED}, then
     *       {@code MODIFIED}</td></tr>
     *   <tr><td>a program rewriting or appending to an existing file in place ({@code echo x > f})</td><td>{@code
     *       MODIFIED}</td></tr>
     *   <tr><td>{@link #remove}, {@code rm}</td><td>{@code DELETED}</td></tr>
     *   <tr><td>{@link #move} or {@code mv} within the watched tree</td><td>{@code DELETED} of the old path, then
     *       {@code CREATED} of the new one</td></tr>
     *   <tr><td>{@link #mkdir}, {@code mkdir}</td><td>{@code CREATED}</td></tr>
     * </table>
     *
     * <p>The SDK's own temporary files (names starting with {@code .dev-sandbox-write-}, the hidden file an atomic
     * write goes to before it is renamed into place) never appear: a {@link #write} is one event for its target. A
     * program writing a file in several calls may give several {@code MODIFIED} for it; consecutive {@code MODIFIED}
     * of one path may be coalesced into one, so count changes, not events. A chmod is a {@code MODIFIED} too.
     *
     * <p><b>Recursive.</b> A directory created or moved in below the watched one is watched as soon as it is seen,
     * and what it already holds by then is reported as {@code CREATED} (so a file written at once into a new
     * directory is not missed; it may rarely be reported twice). Symbolic links are not followed. A watch covers at
     * most 65,536 directories; past that, or past its depth limit (128 levels), it emits {@link
     * FileEvent.Kind#OVERFLOW} (at the start: fails with a {@link FileOperationException}). A directory moved out or
     * deleted is one {@code DELETED}. The events of one directory come in the order of the changes; those of
     * different directories may interleave otherwise.
     *
     * <p><b>Bounds.</b> Events that come faster than they are consumed are buffered up to a bound (1,024), past which
     * one {@link FileEvent.Kind#OVERFLOW} naming the watched directory is emitted: list the directory again.
     *
     * <pre>{@code
     * session.files().watch("out", true)
     *     .subscribe(e -> {
     *         if (e.kind() == FileEvent.Kind.READY) session.run(ExecOptions.shell("mkdir -p out/a && touch out/a/f")).subscribe();
     *         else System.out.println(e.kind() + " " + e.path()); // CREATED .../out/a, CREATED .../out/a/f, ...
     *     });
     * }</pre>
     *
     * @param path the directory
     * @param recursive whether to watch its subdirectories too
     * @return {@link FileEvent.Kind#READY} once, then the changes
     */
    Flux<FileEvent> watch(String path, boolean recursive);
}
