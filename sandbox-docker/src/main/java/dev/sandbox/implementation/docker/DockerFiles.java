package dev.sandbox.implementation.docker;

import dev.sandbox.ExecOptions;
import dev.sandbox.FileEvent;
import dev.sandbox.FileInfo;
import dev.sandbox.FileOperationException;
import dev.sandbox.InvalidArgumentException;
import dev.sandbox.SandboxFiles;
import dev.sandbox.implementation.files.LocalFileIo;
import dev.sandbox.implementation.process.RawEvent;
import dev.sandbox.implementation.process.SpawnedProcess;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicReference;
import org.reactivestreams.Publisher;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * The files of a Docker session, inside its container, with the local provider's semantics: relative paths resolve
 * against the session's workdir, writes go to a hidden temporary file renamed into place, and failures are {@link
 * FileOperationException}s naming the path as the caller gave it. Paths cannot leave the container; empty paths and
 * NUL bytes are refused with an {@link InvalidArgumentException} naming the argument.
 *
 * <h2>How the bytes travel</h2>
 *
 * <ul>
 *   <li><b>Reads</b> ({@link #read}, {@link #readAllBytes}, {@link #download}) stream {@code GET
 *       /containers/{id}/archive}: the tar stream is un-tarred as it arrives and read from the daemon's socket only
 *       while the subscriber has demand, so the heap holds a few chunks whatever the file's size. A download hands
 *       the connection's own (off-heap) buffers, sliced past the tar headers, to a thread that writes them to the
 *       local temporary file: no copy through the heap, and at most {@value #DOWNLOAD_PREFETCH} pieces (what the
 *       daemon wrote at a time, about 32 KiB) waiting for that thread, which a slow disk therefore throttles.
 *   <li><b>Writes of a known size</b> ({@link #write(String, byte[])}, {@link #upload}) stream {@code PUT
 *       /containers/{id}/archive} into the parent directory: a tar header (which must give the size up front), then
 *       the content as the connection accepts it, under a temporary name, then a short exec renames it into place.
 *       An upload reads its file in off-heap buffers of {@value #UPLOAD_CHUNK} bytes from Netty's allocator;
 *       reactor-netty asks for up to 256 of them ahead of the socket (16 MiB off the heap at most).
 *   <li><b>Writes of unknown length</b> ({@link #write(String, Publisher)}) cannot use a tar entry without first
 *       learning the length. Rather than spool the content to a temporary file on this machine (doubling the disk
 *       traffic and needing local space the size of the file), they stream into {@code cat > temp} through the
 *       stdin of an exec on the data plane, which writes one buffer after the previous one left for the socket:
 *       the heap holds one buffer, the disk nothing. A content publisher that fails leaves the temporary file
 *       unrenamed and removed.
 *   <li><b>Metadata</b> (list, stat, mkdir, remove, move) runs a short busybox helper exec as the session's user,
 *       whose exit code carries the reason and whose stderr explains the rest.
 *   <li><b>Watch</b> polls: the image's busybox has no {@code inotifyd}, so one streaming exec stats the directory's
 *       entries every {@value #WATCH_INTERVAL_MS} ms and this class diffs consecutive snapshots. A change that
 *       keeps an entry's inode, size, and modification and change times within one interval is not seen, and names
 *       holding a newline are not supported. Cancelling the watch kills the exec.
 * </ul>
 *
 * <p>Under gVisor ({@code runsc}) the sandbox keeps its own view of the root file system: the archive API neither
 * sees what the container's processes wrote nor makes its own writes visible to them. There every transfer streams
 * through exec stdin and stdout instead ({@code cat}), with the same bounded memory.
 *
 * <p>The archive API reads and writes as root; files it writes are given the container's user
 * ({@code copyUIDGID}). Helper execs run as the container's user, so permissions apply to them as to commands.
 */
final class DockerFiles implements SandboxFiles {
    private static final Logger LOG = LoggerFactory.getLogger(DockerFiles.class);

    /** How often a watch looks at its directory. */
    static final int WATCH_INTERVAL_MS = 200;

    /** More changes than this in one interval are reported as one {@link FileEvent.Kind#OVERFLOW}. */
    static final int MAX_EVENTS_PER_ROUND = 1024;

    /** The most a metadata helper may print (a listing of a very large directory). */
    private static final int MAX_HELPER_OUTPUT = 32 * 1024 * 1024;

    private static final int MAX_STDERR = 4096;

    /** How many of a download's buffers (each what one socket read took) may wait for the thread writing the file. */
    static final int DOWNLOAD_PREFETCH = 16;

    /** The size of the buffers an upload reads its file in. */
    static final int UPLOAD_CHUNK = 64 * 1024;

    // exit codes of the helper script that carry a reason
    private static final int NOT_FOUND = 64;
    private static final int NOT_A_DIRECTORY = 65;
    private static final int IS_A_DIRECTORY = 66;
    private static final int ALREADY_EXISTS = 67;

    /**
     * The helper: {@code sh -c SCRIPT files OP ARGS...}. {@code info} prints a stat line, the name to show and a
     * link's target, each ending in NUL.
     */
    private static final String SCRIPT = "op=$1; shift\n"
            + "info() { s=$(stat -c '%f %s %Y %y' -- \"$1\") || return 1; t=\n"
            + "  if [ -L \"$1\" ]; then t=$(readlink -- \"$1\"); fi\n"
            + "  printf '%s\\0%s\\0%s\\0' \"$s\" \"$2\" \"$t\"; }\n"
            + "there() { [ -e \"$1\" ] || [ -L \"$1\" ]; }\n"
            + "case $op in\n"
            + "stat) info \"$1\" \"$1\" || exit 1 ;;\n"
            + "list) there \"$1\" || exit 64; [ -d \"$1\" ] || exit 65; cd -- \"$1\" || exit 1\n"
            + "  for f in .* *; do case $f in .|..) continue ;; esac\n"
            + "    there \"$f\" && { info \"$f\" \"$f\" || true; }; done ;;\n"
            + "mkdir) if there \"$1\"; then [ -d \"$1\" ] && exit 0; exit 67; fi\n"
            + "  e=$(mkdir -p -- \"$1\" 2>&1) && exit 0\n"
            + "  case $e in *'File exists'*|*'Not a directory'*) exit 65 ;; esac; echo \"$e\" >&2; exit 1 ;;\n"
            + "remove) there \"$1\" || exit 64\n"
            + "  if [ -d \"$1\" ] && [ ! -L \"$1\" ]; then\n"
            + "    if [ \"$2\" = 1 ]; then rm -rf -- \"$1\"; else rmdir -- \"$1\"; fi\n"
            + "  else rm -f -- \"$1\"; fi ;;\n"
            + "move) there \"$1\" || exit 64; there \"$2\" && exit 67; mv -- \"$1\" \"$2\" ;;\n"
            + "read) [ -e \"$1\" ] || exit 64; [ -d \"$1\" ] && exit 66\n"
            + "  if [ -n \"$2\" ]; then exec head -c \"$2\" -- \"$1\"; fi; exec cat -- \"$1\" ;;\n"
            + "write) [ -d \"$1\" ] || exit 64; if [ -d \"$2\" ] && [ ! -L \"$2\" ]; then exit 66; fi\n"
            + "  cat > \"$3\" || { rm -f -- \"$3\"; exit 1; } ;;\n"
            + "commit) if [ -d \"$1\" ] && [ ! -L \"$1\" ]; then rm -f -- \"$2\"; exit 66; fi\n"
            // a replaced file keeps a second name until the rename is done, so the rename does not wait for the
            // kernel to free its blocks (hundreds of ms for a big file just written): that runs after the answer
            + "  o=; if [ -f \"$1\" ] && [ ! -L \"$1\" ]; then o=\"$2.old\"; ln -- \"$1\" \"$o\" 2>/dev/null || o=; fi\n"
            + "  mv -f -T -- \"$2\" \"$1\" || { rm -f -- \"$2\" ${o:+\"$o\"}; exit 1; }; info \"$1\" \"$1\"; s=$?\n"
            + "  if [ -n \"$o\" ]; then rm -f -- \"$o\" </dev/null >/dev/null 2>&1 & fi; exit $s ;;\n"
            + "discard) rm -f -- \"$1\" ;;\n"
            + "watch) [ -e \"$1\" ] || exit 64; [ -d \"$1\" ] || exit 65; cd -- \"$1\" || exit 1\n"
            + "  while :; do stat -c '%i %s %y %z|%n' -- .[!.]* ..?* * 2>/dev/null; echo; sleep \"$2\"; done ;;\n"
            + "*) echo \"unknown operation $op\" >&2; exit 2 ;;\n"
            + "esac\n";

    private final DockerSessionState state;
    private final Runnable guard;
    private final Scheduler io = Schedulers.boundedElastic();

    DockerFiles(DockerSessionState state, Runnable guard) {
        this.state = state;
        this.guard = guard;
    }

    // ---------------------------------------------------------------- paths

    /** Checks a path argument; fails with an {@link InvalidArgumentException} naming the field and value. */
    private static void validate(String field, String path) {
        if (path == null || path.isEmpty()) {
            throw new InvalidArgumentException(field, field + " must not be empty, got '" + path + "'");
        }
        if (path.indexOf('\0') >= 0) {
            throw new InvalidArgumentException(
                    field, field + " contains a NUL byte: '" + path.replace("\0", "\\0") + "'");
        }
    }

    /** An absolute, normalized path: relative paths resolve against the workdir; {@code ..} stops at the root. */
    static String absolute(String workdir, String path) {
        String joined = path.startsWith("/") ? path : workdir + "/" + path;
        ArrayDeque<String> parts = new ArrayDeque<>();
        for (String part : joined.split("/")) {
            if (part.isEmpty() || part.equals(".")) {
                continue;
            }
            if (part.equals("..")) {
                parts.pollLast();
            } else {
                parts.addLast(part);
            }
        }
        return parts.isEmpty() ? "/" : "/" + String.join("/", parts);
    }

    private static String parent(String abs) {
        int slash = abs.lastIndexOf('/');
        return slash <= 0 ? "/" : abs.substring(0, slash);
    }

    private static String name(String abs) {
        return abs.equals("/") ? "/" : abs.substring(abs.lastIndexOf('/') + 1);
    }

    private static String child(String dir, String name) {
        return dir.equals("/") ? "/" + name : dir + "/" + name;
    }

    private static String tempName() {
        return ".tmp-" + HexFormat.of().toHexDigits(ThreadLocalRandom.current().nextLong())
                + HexFormat.of().toHexDigits(ThreadLocalRandom.current().nextLong());
    }

    /** Runs the guard, checks the argument, then resolves it against the workdir (inspected once per session). */
    private Mono<String> resolve(String field, String path) {
        return Mono.defer(() -> {
            guard.run();
            validate(field, path);
            return state.executor.facts().map(f -> absolute(f.workdir(), path));
        });
    }

    private Mono<ContainerExecutor.Facts> facts() {
        return state.executor.facts();
    }

    // ---------------------------------------------------------------- helper execs

    /** What a helper exec ended with. */
    private record Outcome(int code, boolean signaled, byte[] stdout, String stderr) {
        boolean ok() {
            return code == 0 && !signaled;
        }
    }

    private Mono<SpawnedProcess> spawn(List<String> args, Publisher<ByteBuffer> stdin) {
        List<String> argv = new ArrayList<>(List.of("/bin/sh", "-c", SCRIPT, "files"));
        argv.addAll(args);
        ExecOptions options = ExecOptions.of(argv);
        if (stdin != null) {
            options = options.withStdin(stdin);
        }
        ExecOptions o = options;
        // creating an exec is a blocking control call
        return Mono.fromCallable(() -> state.executor.spawn(o, Map.of())).subscribeOn(io);
    }

    /** Runs a helper to its end, keeping its stdout (up to a bound) and the head of its stderr. */
    private Mono<Outcome> helper(List<String> args, Publisher<ByteBuffer> stdin) {
        return spawn(args, stdin).flatMap(p -> {
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            StringBuilder err = new StringBuilder();
            AtomicReference<RawEvent.Exited> exit = new AtomicReference<>();
            return p.events()
                    .doOnNext(e -> {
                        if (e instanceof RawEvent.Chunk c) {
                            if (c.stream() == RawEvent.STDOUT) {
                                if (out.size() + c.bytes().length > MAX_HELPER_OUTPUT) {
                                    throw new IllegalStateException(
                                            "a file helper printed more than " + MAX_HELPER_OUTPUT + " bytes");
                                }
                                out.writeBytes(c.bytes());
                            } else {
                                appendErr(err, c.bytes());
                            }
                        } else if (e instanceof RawEvent.Exited x) {
                            exit.set(x);
                        }
                    })
                    .doOnCancel(p::kill)
                    .then(Mono.fromSupplier(() -> {
                        RawEvent.Exited x = exit.get();
                        return new Outcome(
                                x == null ? -1 : x.status(),
                                x == null || x.signaled(),
                                out.toByteArray(),
                                err.toString());
                    }));
        });
    }

    private static void appendErr(StringBuilder err, byte[] bytes) {
        if (err.length() < MAX_STDERR) {
            err.append(new String(bytes, StandardCharsets.UTF_8), 0, Math.min(bytes.length, MAX_STDERR));
        }
    }

    /** Runs a helper that must succeed; a failure becomes the typed error for {@code shown}. */
    private Mono<Outcome> expect(List<String> args, String shown) {
        return helper(args, null).flatMap(o -> o.ok() ? Mono.just(o) : Mono.error(failure(shown, o)));
    }

    private static FileOperationException failure(String shown, Outcome o) {
        return failure(shown, o.signaled ? -1 : o.code, o.stderr);
    }

    static FileOperationException failure(String shown, int code, String stderr) {
        String text = stderr == null ? "" : stderr.strip();
        FileOperationException.Reason reason = switch (code) {
            case NOT_FOUND -> FileOperationException.Reason.NOT_FOUND;
            case NOT_A_DIRECTORY -> FileOperationException.Reason.NOT_A_DIRECTORY;
            case IS_A_DIRECTORY -> FileOperationException.Reason.IS_A_DIRECTORY;
            case ALREADY_EXISTS -> FileOperationException.Reason.ALREADY_EXISTS;
            default -> reasonOf(text);
        };
        IOException cause = text.isEmpty() ? null : new IOException(text);
        return LocalFileIo.failure(shown, reason, cause);
    }

    private static FileOperationException.Reason reasonOf(String text) {
        if (text.contains("No such file")) {
            return FileOperationException.Reason.NOT_FOUND;
        } else if (text.contains("Not a directory")) {
            return FileOperationException.Reason.NOT_A_DIRECTORY;
        } else if (text.contains("Is a directory")) {
            return FileOperationException.Reason.IS_A_DIRECTORY;
        } else if (text.contains("File exists")) {
            return FileOperationException.Reason.ALREADY_EXISTS;
        } else if (text.contains("not empty")) {
            return FileOperationException.Reason.DIRECTORY_NOT_EMPTY;
        } else if (text.contains("Permission denied")
                || text.contains("Operation not permitted")
                || text.contains("Read-only file system")) {
            return FileOperationException.Reason.PERMISSION_DENIED;
        } else if (text.contains("No space left")) {
            return FileOperationException.Reason.DISK_FULL;
        }
        return FileOperationException.Reason.IO_ERROR;
    }

    /** Parses the {@code info} records: stat line, name, link target, each NUL-terminated. */
    private static List<FileInfo> infos(byte[] out, String dir, boolean namesAreChildren) {
        List<FileInfo> result = new ArrayList<>();
        String[] fields = new String(out, StandardCharsets.UTF_8).split("\0", -1);
        for (int i = 0; i + 2 < fields.length; i += 3) {
            String name = fields[i + 1];
            String path = namesAreChildren ? child(dir, name) : dir;
            result.add(info(fields[i], path, fields[i + 2]));
        }
        return result;
    }

    /** One stat line: {@code rawModeHex size mtimeSeconds date time.fraction zone}. */
    static FileInfo info(String statLine, String path, String linkTarget) {
        String[] f = statLine.trim().split("\\s+");
        int raw = Integer.parseInt(f[0], 16);
        FileInfo.Type type = switch (raw & 0170000) {
            case 0040000 -> FileInfo.Type.DIRECTORY;
            case 0100000 -> FileInfo.Type.FILE;
            case 0120000 -> FileInfo.Type.SYMLINK;
            default -> FileInfo.Type.OTHER;
        };
        long seconds = Long.parseLong(f[2]);
        int nanos = 0;
        if (f.length > 4) {
            int dot = f[4].indexOf('.');
            if (dot >= 0) {
                String frac = (f[4].substring(dot + 1) + "000000000").substring(0, 9);
                nanos = Integer.parseInt(frac);
            }
        }
        return new FileInfo(
                path,
                name(path),
                type,
                Long.parseLong(f[1]),
                raw & 0777,
                Instant.ofEpochSecond(seconds, nanos),
                type == FileInfo.Type.SYMLINK ? Optional.of(linkTarget) : Optional.empty());
    }

    // ---------------------------------------------------------------- reads

    /** A regular file the archive API can fetch: the path with every link followed, and its size. */
    private record Located(String path, long size) {}

    /** Finds the regular file a path names, following links, through the archive API's stat. */
    private Mono<Located> locate(String abs, String shown) {
        ContainerArchive archive = state.executor.archive();
        return archive.stat(abs)
                .switchIfEmpty(
                        Mono.error(() -> LocalFileIo.failure(shown, FileOperationException.Reason.NOT_FOUND, null)))
                .flatMap(s -> s.symlink()
                        ? archive.stat(s.linkTarget())
                                .switchIfEmpty(Mono.error(() ->
                                        LocalFileIo.failure(shown, FileOperationException.Reason.NOT_FOUND, null)))
                                .map(t -> Map.entry(s.linkTarget(), t))
                        : Mono.just(Map.entry(abs, s)))
                .flatMap(e -> {
                    if (e.getValue().directory()) {
                        return Mono.error(
                                LocalFileIo.failure(shown, FileOperationException.Reason.IS_A_DIRECTORY, null));
                    }
                    return Mono.just(new Located(e.getKey(), e.getValue().size()));
                })
                .onErrorMap(ContainerArchive.ArchiveException.class, e -> archiveFailure(shown, e));
    }

    private static FileOperationException archiveFailure(String shown, Throwable e) {
        if (e instanceof ContainerArchive.ArchiveException a) {
            String m = String.valueOf(a.getMessage());
            FileOperationException.Reason reason = switch (a.status) {
                case 404 -> FileOperationException.Reason.NOT_FOUND;
                case 403 -> FileOperationException.Reason.PERMISSION_DENIED;
                case 400 ->
                    m.contains("not a directory")
                            ? FileOperationException.Reason.NOT_FOUND // the parent is not a directory
                            : reasonOf(m);
                default -> reasonOf(m);
            };
            return LocalFileIo.failure(shown, reason, new IOException("HTTP " + a.status + ": " + m));
        }
        if (e instanceof TarStream.NotAFileException n) {
            return LocalFileIo.failure(
                    shown,
                    n.type == '5'
                            ? FileOperationException.Reason.IS_A_DIRECTORY
                            : FileOperationException.Reason.IO_ERROR,
                    n);
        }
        return LocalFileIo.failure(shown, FileOperationException.Reason.IO_ERROR, e);
    }

    private static boolean archiveError(Throwable e) {
        return e instanceof ContainerArchive.ArchiveException
                || e instanceof TarStream.NotAFileException
                || e instanceof TarStream.CorruptArchiveException;
    }

    /** Streams a file through {@code cat} (or {@code head -c limit}) in a helper exec. */
    private Flux<ByteBuffer> execRead(String abs, String shown, long limit) {
        List<String> args = limit < 0 ? List.of("read", abs) : List.of("read", abs, Long.toString(limit));
        return spawn(args, null).flatMapMany(p -> {
            StringBuilder err = new StringBuilder();
            return p.events()
                    .<ByteBuffer>handle((e, sink) -> {
                        if (e instanceof RawEvent.Chunk c) {
                            if (c.stream() == RawEvent.STDOUT) {
                                sink.next(ByteBuffer.wrap(c.bytes()));
                            } else {
                                appendErr(err, c.bytes());
                            }
                        } else if (e instanceof RawEvent.Exited x && (x.status() != 0 || x.signaled())) {
                            sink.error(failure(shown, x.signaled() ? -1 : x.status(), err.toString()));
                        }
                    })
                    .doOnCancel(p::kill);
        });
    }

    @Override
    public Flux<ByteBuffer> read(String path) {
        return resolve("path", path).zipWith(facts()).flatMapMany(t -> {
            String abs = t.getT1();
            if (!t.getT2().archiveSeesFiles()) {
                return execRead(abs, path, -1);
            }
            return locate(abs, path)
                    .flatMapMany(l -> state.executor.archive().read(l.path()))
                    .onErrorMap(DockerFiles::archiveError, e -> archiveFailure(path, e));
        });
    }

    @Override
    public Mono<byte[]> readAllBytes(String path, long maxBytes) {
        return resolve("path", path).zipWith(facts()).flatMap(t -> {
            String abs = t.getT1();
            Flux<ByteBuffer> content;
            if (t.getT2().archiveSeesFiles()) {
                content = locate(abs, path).flatMapMany(l -> {
                    if (l.size() > maxBytes) {
                        return Flux.error(tooLarge(path, l.size() + " bytes", maxBytes));
                    }
                    return state.executor.archive().read(l.path());
                });
            } else {
                // one byte more than the cap tells a file over it from one at it
                content = execRead(abs, path, maxBytes == Long.MAX_VALUE ? -1 : maxBytes + 1);
            }
            return content.onErrorMap(DockerFiles::archiveError, e -> archiveFailure(path, e))
                    .collect(ByteArrayOutputStream::new, (out, b) -> {
                        if (out.size() + (long) b.remaining() > maxBytes) {
                            throw tooLarge(path, "more than " + maxBytes + " bytes", maxBytes);
                        }
                        out.write(b.array(), b.arrayOffset() + b.position(), b.remaining());
                    })
                    .map(ByteArrayOutputStream::toByteArray);
        });
    }

    private static FileOperationException tooLarge(String path, String size, long max) {
        return new FileOperationException(
                path, FileOperationException.Reason.TOO_LARGE, path + ": " + size + " is over the cap of " + max, null);
    }

    @Override
    public Mono<Long> download(String path, Path local) {
        return Mono.defer(() -> {
            guard.run();
            Path target = local.toAbsolutePath();
            return resolve("path", path).zipWith(facts()).flatMap(t -> {
                String abs = t.getT1();
                if (!t.getT2().archiveSeesFiles()) {
                    return LocalFileIo.writeAtomically(target, target.toString(), execRead(abs, path, -1));
                }
                // the connection's own buffers go to the file, on a writing thread that takes them in batches
                Flux<ByteBuf> content = locate(abs, path)
                        .flatMapMany(l -> state.executor.archive().content(l.path()))
                        .onErrorMap(DockerFiles::archiveError, e -> archiveFailure(path, e));
                return HostBuffers.write(target, target.toString(), content, DOWNLOAD_PREFETCH);
            });
        });
    }

    // ---------------------------------------------------------------- writes

    @Override
    public Mono<FileInfo> write(String path, Publisher<ByteBuffer> content) {
        return resolve("path", path).flatMap(abs -> execWrite(abs, path, content));
    }

    @Override
    public Mono<FileInfo> write(String path, byte[] content) {
        byte[] copy = content.clone();
        return resolve("path", path).zipWith(facts()).flatMap(t -> {
            return t.getT2().archiveSeesFiles()
                    ? archiveWrite(t.getT1(), path, copy.length, Mono.fromSupplier(() -> Unpooled.wrappedBuffer(copy)))
                    : execWrite(t.getT1(), path, Mono.fromSupplier(() -> ByteBuffer.wrap(copy)));
        });
    }

    @Override
    public Mono<FileInfo> upload(Path local, String path) {
        return resolve("path", path)
                .zipWith(facts())
                .flatMap(t -> Mono.fromCallable(() -> {
                            if (!Files.isRegularFile(local)) {
                                throw LocalFileIo.failure(
                                        local.toString(), FileOperationException.Reason.NOT_FOUND, null);
                            }
                            try {
                                return Files.size(local);
                            } catch (IOException e) {
                                throw LocalFileIo.failure(local.toString(), e);
                            }
                        })
                        .subscribeOn(io)
                        .flatMap(size -> t.getT2().archiveSeesFiles()
                                // off-heap buffers the socket takes as they are
                                ? archiveWrite(
                                        t.getT1(), path, size, HostBuffers.read(local, local.toString(), UPLOAD_CHUNK))
                                : execWrite(t.getT1(), path, LocalFileIo.read(local, local.toString()))));
    }

    /** Puts the content under a temporary name beside the target through the archive API, then renames it. */
    private Mono<FileInfo> archiveWrite(String abs, String shown, long size, Publisher<ByteBuf> content) {
        String dir = parent(abs);
        String temp = tempName();
        String tempPath = child(dir, temp);
        return state.executor
                .archive()
                .write(dir, temp, size, 0644, content)
                .onErrorMap(ContainerArchive.ArchiveException.class, e -> archiveFailure(shown, e))
                .onErrorResume(e -> discard(tempPath).then(Mono.error(e)))
                .doOnCancel(() -> discard(tempPath).subscribe())
                .then(commit(abs, tempPath, shown));
    }

    /**
     * Streams the content into {@code cat > temp} through an exec's stdin, then renames it into place. The data
     * plane ends stdin when the content fails, so the failure is noted here and the temporary file dropped instead
     * of renamed.
     */
    private Mono<FileInfo> execWrite(String abs, String shown, Publisher<ByteBuffer> content) {
        String tempPath = child(parent(abs), tempName());
        AtomicReference<Throwable> failed = new AtomicReference<>();
        Flux<ByteBuffer> watched = Flux.from(content).doOnError(failed::set);
        return helper(List.of("write", parent(abs), abs, tempPath), watched)
                .flatMap(o -> {
                    if (failed.get() != null) {
                        return discard(tempPath).then(Mono.error(failed.get()));
                    }
                    if (!o.ok()) {
                        return discard(tempPath).then(Mono.error(failure(shown, o)));
                    }
                    return commit(abs, tempPath, shown);
                })
                .doOnCancel(() -> discard(tempPath).subscribe());
    }

    private Mono<FileInfo> commit(String abs, String tempPath, String shown) {
        return expect(List.of("commit", abs, tempPath), shown)
                .map(o -> infos(o.stdout(), abs, false).get(0));
    }

    private Mono<Void> discard(String tempPath) {
        return helper(List.of("discard", tempPath), null)
                .onErrorResume(e -> {
                    LOG.debug("could not remove the temporary file {}: {}", tempPath, e.toString());
                    return Mono.empty();
                })
                .then();
    }

    // ---------------------------------------------------------------- metadata

    @Override
    public Flux<FileInfo> list(String path) {
        return resolve("path", path)
                .flatMap(abs -> expect(List.of("list", abs), path).map(o -> infos(o.stdout(), abs, true)))
                .flatMapIterable(list -> {
                    List<FileInfo> sorted = new ArrayList<>(list);
                    sorted.sort(Comparator.comparing(FileInfo::name));
                    return sorted;
                });
    }

    @Override
    public Mono<FileInfo> stat(String path) {
        return resolve("path", path)
                .flatMap(abs -> expect(List.of("stat", abs), path)
                        .map(o -> infos(o.stdout(), abs, false).get(0)));
    }

    @Override
    public Mono<Void> mkdir(String path) {
        return resolve("path", path)
                .flatMap(abs -> expect(List.of("mkdir", abs), path))
                .then();
    }

    @Override
    public Mono<Void> remove(String path) {
        return remove(path, false);
    }

    @Override
    public Mono<Void> remove(String path, boolean recursive) {
        return resolve("path", path)
                .zipWith(facts())
                .flatMap(t -> {
                    String abs = t.getT1();
                    if (abs.equals("/") || abs.equals(absolute("/", t.getT2().workdir()))) {
                        return Mono.error(new InvalidArgumentException(
                                "path", "path '" + path + "' is the session root, which cannot be removed"));
                    }
                    return expect(List.of("remove", abs, recursive ? "1" : "0"), path);
                })
                .then();
    }

    @Override
    public Mono<Void> move(String from, String to) {
        return resolve("from", from)
                .zipWith(resolve("to", to))
                .flatMap(t -> helper(List.of("move", t.getT1(), t.getT2()), null))
                .flatMap(o -> {
                    if (o.ok()) {
                        return Mono.empty();
                    }
                    // a missing source names it; an existing target, or anything else the rename hit, names the target
                    return Mono.error(failure(o.code() == NOT_FOUND && !o.signaled() ? from : to, o));
                })
                .then();
    }

    // ---------------------------------------------------------------- watch

    @Override
    public Flux<FileEvent> watch(String path) {
        return resolve("path", path)
                .flatMapMany(abs -> spawn(List.of("watch", abs, Double.toString(WATCH_INTERVAL_MS / 1000.0)), null)
                        .flatMapMany(p -> {
                            Snapshots snapshots = new Snapshots(abs);
                            StringBuilder err = new StringBuilder();
                            return p.events()
                                    .<List<FileEvent>>handle((e, sink) -> {
                                        if (e instanceof RawEvent.Chunk c) {
                                            if (c.stream() == RawEvent.STDOUT) {
                                                List<FileEvent> events = snapshots.feed(c.bytes());
                                                if (!events.isEmpty()) {
                                                    sink.next(events);
                                                }
                                            } else {
                                                appendErr(err, c.bytes());
                                            }
                                        } else if (e instanceof RawEvent.Exited x) {
                                            sink.error(
                                                    x.status() != 0 && !x.signaled()
                                                            ? failure(path, x.status(), err.toString())
                                                            : LocalFileIo.failure(
                                                                    path,
                                                                    FileOperationException.Reason.IO_ERROR,
                                                                    new IOException("the watch helper ended: " + err)));
                                        }
                                    })
                                    .concatMapIterable(list -> list, 1)
                                    .doOnCancel(p::kill);
                        }))
                .publishOn(Schedulers.parallel(), 32);
    }

    /**
     * The watch helper's output: snapshots of the directory as lines {@code meta|name}, each snapshot ending with an
     * empty line. The first snapshot is the baseline; each next one is diffed against the one before.
     */
    static final class Snapshots {
        private final String dir;
        private final ByteArrayOutputStream partial = new ByteArrayOutputStream();
        private Map<String, String> current = new LinkedHashMap<>();
        private Map<String, String> previous;

        Snapshots(String dir) {
            this.dir = dir;
        }

        List<FileEvent> feed(byte[] bytes) {
            List<FileEvent> events = new ArrayList<>();
            int start = 0;
            for (int i = 0; i < bytes.length; i++) {
                if (bytes[i] == '\n') {
                    partial.write(bytes, start, i - start);
                    line(partial.toString(StandardCharsets.UTF_8), events);
                    partial.reset();
                    start = i + 1;
                }
            }
            partial.write(bytes, start, bytes.length - start);
            return events;
        }

        private void line(String line, List<FileEvent> events) {
            if (!line.isEmpty()) {
                int bar = line.indexOf('|');
                if (bar > 0) {
                    current.put(line.substring(bar + 1), line.substring(0, bar));
                }
                return;
            }
            if (previous != null) {
                diff(previous, current, events);
            }
            previous = current;
            current = new HashMap<>();
        }

        private void diff(Map<String, String> before, Map<String, String> after, List<FileEvent> events) {
            List<FileEvent> round = new ArrayList<>();
            for (Map.Entry<String, String> e : before.entrySet()) {
                if (!after.containsKey(e.getKey())) {
                    round.add(new FileEvent(FileEvent.Kind.DELETED, child(dir, e.getKey())));
                }
            }
            for (Map.Entry<String, String> e : after.entrySet()) {
                String was = before.get(e.getKey());
                if (was == null) {
                    round.add(new FileEvent(FileEvent.Kind.CREATED, child(dir, e.getKey())));
                } else if (!was.equals(e.getValue())) {
                    // a new inode under the same name was replaced: deleted and created again, seen as a change
                    round.add(new FileEvent(FileEvent.Kind.MODIFIED, child(dir, e.getKey())));
                }
            }
            if (round.size() > MAX_EVENTS_PER_ROUND) {
                events.add(new FileEvent(FileEvent.Kind.OVERFLOW, dir));
            } else {
                events.addAll(round);
            }
        }
    }
}
