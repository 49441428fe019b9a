package dev.sandbox.implementation.wire;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.databind.JsonNode;
import dev.sandbox.BackendException;
import dev.sandbox.ExecEvent;
import dev.sandbox.ExecResult;
import dev.sandbox.FileInfo;
import dev.sandbox.InvalidArgumentException;
import dev.sandbox.ProcessInfo;
import dev.sandbox.SessionEndReason;
import dev.sandbox.SessionInfo;
import dev.sandbox.SessionStatus;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The answers that describe what the server holds: sessions, their status, files, background processes, PTYs, and how
 * a command ended (its {@code run} result or its exit). Each is a record whose components are the JSON fields, bound
 * by {@link WireJson}: the server writes {@code of(...)}, the client reads the answer back with {@link #read} and
 * turns it into the SDK type. An answer that does not fit its record fails with a {@link BackendException} naming the
 * field and the value. Instants travel as ISO-8601 strings; a field the SDK type leaves {@code null} is written as
 * {@code null} unless its record says it is left out.
 */
public final class ResourceBodies {
    private ResourceBodies() {}

    /**
     * Reads an answer into its record.
     *
     * @param json the answer
     * @param type the record
     * @param <T> its type
     * @return the record
     * @throws BackendException naming the field and the value that do not fit
     */
    public static <T extends Record> T read(JsonNode json, Class<T> type) {
        try {
            return WireJson.bind(json, type);
        } catch (InvalidArgumentException e) {
            throw new BackendException(
                    "the sandbox server sent a " + type.getSimpleName() + " that cannot be read: " + e.getMessage(), e);
        }
    }

    private static <T> T required(T value, String field, Class<?> type) {
        if (value == null) {
            throw new BackendException("the sandbox server sent a " + type.getSimpleName() + " without " + field, null);
        }
        return value;
    }

    private static String orEmpty(String s) {
        return s == null ? "" : s;
    }

    /**
     * The server's own status, answered by {@code GET /v1/ping}.
     *
     * @param status {@code ok}, or {@code stopping} while it shuts down
     * @param version the SDK version on the server
     * @param uptimeMs how long the server has run
     * @param lastActivity its last request other than a ping
     * @param execsRunning commands running through it
     * @param ptysRunning PTYs started through it and still running
     * @param ptysAttached open PTY sockets
     * @param sessions live sessions it created
     * @param provider its provider's name
     * @param channelsOpen open command channels ({@code /v1/channel} sockets)
     * @param channelCommands commands started over command channels since the server started
     */
    public record ServerStatusBody(
            String status,
            String version,
            long uptimeMs,
            Instant lastActivity,
            int execsRunning,
            int ptysRunning,
            int ptysAttached,
            int sessions,
            String provider,
            int channelsOpen,
            long channelCommands) {}

    /**
     * A session handle ({@code {"id","provider","labels"}}, answered by create and attach) or summary (with {@code
     * createdAt}, in lists).
     *
     * @param id the session's id
     * @param provider the server's provider name
     * @param labels the session's labels
     * @param createdAt when it was created; left out of a handle
     * @param leaseMs in a handle of a leased session (one created through the server without a lifetime): how long
     *     the server keeps it without a renewal ({@code POST /v1/leases}); absent otherwise
     * @param name the session's name; absent for an unnamed session
     */
    public record SessionInfoBody(
            String id,
            String provider,
            Map<String, String> labels,
            @JsonInclude(JsonInclude.Include.NON_NULL) Instant createdAt,
            @JsonInclude(JsonInclude.Include.NON_NULL) Long leaseMs,
            @JsonInclude(JsonInclude.Include.NON_NULL) String name) {

        /**
         * A handle.
         *
         * @param id the session's id
         * @param provider the provider's name
         * @param labels its labels
         * @return the body
         */
        public static SessionInfoBody handle(String id, String provider, Map<String, String> labels) {
            return new SessionInfoBody(id, provider, labels, null, null, null);
        }

        /**
         * A handle of a leased session.
         *
         * @param id the session's id
         * @param provider the provider's name
         * @param labels its labels
         * @param leaseMs how long the lease lasts without a renewal, or {@code null} when the session is not leased
         * @return the body
         */
        public static SessionInfoBody leased(String id, String provider, Map<String, String> labels, Long leaseMs) {
            return new SessionInfoBody(id, provider, labels, null, leaseMs, null);
        }

        /**
         * A handle of a leased session that may have a name.
         *
         * @param id the session's id
         * @param provider the provider's name
         * @param labels its labels
         * @param leaseMs how long the lease lasts without a renewal, or {@code null} when the session is not leased
         * @param name the session's name, or {@code null} for none
         * @return the body
         */
        public static SessionInfoBody leased(
                String id, String provider, Map<String, String> labels, Long leaseMs, String name) {
            return new SessionInfoBody(id, provider, labels, null, leaseMs, name);
        }

        /**
         * A summary.
         *
         * @param s the summary
         * @return the body
         */
        public static SessionInfoBody of(SessionInfo s) {
            return new SessionInfoBody(
                    s.id(),
                    s.provider(),
                    s.labels(),
                    s.createdAt(),
                    null,
                    s.name().orElse(null));
        }

        /**
         * The summary, reported under the client's provider name.
         *
         * @param providerName the name to report, such as {@code remote}
         * @return the summary
         */
        public SessionInfo info(String providerName) {
            return new SessionInfo(
                    orEmpty(id),
                    providerName,
                    labels(),
                    createdAt == null ? Instant.EPOCH : createdAt,
                    java.util.Optional.ofNullable(name));
        }

        /**
         * The labels.
         *
         * @return the labels, empty when absent
         */
        @Override
        public Map<String, String> labels() {
            return WireJson.noNulls("labels", labels);
        }
    }

    /**
     * The sessions of {@code GET /v1/sessions}: {@code {"sessions":[...]}}.
     *
     * @param sessions their summaries
     */
    public record SessionList(List<SessionInfoBody> sessions) {
        /**
         * Encodes summaries.
         *
         * @param list the summaries
         * @return the body
         */
        public static SessionList of(List<SessionInfo> list) {
            return new SessionList(list.stream().map(SessionInfoBody::of).toList());
        }

        /**
         * The summaries.
         *
         * @return the summaries, empty when absent
         */
        @Override
        public List<SessionInfoBody> sessions() {
            return sessions == null ? List.of() : sessions;
        }
    }

    /**
     * A session's status: every {@link SessionStatus} field, {@code null}s written out.
     *
     * @param sessionId the session
     * @param status {@code running} or why not
     * @param version the SDK version on the server
     * @param uptimeMs how long the session has lived
     * @param lastActivity its last activity
     * @param execsRunning its running commands
     * @param ptysRunning its running PTYs
     * @param ptysAttached clients attached to its PTYs
     * @param provider the server's provider name
     * @param processLauncher how its processes start
     * @param expiresAt when its lifetime ends, or {@code null}
     * @param idleTimeoutMs its idle timeout, or {@code null}
     * @param endReason why it ended, or {@code null}
     */
    public record SessionStatusBody(
            String sessionId,
            String status,
            String version,
            long uptimeMs,
            Instant lastActivity,
            int execsRunning,
            int ptysRunning,
            int ptysAttached,
            String provider,
            String processLauncher,
            Instant expiresAt,
            Long idleTimeoutMs,
            SessionEndReason endReason) {

        /**
         * Encodes a status.
         *
         * @param s the status
         * @return the body
         */
        public static SessionStatusBody of(SessionStatus s) {
            return new SessionStatusBody(
                    s.sessionId(),
                    s.status(),
                    s.version(),
                    s.uptimeMs(),
                    s.lastActivity(),
                    s.execsRunning(),
                    s.ptysRunning(),
                    s.ptysAttached(),
                    s.provider(),
                    s.processLauncher(),
                    s.expiresAt(),
                    WireJson.millis(s.idleTimeout()),
                    s.endReason());
        }

        /**
         * The status, reported under the client's provider name.
         *
         * @param providerName the name to report, such as {@code remote}
         * @return the status
         */
        public SessionStatus status(String providerName) {
            return new SessionStatus(
                    orEmpty(sessionId),
                    orEmpty(status),
                    orEmpty(version),
                    uptimeMs,
                    required(lastActivity, "lastActivity", SessionStatusBody.class),
                    execsRunning,
                    ptysRunning,
                    ptysAttached,
                    providerName,
                    orEmpty(processLauncher),
                    expiresAt,
                    idleTimeoutMs == null ? null : Duration.ofMillis(idleTimeoutMs),
                    endReason);
        }
    }

    /**
     * A file's description: {@code {"path","name","type","size","mode","modifiedAt","symlinkTarget"?,"uid"?,"gid"?,
     * "owner"?,"group"?}}.
     *
     * @param path its absolute path in the sandbox
     * @param name its last path element
     * @param type what kind of file it is
     * @param size its size in bytes
     * @param mode its permission bits, setuid, setgid and sticky included
     * @param modifiedAt its last modification
     * @param symlinkTarget a symbolic link's target; left out otherwise
     * @param uid its owner's user id; left out when unknown
     * @param gid its group id; left out when unknown
     * @param owner its owner's name; left out when unknown
     * @param group its group's name; left out when unknown
     */
    public record FileInfoBody(
            String path,
            String name,
            FileInfo.Type type,
            long size,
            int mode,
            Instant modifiedAt,
            @JsonInclude(JsonInclude.Include.NON_NULL) String symlinkTarget,
            @JsonInclude(JsonInclude.Include.NON_NULL) Long uid,
            @JsonInclude(JsonInclude.Include.NON_NULL) Long gid,
            @JsonInclude(JsonInclude.Include.NON_NULL) String owner,
            @JsonInclude(JsonInclude.Include.NON_NULL) String group) {

        /**
         * Encodes a file description.
         *
         * @param f the description
         * @return the body
         */
        public static FileInfoBody of(FileInfo f) {
            return new FileInfoBody(
                    f.path(),
                    f.name(),
                    f.type(),
                    f.size(),
                    f.mode(),
                    f.modifiedAt(),
                    f.symlinkTarget().orElse(null),
                    f.uid() < 0 ? null : f.uid(),
                    f.gid() < 0 ? null : f.gid(),
                    f.owner().orElse(null),
                    f.group().orElse(null));
        }

        /**
         * The file description.
         *
         * @return the description
         */
        public FileInfo info() {
            return new FileInfo(
                    orEmpty(path),
                    orEmpty(name),
                    required(type, "type", FileInfoBody.class),
                    size,
                    mode,
                    required(modifiedAt, "modifiedAt", FileInfoBody.class),
                    Optional.ofNullable(symlinkTarget),
                    uid == null || uid < 0 ? -1 : uid,
                    gid == null || gid < 0 ? -1 : gid,
                    Optional.ofNullable(owner),
                    Optional.ofNullable(group));
        }
    }

    /**
     * A directory's entries, as {@code files/list} answers them: {@code {"entries":[...]}}.
     *
     * @param entries their descriptions
     */
    public record FileList(List<FileInfoBody> entries) {
        /**
         * Encodes descriptions.
         *
         * @param list the descriptions
         * @return the body
         */
        public static FileList of(List<FileInfo> list) {
            return new FileList(list.stream().map(FileInfoBody::of).toList());
        }

        /**
         * The descriptions.
         *
         * @return the descriptions, empty when absent
         */
        @Override
        public List<FileInfoBody> entries() {
            return entries == null ? List.of() : entries;
        }
    }

    /**
     * A background process's summary: {@code {"id","argv","pid","startedAt","running","exitCode"}}, {@code exitCode}
     * {@code null} while it runs.
     *
     * @param id its id within the session
     * @param argv its command
     * @param pid its pid, -1 when unknown (and when absent)
     * @param startedAt when it started
     * @param running whether it runs
     * @param exitCode its exit code, or {@code null}
     */
    public record ProcessInfoBody(
            String id, List<String> argv, Long pid, Instant startedAt, boolean running, Integer exitCode) {

        /**
         * Encodes a summary.
         *
         * @param p the summary
         * @return the body
         */
        public static ProcessInfoBody of(ProcessInfo p) {
            return new ProcessInfoBody(p.id(), p.argv(), p.pid(), p.startedAt(), p.running(), p.exitCode());
        }

        /**
         * The summary.
         *
         * @return the summary
         */
        public ProcessInfo info() {
            return new ProcessInfo(
                    orEmpty(id),
                    argv == null ? List.of() : WireJson.noNulls("argv", argv),
                    pid == null ? -1 : pid,
                    required(startedAt, "startedAt", ProcessInfoBody.class),
                    running,
                    exitCode);
        }
    }

    /**
     * The processes of {@code GET .../processes}: {@code {"processes":[...]}}.
     *
     * @param processes their summaries
     */
    public record ProcessList(List<ProcessInfoBody> processes) {
        /**
         * Encodes summaries.
         *
         * @param list the summaries
         * @return the body
         */
        public static ProcessList of(List<ProcessInfo> list) {
            return new ProcessList(list.stream().map(ProcessInfoBody::of).toList());
        }

        /**
         * The summaries.
         *
         * @return the summaries, empty when absent
         */
        @Override
        public List<ProcessInfoBody> processes() {
            return processes == null ? List.of() : processes;
        }
    }

    /**
     * What the server says of a PTY: {@code {"id","pid","running","exitCode"?}}, {@code exitCode} left out while it
     * runs.
     *
     * @param id its id
     * @param pid its pid, -1 when unknown (and when absent)
     * @param running whether it runs
     * @param exitCode its exit code once it ended
     */
    public record PtyInfoBody(
            String id,
            Long pid,
            boolean running,
            @JsonInclude(JsonInclude.Include.NON_NULL) Integer exitCode) {

        /**
         * Encodes a PTY's state.
         *
         * @param id its id
         * @param pid its pid, or -1
         * @param exit its exit, or {@code null} while it runs
         * @return the body
         */
        public static PtyInfoBody of(String id, long pid, ExecEvent.Exit exit) {
            return new PtyInfoBody(id, pid, exit == null, exit == null ? null : exit.code());
        }

        /**
         * The pid.
         *
         * @return the pid, -1 when unknown
         */
        public long pidOrUnknown() {
            return pid == null ? -1 : pid;
        }
    }

    /**
     * The first frame of a PTY's WebSocket: {@code {"type":"hello","id":"pty-3","pid":4242}}.
     *
     * @param type {@code hello}
     * @param id the PTY's id
     * @param pid its pid, or -1
     */
    public record PtyHello(String type, String id, long pid) {
        /**
         * The greeting.
         *
         * @param id the PTY's id
         * @param pid its pid, or -1
         * @return the body
         */
        public static PtyHello of(String id, long pid) {
            return new PtyHello("hello", id, pid);
        }
    }

    /**
     * A command's {@code run} result (and a background process's {@code collect}). The server writes it through this
     * record; the client reads it with {@link #execResult(JsonNode)}, by hand, since every remote {@code run} waits
     * for it and binding the record took twice as long as reading the tree (see {@code benchmarks/README.md}).
     *
     * @param exitCode its exit code
     * @param stdout its stdout
     * @param stderr its stderr
     * @param stdoutTruncated whether stdout was cut at the cap
     * @param stderrTruncated whether stderr was
     * @param stdoutBytes the bytes written to stdout
     * @param stderrBytes the bytes written to stderr
     * @param termination how it ended
     * @param durationNanos how long it ran
     */
    public record ExecResultBody(
            int exitCode,
            String stdout,
            String stderr,
            boolean stdoutTruncated,
            boolean stderrTruncated,
            long stdoutBytes,
            long stderrBytes,
            ExecEvent.Termination termination,
            long durationNanos) {

        /**
         * Encodes a result.
         *
         * @param r the result
         * @return the body
         */
        public static ExecResultBody of(ExecResult r) {
            return new ExecResultBody(
                    r.exitCode(),
                    r.stdout(),
                    r.stderr(),
                    r.stdoutTruncated(),
                    r.stderrTruncated(),
                    r.stdoutBytes(),
                    r.stderrBytes(),
                    r.termination(),
                    r.duration().toNanos());
        }
    }

    /**
     * Reads a {@code run} or {@code collect} result by hand, on the hot path of every remote {@code run}: the fields of
     * {@link ExecResultBody}, without binding.
     *
     * @param n the answer
     * @return the result
     * @throws BackendException when its termination is missing or unknown
     */
    public static ExecResult execResult(JsonNode n) {
        ExecEvent.Termination termination;
        try {
            termination = ExecEvent.Termination.valueOf(n.path("termination").asText());
        } catch (IllegalArgumentException e) {
            throw new BackendException(
                    "the sandbox server sent a run result whose termination is " + n.get("termination"), e);
        }
        return new ExecResult(
                n.path("exitCode").asInt(),
                n.path("stdout").asText(),
                n.path("stderr").asText(),
                n.path("stdoutTruncated").asBoolean(),
                n.path("stderrTruncated").asBoolean(),
                n.path("stdoutBytes").asLong(),
                n.path("stderrBytes").asLong(),
                termination,
                Duration.ofNanos(n.path("durationNanos").asLong()));
    }

    /**
     * A command's exit, as answered by the exit routes and sent last in streams and PTY sockets: {@code
     * {"type":"exit","code":0,"termination":"EXITED","durationNanos":1834211}}.
     *
     * @param type {@code exit}
     * @param code the exit code
     * @param termination how it ended
     * @param durationNanos how long it ran
     */
    public record ExitBody(String type, int code, ExecEvent.Termination termination, long durationNanos) {
        /**
         * Encodes an exit.
         *
         * @param e the exit
         * @return the body
         */
        public static ExitBody of(ExecEvent.Exit e) {
            return new ExitBody("exit", e.code(), e.termination(), e.duration().toNanos());
        }

        /**
         * The exit.
         *
         * @return the exit
         */
        public ExecEvent.Exit exit() {
            return new ExecEvent.Exit(
                    code, required(termination, "termination", ExitBody.class), Duration.ofNanos(durationNanos));
        }
    }

    /**
     * The body of {@code POST /v1/leases}, sent by a client for the leased sessions it holds: {@code {"ids": [...]}}.
     *
     * @param ids the sessions whose leases to renew
     */
    public record LeaseRenewal(List<String> ids) {
        /**
         * The ids.
         *
         * @return the ids, empty when absent
         */
        @Override
        public List<String> ids() {
            return ids == null ? List.of() : WireJson.noNulls("ids", ids);
        }
    }

    /**
     * The answer to {@code POST /v1/leases}: {@code {"renewed": [...], "leaseMs": N}}; ids left out are not (or no
     * longer) leased sessions of the caller.
     *
     * @param renewed the sessions whose leases now run for another {@code leaseMs}
     * @param leaseMs the lease
     */
    public record LeaseAnswer(List<String> renewed, Long leaseMs) {}

    /**
     * The answer to {@code POST .../files/mkdir}: {@code {"created": true|false}}, whether that call made the directory
     * or found it there (a client that ignores answer bodies reads it as before, when the answer was a 204).
     *
     * @param created whether the directory was made by this call
     */
    public record MkdirAnswer(Boolean created) {
        /**
         * Whether it was made.
         *
         * @return the answer
         * @throws BackendException when the field is missing
         */
        @Override
        public Boolean created() {
            return required(created, "created", MkdirAnswer.class);
        }
    }
}
