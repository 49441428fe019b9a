package dev.sandbox.samples.cli;

import dev.sandbox.SessionClosedException;
import dev.sandbox.SessionStats;
import dev.sandbox.blocking.SandboxClient;
import dev.sandbox.blocking.SessionStatsStream;
import java.io.PrintStream;
import java.time.Duration;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.Locale;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code sandbox top}: prints a session's resource use, one line per sample, under a header: time (UTC), CPU time in
 * seconds, memory and its peak in MiB, processes, disk written and network bytes in and out in MiB ({@code -} where
 * the provider cannot tell). It runs until Ctrl-C, until {@code --count} samples were printed (then exits 0), or until
 * the session ends (then says so in one line and exits 1).
 *
 * <pre>
 * TIME           CPU-S   MEM-MIB  PEAK-MIB  PIDS  DISK-MIB  NET-IN-MIB  NET-OUT-MIB
 * 10:15:02.120    0.41     101.2     101.9     3       0.0           -            -
 * </pre>
 */
@Command(
        name = "top",
        customSynopsis = "sandbox top [PROVIDER] [--interval D] [--count N] SESSION",
        description = {
            "Prints the resource use of session SESSION, a line per sample every D: CPU seconds, memory and peak in"
                    + " MiB, processes, disk written and network in and out in MiB (- where unknown); runs until"
                    + " Ctrl-C or N samples (exits 0), or the session's end (exits 1)."
        })
final class TopCommand extends SessionSubcommand {
    /** The header line. */
    static final String HEADER = String.format(
            "%-12s %7s %9s %9s %5s %9s %11s %12s",
            "TIME", "CPU-S", "MEM-MIB", "PEAK-MIB", "PIDS", "DISK-MIB", "NET-IN-MIB", "NET-OUT-MIB");

    private static final DateTimeFormatter TIME =
            DateTimeFormatter.ofPattern("HH:mm:ss.SSS").withZone(ZoneOffset.UTC);
    private static final Duration STEP = Duration.ofMinutes(2);

    @Option(names = "--interval", paramLabel = "D", description = "the time between samples, 100ms to 24h [2s]")
    Duration interval = Duration.ofSeconds(2);

    @Option(
            names = "--count",
            paramLabel = "N",
            converter = Values.WholeNumber.class,
            description = "stop after N samples [0: until Ctrl-C or the session's end]")
    long count;

    @Parameters(index = "0", paramLabel = "SESSION", converter = Values.NonBlank.class, description = "the session")
    String session;

    @Override
    void validate() {
        super.validate();
        if (interval.compareTo(SessionStats.MIN_INTERVAL) < 0 || interval.compareTo(SessionStats.MAX_INTERVAL) > 0) {
            throw usageError("--interval must be between 100ms and 24h, got " + interval.toMillis() + "ms");
        }
    }

    @Override
    int execute() throws UsageException {
        try (SessionSource source = sessions();
                SandboxClient client = source.attach(session, STEP)) {
            return run(client, cli.out, cli.err);
        }
    }

    int run(SandboxClient client, PrintStream out, PrintStream err) {
        out.println(HEADER);
        out.flush();
        long printed = 0;
        try (SessionStatsStream stats = client.stats(interval)) {
            for (SessionStats s : stats) {
                out.println(line(s));
                out.flush();
                if (count > 0 && ++printed >= count) {
                    return 0;
                }
            }
            return 0;
        } catch (SessionClosedException e) {
            return SandboxCli.fail(err, e.getMessage(), SandboxCli.EXIT_ERROR); // names the session
        }
    }

    /** One sample as a line under {@link #HEADER}. */
    static String line(SessionStats s) {
        return String.format(
                Locale.ROOT,
                "%-12s %7.2f %9s %9s %5d %9s %11s %12s",
                TIME.format(s.sampledAt()),
                s.cpuTime().toNanos() / 1e9,
                mib(s.memoryBytes()),
                mib(s.memoryPeakBytes()),
                s.pids(),
                mib(s.diskWriteBytes()),
                mib(s.networkInBytes()),
                mib(s.networkOutBytes()));
    }

    private static String mib(long bytes) {
        return bytes == SessionStats.UNKNOWN ? "-" : String.format(Locale.ROOT, "%.1f", bytes / 1048576.0);
    }
}
