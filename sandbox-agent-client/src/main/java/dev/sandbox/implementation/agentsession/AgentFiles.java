package dev.sandbox.implementation.agentsession;

import dev.sandbox.FileEvent;
import dev.sandbox.FileInfo;
import dev.sandbox.FileOperationException;
import dev.sandbox.InvalidArgumentException;
import dev.sandbox.SandboxFiles;
import dev.sandbox.WriteOptions;
import dev.sandbox.implementation.agent.AgentConnection;
import dev.sandbox.implementation.agent.AgentErrnoException;
import dev.sandbox.implementation.agent.AgentFileInfo;
import dev.sandbox.implementation.agent.AgentFileOps;
import dev.sandbox.implementation.agent.AgentWatchEvent;
import dev.sandbox.implementation.files.FileArguments;
import dev.sandbox.implementation.files.IdNames;
import dev.sandbox.implementation.files.LocalFileIo;
import dev.sandbox.implementation.files.Removal;
import dev.sandbox.implementation.files.SandboxTree;
import dev.sandbox.implementation.files.TreeTarget;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * The files of an agent-backed session, through its agent: every operation is frames on the session's agent connection (no
 * daemon exec, no archive request), with the local provider's semantics: relative paths resolve against the
 * session's workdir, writes go to a hidden temporary file renamed into place by the agent, failures are {@link
 * FileOperationException}s naming the path as the caller gave it, and empty paths or NUL bytes are refused with an
 * {@link InvalidArgumentException} naming the argument. The agent acts with the sandbox user's rights, so
 * permissions apply to file operations as to commands. Watches use the agent's inotify: no polling.
 */
final class AgentFiles implements SandboxFiles, TreeTarget {
    /** Default permission bits of a new file. */
    private static final int FILE_MODE = 0644;

    /** Default permission bits of a new directory. */
    private static final int DIR_MODE = 0755;

    /** Writes of {@link #writeAll} in flight at once on the connection. */
    private static final int WRITE_ALL_AT_ONCE = 8;

    /** Bytes read at most of the sandbox's {@code /etc/passwd} and {@code /etc/group}. */
    private static final int NAMES_MAX_BYTES = 256 * 1024;

    /** How long a read of those files may take before the names are left out. */
    private static final Duration NAMES_TIMEOUT = Duration.ofSeconds(5);

    private final SessionAgent agent;
    private final Runnable guard;

    /**
     * The sandbox's user and group names, read with the operation that needs them (in parallel, on the same
     * connection) and kept a second: the agent reports numeric ids only.
     */
    private final Mono<Names> names;

    AgentFiles(SessionAgent agent, Runnable guard) {
        this.agent = agent;
        this.guard = guard;
        this.names =
                Mono.zip(table("/etc/passwd"), table("/etc/group"), Names::new).cache(Duration.ofSeconds(1));
    }

    /** Names by id of the sandbox's users and groups; empty where its files are missing or unreadable. */
    private record Names(Map<Long, String> users, Map<Long, String> groups) {}

    private Mono<Map<Long, String>> table(String file) {
        return agent.untilTerminated(agent.connection()
                        .flatMapMany(c -> c.files().read(file, 0, NAMES_MAX_BYTES))
                        .collect(java.io.ByteArrayOutputStream::new, (out, b) -> {
                            byte[] chunk = new byte[b.remaining()];
                            b.get(chunk);
                            out.writeBytes(chunk);
                        }))
                .map(out -> IdNames.parse(out.toString(StandardCharsets.UTF_8)))
                .timeout(NAMES_TIMEOUT, Mono.just(Map.of()))
                .onErrorReturn(Map.of());
    }

    private static FileInfo named(AgentFileInfo info, Names names) {
        FileInfo f = info.toFileInfo();
        return new FileInfo(
                f.path(),
                f.name(),
                f.type(),
                f.size(),
                f.mode(),
                f.modifiedAt(),
                f.symlinkTarget(),
                f.uid(),
                f.gid(),
                Optional.ofNullable(names.users().get(f.uid())),
                Optional.ofNullable(names.groups().get(f.gid())));
    }

    // ---------------------------------------------------------------- paths

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

    private Mono<String> resolve(String field, String path) {
        return Mono.defer(() -> {
            guard.run();
            validate(field, path);
            if (path.startsWith("/")) {
                return Mono.just(absolute("/", path));
            }
            return agent.facts().map(f -> absolute(f.workdir(), path));
        });
    }

    /** Runs one operation on the agent connection, with the sandbox's end and the agent's errors explained. */
    private <T> Mono<T> one(String shown, Function<AgentFileOps, Mono<T>> op) {
        return agent.untilTerminated(
                        agent.connection().map(AgentConnection::files).flatMap(op))
                .onErrorMap(e -> mapped(shown, e));
    }

    private <T> Flux<T> many(String shown, Function<AgentFileOps, Flux<T>> op) {
        return agent.untilTerminated(
                        agent.connection().map(AgentConnection::files).flatMapMany(op), x -> false)
                .onErrorMap(e -> mapped(shown, e));
    }

    private static Throwable mapped(String shown, Throwable e) {
        if (e instanceof AgentErrnoException a && a.code() < 1000) {
            FileOperationException.Reason reason = a.code() == 30 // EROFS
                    ? FileOperationException.Reason.PERMISSION_DENIED
                    : a.reason();
            return LocalFileIo.failure(shown, reason, new IOException(a.agentMessage()));
        }
        return e;
    }

    // ---------------------------------------------------------------- reads

    @Override
    public Flux<ByteBuffer> read(String path) {
        return resolve("path", path).flatMapMany(abs -> many(path, c -> c.read(abs, 0, -1L)));
    }

    @Override
    public Flux<ByteBuffer> read(String path, long offset, long length) {
        return Mono.fromRunnable(() -> FileArguments.checkRange(offset, length))
                .then(resolve("path", path))
                .flatMapMany(abs -> many(path, c -> c.read(abs, offset, length == Long.MAX_VALUE ? -1L : length)));
    }

    @Override
    public Mono<byte[]> readAllBytes(String path, long maxBytes) {
        if (maxBytes < 0) {
            return Mono.error(
                    new InvalidArgumentException("maxBytes", "maxBytes must not be negative, got " + maxBytes));
        }
        // one byte more than the cap tells a file over it from one at it
        long ask = maxBytes == Long.MAX_VALUE ? -1L : maxBytes + 1;
        return resolve("path", path)
                .flatMap(abs -> many(path, c -> c.read(abs, 0, ask))
                        .collect(java.io.ByteArrayOutputStream::new, (out, b) -> {
                            if (out.size() + (long) b.remaining() > maxBytes) {
                                throw tooLarge(path, maxBytes);
                            }
                            byte[] chunk = new byte[b.remaining()];
                            b.get(chunk);
                            out.writeBytes(chunk);
                        })
                        .map(java.io.ByteArrayOutputStream::toByteArray));
    }

    private static FileOperationException tooLarge(String path, long max) {
        return new FileOperationException(
                path,
                FileOperationException.Reason.TOO_LARGE,
                path + ": more than " + max + " bytes is over the cap of " + max,
                null);
    }

    @Override
    public Mono<Long> download(String path, Path local) {
        return SandboxTree.download(this, path, local, null);
    }

    // ---------------------------------------------------------------- writes

    @Override
    public Mono<FileInfo> write(String path, Publisher<ByteBuffer> content, WriteOptions options) {
        boolean parents = options.createParents();
        return resolve("path", path)
                .flatMap(abs -> one(path, c -> c.write(abs, FILE_MODE, parents, content)))
                .zipWith(names, AgentFiles::named);
    }

    /**
     * Writes the files as pipelined {@code WRITE} streams on the agent connection, up to {@value #WRITE_ALL_AT_ONCE} at
     * a time, and reports the first failure in the map's order.
     */
    @Override
    public Mono<List<FileInfo>> writeAll(Map<String, byte[]> files) {
        List<Map.Entry<String, byte[]>> entries = new ArrayList<>();
        for (Map.Entry<String, byte[]> e : files.entrySet()) {
            entries.add(Map.entry(e.getKey(), e.getValue().clone()));
        }
        return Flux.fromIterable(entries)
                .flatMapSequential(
                        e -> write(e.getKey(), e.getValue())
                                .<Object>map(info -> info)
                                .onErrorResume(x -> Mono.just(new Failed(x))),
                        WRITE_ALL_AT_ONCE,
                        1)
                .collectList()
                .flatMap(results -> {
                    List<FileInfo> out = new ArrayList<>(results.size());
                    for (Object r : results) {
                        if (r instanceof Failed f) {
                            return Mono.error(f.error());
                        }
                        out.add((FileInfo) r);
                    }
                    return Mono.just(out);
                });
    }

    private record Failed(Throwable error) {}

    @Override
    public Mono<FileInfo> upload(Path local, String path) {
        return SandboxTree.upload(this, local, path, null);
    }

    @Override
    public Mono<Void> symlink(String path, String target) {
        return resolve("path", path).flatMap(abs -> one(path, c -> c.symlink(abs, target)));
    }

    @Override
    public Mono<Void> chmod(String path, int mode) {
        return resolve("path", path).flatMap(abs -> one(path, c -> c.chmod(abs, mode & 07777)));
    }

    // ---------------------------------------------------------------- metadata

    @Override
    public Flux<FileInfo> list(String path, int depth) {
        return Mono.fromSupplier(() -> FileArguments.depth(depth))
                .flatMap(d -> resolve("path", path)
                        .flatMap(abs -> Flux.defer(() -> {
                                    FileArguments.ListBound bound = new FileArguments.ListBound(path);
                                    return many(path, c -> c.list(abs, d)).<AgentFileInfo>handle((info, sink) -> {
                                        try {
                                            bound.add(info.path());
                                        } catch (FileOperationException e) {
                                            sink.error(e);
                                            return;
                                        }
                                        sink.next(info);
                                    });
                                })
                                .collectList()
                                .zipWith(names)))
                .flatMapIterable(t -> {
                    List<FileInfo> sorted = new ArrayList<>(t.getT1().size());
                    for (AgentFileInfo info : t.getT1()) {
                        sorted.add(named(info, t.getT2()));
                    }
                    sorted.sort(FileArguments.PRE_ORDER);
                    return sorted;
                });
    }

    @Override
    public Mono<FileInfo> stat(String path) {
        return resolve("path", path).flatMap(abs -> one(path, c -> c.stat(abs))).zipWith(names, AgentFiles::named);
    }

    @Override
    public Mono<Boolean> mkdir(String path) {
        return resolve("path", path).flatMap(abs -> one(path, c -> created(c, abs)));
    }

    /**
     * Whether this call's own {@code mkdir(2)} made the directory, found out without a new agent operation and
     * without a race: a plain {@code mkdir} of the last component first (made: {@code true}); on {@code EEXIST}, the
     * agent's {@code mkdir -p}, which succeeds only on a directory or a link to one ({@code false}) and fails with
     * {@code EEXIST} on anything else; on {@code ENOENT}, the parents with {@code mkdir -p}, then the plain
     * {@code mkdir} again (another caller that made it meanwhile gets it {@code false} here).
     */
    private static Mono<Boolean> created(AgentFileOps c, String abs) {
        String parent = abs.lastIndexOf('/') <= 0 ? "/" : abs.substring(0, abs.lastIndexOf('/'));
        Mono<Boolean> existed = c.mkdir(abs, DIR_MODE, true).thenReturn(false);
        Mono<Boolean> plain =
                c.mkdir(abs, DIR_MODE, false).thenReturn(true).onErrorResume(e -> errno(e, 17), e -> existed); // EEXIST
        return plain.onErrorResume(
                e -> errno(e, 2) && !abs.equals("/"), // ENOENT: a parent is missing
                e -> c.mkdir(parent, DIR_MODE, true)
                        .then(c.mkdir(abs, DIR_MODE, false).thenReturn(true))
                        .onErrorResume(x -> errno(x, 17), x -> existed));
    }

    private static boolean errno(Throwable e, int code) {
        return e instanceof AgentErrnoException a && a.code() == code;
    }

    @Override
    public Mono<Void> remove(String path) {
        return remove(path, false);
    }

    @Override
    public Mono<Void> remove(String path, boolean recursive) {
        return resolve("path", path).zipWith(agent.facts()).flatMap(t -> {
            String abs = t.getT1();
            if (abs.equals("/") || abs.equals(absolute("/", t.getT2().workdir()))) {
                return Mono.error(new InvalidArgumentException(
                        "path", "path '" + path + "' is the session root, which cannot be removed"));
            }
            return Removal.idempotent(one(path, c -> c.remove(abs, recursive)));
        });
    }

    @Override
    public Mono<Void> move(String from, String to) {
        return resolve("from", from).zipWith(resolve("to", to)).flatMap(t -> {
            String src = t.getT1();
            String dst = t.getT2();
            // rename(2) replaces a target; a move here never does (as on every provider)
            return one(to, c -> c.stat(dst))
                    .flatMap(exists -> Mono.<Void>error(
                            LocalFileIo.failure(to, FileOperationException.Reason.ALREADY_EXISTS, null)))
                    .onErrorResume(
                            e -> e instanceof FileOperationException f
                                    && f.reason() == FileOperationException.Reason.NOT_FOUND
                                    && f.path().equals(to),
                            e -> one(
                                    to,
                                    c -> c.move(src, dst)
                                            .onErrorMap(
                                                    x -> x instanceof AgentErrnoException a && a.code() == 2,
                                                    x -> LocalFileIo.failure(
                                                            from,
                                                            FileOperationException.Reason.NOT_FOUND,
                                                            new IOException(
                                                                    ((AgentErrnoException) x).agentMessage())))));
        });
    }

    // ---------------------------------------------------------------- watch

    @Override
    public Flux<FileEvent> watch(String path, boolean recursive) {
        // the agent sends READY once every inotify watch is in place, then the changes (temporary files hidden)
        return resolve("path", path)
                .flatMapMany(abs -> many(path, c -> c.watch(abs, recursive)).map(AgentWatchEvent::toFileEvent));
    }
}
