package dev.sandbox.benchmarks;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The benchmarks jar's entry point: {@code java -jar benchmarks.jar [--short] [--list] [name...]} runs the named
 * benchmarks, or all of them, and prints per benchmark a {@code RESULT} line and a {@code STATS} line on standard
 * output; progress goes to standard error. Short mode ({@code --short}, the system property {@code
 * sandbox.bench.short=true} or the environment variable {@code SANDBOX_BENCH_SHORT=1}) runs few repetitions, to
 * show that every benchmark still works; its figures are not meant to be compared.
 *
 * <p>Exit status: 0 when every requested benchmark ran or was skipped (a missing provider, no Docker daemon), 1 when
 * one failed, 2 for a bad command line.
 *
 * <pre>{@code
 * java -jar benchmarks/target/benchmarks.jar local-exec-latency
 * }</pre>
 */
public final class Main {
    /** The system property that turns on short mode. */
    public static final String SHORT_PROPERTY = "sandbox.bench.short";

    /** The environment variable that turns on short mode. */
    public static final String SHORT_ENV = "SANDBOX_BENCH_SHORT";

    private Main() {}

    /**
     * Runs from the command line and exits with {@link #run}'s status.
     *
     * @param args options and benchmark names
     */
    public static void main(String[] args) {
        System.exit(run(args, System.out, System.err));
    }

    /**
     * Runs benchmarks in this JVM.
     *
     * @param args {@code --short}, {@code --list}, {@code --help} and benchmark names
     * @param out where RESULT and STATS lines go
     * @param err where progress and errors go
     * @return the exit status: 0 ran (or skipped), 1 a benchmark failed, 2 bad arguments
     */
    public static int run(String[] args, PrintStream out, PrintStream err) {
        boolean shortMode = Boolean.getBoolean(SHORT_PROPERTY) || envFlag(System.getenv(SHORT_ENV));
        List<String> names = new ArrayList<>();
        for (String arg : args) {
            switch (arg) {
                case "--short" -> shortMode = true;
                case "--list" -> {
                    Benchmarks.names().forEach(out::println);
                    return 0;
                }
                case "--help", "-h" -> {
                    usage(out);
                    return 0;
                }
                default -> {
                    if (arg.startsWith("-")) {
                        err.println("unknown option '" + arg + "'");
                        usage(err);
                        return 2;
                    }
                    if (Benchmarks.byName(arg).isEmpty()) {
                        err.println("unknown benchmark '" + arg + "'; known: " + String.join(", ", Benchmarks.names()));
                        return 2;
                    }
                    names.add(arg);
                }
            }
        }
        if (names.isEmpty()) {
            names.addAll(Benchmarks.names());
        }
        RunConfig config = RunConfig.of(shortMode, err);
        config.log("running %s in %s mode", String.join(", ", names), shortMode ? "short" : "full");
        int status = 0;
        for (String name : names) {
            if (!runOne(Benchmarks.byName(name).orElseThrow(), config, out, err)) {
                status = 1;
            }
        }
        return status;
    }

    /**
     * Runs one benchmark and prints its lines: {@code RESULT} and {@code STATS}, or {@code RESULT <name> skipped
     * (<reason>)} when it is {@link Benchmark#unavailable() unavailable} or throws {@link Skipped}, or {@code RESULT
     * <name> failed (<error>)}.
     *
     * @param b the benchmark
     * @param config the mode
     * @param out where the report lines go
     * @param err where progress and errors go
     * @return {@code false} when it failed
     */
    static boolean runOne(Benchmark b, RunConfig config, PrintStream out, PrintStream err) {
        String name = b.name();
        boolean ok = true;
        if (b.unavailable().isPresent()) {
            out.println("RESULT " + name + " skipped (" + b.unavailable().get() + ")");
        } else {
            try {
                Report r = b.run(config);
                out.println(r.resultLine());
                out.println(r.statsLine());
            } catch (Skipped s) {
                config.log("%s skipped: %s", name, s.reason());
                out.println("RESULT " + name + " skipped (" + s.reason() + ")");
            } catch (Exception | AssertionError e) {
                err.printf(Locale.ROOT, "%s failed:%n", name);
                e.printStackTrace(err);
                out.println("RESULT " + name + " failed (" + e + ")");
                ok = false;
            }
        }
        out.flush();
        return ok;
    }

    private static boolean envFlag(String value) {
        return value != null && (value.equals("1") || value.equalsIgnoreCase("true"));
    }

    private static void usage(PrintStream s) {
        s.println("usage: java -jar benchmarks.jar [--short] [--list] [name...]");
        s.println("  runs the named benchmarks (all when none is named) and prints, for each:");
        s.println("    RESULT <name> sdk=<median> baseline=<median> ratio=<sdk/baseline> unit=<unit>");
        s.println(
                "    STATS <name> sdk_p95=<p95> baseline_p95=<p95> reps=<rounds> warmup=<rounds> target=<target> met=<yes|no>");
        s.println("  --short   few repetitions (also -D" + SHORT_PROPERTY + "=true or " + SHORT_ENV + "=1)");
        s.println("  --list    print the benchmark names");
        s.println("benchmarks: " + String.join(", ", Benchmarks.names()));
    }
}
