package dev.sandbox.implementation.local;

import com.sun.jna.Pointer;
import dev.sandbox.BackendException;
import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Pauses a local session by stopping every process that carries its marker ({@link SessionRecords#MARKER}) with
 * {@code SIGSTOP}, and resumes it with {@code SIGCONT}. A process is signalled through a pidfd, after checking that the
 * pid still names a marked process, and a process that leads its own group has the whole group stopped (its members
 * may have dropped the marker). A stopped process cannot fork, so rounds of scanning end once a round finds no marked
 * process it has not stopped; then each is waited for until {@code /proc} shows it stopped. The pidfds are kept until
 * the resume, so the resume signals exactly the processes the pause stopped and needs no scan (it does not block).
 * Internal: not part of the public API.
 */
final class LocalFreezer {
    /** Rounds of scan and stop at most: a process forked while a round stopped its parent shows in the next. */
    private static final int ROUNDS = 20;
    /** How long the processes stopped may take to show as stopped. */
    private static final long SETTLE_MILLIS = 2000;

    private final String sessionId;
    private final long self = ProcessHandle.current().pid();
    private final long ownGroup = SessionRecords.processGroup(self);
    /** Pidfds of the stopped processes, by pid. */
    private final Map<Long, Integer> stopped = new HashMap<>(); // guarded by this
    /** Process groups stopped as a whole. */
    private final Set<Long> groups = new HashSet<>(); // guarded by this

    LocalFreezer(String sessionId) {
        this.sessionId = sessionId;
    }

    /**
     * Stops every process of the session. Blocking: it reads {@code /proc}.
     *
     * @throws BackendException when processes keep appearing after every round
     */
    synchronized void freeze() {
        for (int round = 0; round < ROUNDS; round++) {
            List<Long> fresh = new ArrayList<>();
            for (long pid : marked()) {
                if (!stopped.containsKey(pid)) {
                    fresh.add(pid);
                }
            }
            if (fresh.isEmpty()) {
                settle();
                return;
            }
            for (long pid : fresh) {
                stop(pid);
            }
        }
        thaw(); // half a pause is worse than none
        throw new BackendException(
                "cannot pause local session " + sessionId + ": its processes kept forking after " + ROUNDS
                        + " rounds of SIGSTOP",
                null,
                true);
    }

    /** Lets every stopped process run again and forgets them. Does not block (signals only). */
    synchronized void thaw() {
        for (long group : groups) {
            Sys.kill((int) -group, Sys.SIGCONT);
        }
        for (int pidfd : stopped.values()) {
            Sys.syscall(Sys.SYS_PIDFD_SEND_SIGNAL, pidfd, new Pointer(Sys.SIGCONT), null, 0);
            Sys.close(pidfd);
        }
        groups.clear();
        stopped.clear();
    }

    private void stop(long pid) {
        int pidfd = (int) Sys.syscall(Sys.SYS_PIDFD_OPEN, pid, (Pointer) null, null, 0);
        if (pidfd < 0) {
            return; // gone already
        }
        // the pid is pinned by the pidfd now: check it is still the session's process before signalling
        if (!sessionId.equals(SessionRecords.marker(pid))) {
            Sys.close(pidfd);
            return;
        }
        long group = SessionRecords.processGroup(pid);
        if (group == pid && group > 1 && group != ownGroup && groups.add(group)) {
            Sys.kill((int) -group, Sys.SIGSTOP);
        }
        if (Sys.syscall(Sys.SYS_PIDFD_SEND_SIGNAL, pidfd, new Pointer(Sys.SIGSTOP), null, 0) == 0) {
            stopped.put(pid, pidfd);
        } else {
            Sys.close(pidfd);
        }
    }

    /** Waits, bounded, until every stopped process shows as stopped ({@code T}) or gone. */
    private void settle() {
        long deadline = System.nanoTime() + SETTLE_MILLIS * 1_000_000L;
        for (long pid : stopped.keySet()) {
            while (true) {
                String[] f = SessionRecords.stat(pid);
                if (f == null || f.length == 0 || !f[0].equals("R") && !f[0].equals("S") && !f[0].equals("D")) {
                    break; // stopped (T), a zombie, or gone
                }
                if (System.nanoTime() > deadline) {
                    return;
                }
                try {
                    Thread.sleep(1);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return;
                }
            }
        }
    }

    /** The pids of the processes carrying the session's marker, this JVM's excepted. */
    private List<Long> marked() {
        List<Long> found = new ArrayList<>();
        try (DirectoryStream<Path> procs = Files.newDirectoryStream(
                Path.of("/proc"), p -> p.getFileName().toString().chars().allMatch(Character::isDigit))) {
            for (Path p : procs) {
                long pid = Long.parseLong(p.getFileName().toString());
                if (pid != self && sessionId.equals(SessionRecords.marker(pid))) {
                    found.add(pid);
                }
            }
        } catch (IOException e) {
            throw new BackendException("cannot scan /proc to pause local session " + sessionId, e, true);
        }
        return found;
    }
}
