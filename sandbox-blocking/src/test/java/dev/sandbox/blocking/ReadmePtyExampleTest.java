package dev.sandbox.blocking;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sandbox.PtyOptions;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The README's blocking PTY example (the region tagged {@code pty}, which the README copies and its snippet test
 * compares) runs and prints what it says.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ReadmePtyExampleTest {

    private static void example() throws IOException {
        // tag::pty[]
        try (SandboxClient client = SandboxClient.local()) {
            PtySessionHandle shell = client.pty().open(PtyOptions.shell().withSize(100, 30));
            try (PtyOutput screen = shell.output()) {
                shell.write("stty size; exit 3\n");
                screen.transferTo(System.out); // the raw terminal bytes, until the shell has exited
            }
            System.out.println("exit " + shell.exit(Duration.ofSeconds(10)).code());
        }
        // end::pty[]
    }

    @Test
    void theExampleShowsTheTerminalSizeAndTheExitCode() throws IOException {
        PrintStream original = System.out;
        ByteArrayOutputStream captured = new ByteArrayOutputStream();
        System.setOut(new PrintStream(captured, true, StandardCharsets.UTF_8));
        try {
            example();
        } finally {
            System.setOut(original);
        }
        String out = captured.toString(StandardCharsets.UTF_8);
        assertThat(out).contains("30 100\r\n").endsWith("exit 3" + System.lineSeparator());
    }
}
