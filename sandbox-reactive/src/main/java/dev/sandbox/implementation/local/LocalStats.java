package dev.sandbox.implementation.local;

import dev.sandbox.implementation.stats.StatsStream.Reading;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.HashMap;
import java.util.Map;

/**
 * The resource use of one local session, summed over the host's processes that carry its marker ({@value
 * SessionRecords#MARKER}{@code =<id>} in {@code /proc/<pid>/environ}, as {@link SessionRecords} finds them to kill
 * them): CPU time from {@code /proc/<pid>/stat} (the process's own and that of the children it reaped), resident
 * memory from {@code /proc/<pid>/status} ({@code VmRSS}; pages shared between the processes count once per
 * process), and the processes' count. Disk and network are not told apart from the host's: unknown.
 *
 * <p>CPU time is cumulative for the stream that owns this object: a process seen by one sample and gone by the next
 * keeps what it had used (unless its parent is one of the session's processes and still runs: the parent's reaped
 * children's time has it then). A process that starts and ends between two samples, or that ended before the stream began,
 * is not counted, and neither is a process that dropped the marker from its environment. One instance per stream;
 * blocking (reads {@code /proc}): run on a scheduler that may block. Every figure read is bounded: a line of {@code
 * /proc} that does not parse counts as nothing.
 */
final class LocalStats {
    /** The clock ticks {@code /proc/<pid>/stat} counts in: USER_HZ, 100 on every Linux the SDK runs on. */
    private static final long TICK_NANOS = 10_000_000L;
    /** The most of {@code /proc/<pid>/stat} or {@code status} read. */
    private static final int MAX_READ = 64 * 1024;

    private final String sessionId;
    /** The processes at the last sample, by pid. */
    private Map<Long, Seen> last = new HashMap<>();
    /** Ticks of processes seen before and gone since. */
    private long goneTicks;

    /** A process as one sample saw it: its start time (with its pid, who it is), its parent, its CPU ticks. */
    private record Seen(String start, long parent, long ticks) {}

    LocalStats(String sessionId) {
        this.sessionId = sessionId;
    }

    /** One reading; blocking. */
    Reading read() {
        Map<Long, Seen> now = new HashMap<>();
        long rssBytes = 0;
        long pids = 0;
        long self = ProcessHandle.current().pid();
        try (DirectoryStream<Path> procs = Files.newDirectoryStream(
                Path.of("/proc"), p -> p.getFileName().toString().chars().allMatch(Character::isDigit))) {
            for (Path p : procs) {
                long pid;
                try {
                    pid = Long.parseLong(p.getFileName().toString());
                } catch (NumberFormatException e) {
                    continue;
                }
                if (pid == self || !sessionId.equals(SessionRecords.marker(pid))) {
                    continue;
                }
                String[] stat = statFields(p);
                if (stat == null) {
                    continue; // gone
                }
                // fields after the command: [11..14] are utime, stime, cutime, cstime, [19] the start time
                long used = 0;
                for (int i = 11; i <= 14; i++) {
                    used = Math.addExact(used, bounded(stat[i]));
                }
                now.put(pid, new Seen(stat[19], bounded(stat[1]), used));
                rssBytes = Math.addExact(rssBytes, residentBytes(p));
                pids++;
            }
        } catch (IOException e) {
            throw new dev.sandbox.BackendException("cannot read /proc for the session's processes: " + e, e);
        }
        for (Map.Entry<Long, Seen> e : last.entrySet()) {
            Seen was = e.getValue();
            Seen is = now.get(e.getKey());
            if (is != null && is.start().equals(was.start())) {
                continue; // still running
            }
            Seen parent = now.get(was.parent());
            Seen parentWas = last.get(was.parent());
            if (parent != null && parentWas != null && parent.start().equals(parentWas.start())) {
                continue; // its parent, one of the session's, counts it among its reaped children's time
            }
            goneTicks = Math.addExact(goneTicks, was.ticks());
        }
        last = now;
        long total = goneTicks;
        for (Seen p : now.values()) {
            total = Math.addExact(total, p.ticks());
        }
        return new Reading(Instant.now(), Math.multiplyExact(total, TICK_NANOS), rssBytes, -1, pids, -1, -1, -1);
    }

    /** A figure of {@code /proc}: a non-negative decimal below 2^40, else 0. */
    private static long bounded(String field) {
        if (field.isEmpty() || field.length() > 12 || !field.chars().allMatch(Character::isDigit)) {
            return 0;
        }
        return Long.parseLong(field);
    }

    /** The fields of {@code /proc/<pid>/stat} after the command's name (index 0 is the state), or {@code null}. */
    private static String[] statFields(Path proc) {
        String stat = readSmall(proc.resolve("stat"));
        if (stat == null) {
            return null;
        }
        int close = stat.lastIndexOf(')');
        if (close < 0 || close + 2 > stat.length()) {
            return null;
        }
        String[] f = stat.substring(close + 2).strip().split(" ");
        return f.length < 20 ? null : f;
    }

    /** {@code VmRSS} of {@code /proc/<pid>/status} in bytes; 0 for a process without one (a zombie). */
    private static long residentBytes(Path proc) {
        String status = readSmall(proc.resolve("status"));
        if (status == null) {
            return 0;
        }
        for (String line : status.split("\n")) {
            if (line.startsWith("VmRSS:")) {
                String kb = line.substring(6).strip();
                if (kb.endsWith(" kB")) {
                    return bounded(kb.substring(0, kb.length() - 3).strip()) * 1024;
                }
            }
        }
        return 0;
    }

    private static String readSmall(Path file) {
        try (InputStream in = Files.newInputStream(file)) {
            return new String(in.readNBytes(MAX_READ), StandardCharsets.ISO_8859_1);
        } catch (IOException | RuntimeException e) {
            return null; // gone, or not ours to read
        }
    }
}
