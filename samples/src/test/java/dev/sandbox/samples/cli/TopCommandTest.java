package dev.sandbox.samples.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sandbox.ExecOptions;
import dev.sandbox.SandboxSession;
import dev.sandbox.SessionOptions;
import dev.sandbox.blocking.SandboxClient;
import dev.sandbox.local.LocalSandboxProvider;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@code sandbox top} against a client of a real local session: a header and one line per sample showing what runs,
 * a session that ends says so and exits 1, and a bad interval is a usage error.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class TopCommandTest {
    private static final Duration WAIT = Duration.ofSeconds(30);

    record Printed(int code, String out, String err) {}

    private static Printed top(SandboxClient client, String... options) {
        String[] args = new String[options.length + 2];
        args[0] = "top";
        System.arraycopy(options, 0, args, 1, options.length);
        args[args.length - 1] = client.sessionId();
        TopCommand top = CommandLineTest.parse(TopCommand.class, args);
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int code;
        try (PrintStream o = new PrintStream(out, false, StandardCharsets.UTF_8);
                PrintStream e = new PrintStream(err, false, StandardCharsets.UTF_8)) {
            code = top.run(client, o, e);
        }
        return new Printed(code, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }

    @Test
    void aLinePerSampleShowsWhatRuns() {
        try (SandboxClient client = SandboxClient.local()) {
            client.process().start(ExecOptions.shell("sleep 60 & sleep 60 & sleep 60 & wait"));
            Printed p = top(client, "--interval", "100ms", "--count", "3");
            assertThat(p.code()).isZero();
            List<String> lines = p.out().lines().toList();
            assertThat(lines).hasSize(4);
            assertThat(lines.get(0)).isEqualTo(TopCommand.HEADER);
            for (String line : lines.subList(1, 4)) {
                String[] f = line.trim().split("\\s+");
                assertThat(f).as(line).hasSize(8);
                assertThat(f[0]).matches("\\d\\d:\\d\\d:\\d\\d\\.\\d{3}");
                assertThat(Double.parseDouble(f[2])).as("memory of " + line).isPositive();
                assertThat(f[5]).as("local disk is unknown").isEqualTo("-");
                assertThat(f[6]).as("local network is unknown").isEqualTo("-");
            }
            assertThat(lines.subList(1, 4))
                    .as("a line with the shell and its three sleeps")
                    .anySatisfy(line -> assertThat(Integer.parseInt(line.trim().split("\\s+")[4]))
                            .isGreaterThanOrEqualTo(4));
        }
    }

    @Test
    void aSessionThatEndsIsNamedAndExitsOne() {
        try (LocalSandboxProvider provider = LocalSandboxProvider.create()) {
            SandboxSession session = provider.create(SessionOptions.defaults()).block(WAIT);
            SandboxClient client = SandboxClient.attach(session);
            session.destroy().block(WAIT);
            Printed p = top(client, "--interval", "100ms");
            assertThat(p.code()).isEqualTo(SandboxCli.EXIT_ERROR);
            assertThat(p.err()).startsWith("sandbox: ").contains(session.id());
            client.close();
        }
    }

    @Test
    void aBadIntervalIsAUsageError() {
        CommandLineTest.Outcome o = CommandLineTest.cli("top", "--interval", "10ms", "docker-1");
        assertThat(o.code()).isEqualTo(SandboxCli.EXIT_USAGE);
        assertThat(o.err()).contains("--interval", "10ms");
    }
}
