package dev.sandbox.samples.quickstart;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Runs the README's reactive quick start as a user would, in its own JVM, and reads what it prints. */
class ReactiveQuickStartTest {

    @TempDir
    Path dir;

    @Test
    void prints_each_line_then_the_exit_code() throws IOException, InterruptedException {
        Path java = Path.of(System.getProperty("java.home"), "bin", "java");
        Path log = dir.resolve("out.txt");
        Process process = new ProcessBuilder(
                        java.toString(),
                        "--enable-native-access=ALL-UNNAMED",
                        "-cp",
                        System.getProperty("java.class.path"),
                        ReactiveQuickStart.class.getName())
                .redirectErrorStream(true)
                .redirectOutput(log.toFile())
                .start();
        try {
            assertThat(process.waitFor(60, TimeUnit.SECONDS))
                    .as("the quick start ends within 60 s")
                    .isTrue();
        } finally {
            process.destroyForcibly();
        }
        String output = Files.readString(log, StandardCharsets.UTF_8);
        assertThat(process.exitValue()).as(output).isZero();
        // logging may print around these lines; the quick start's own lines come in this order
        List<String> printed = output.lines()
                .filter(l -> l.startsWith("stdout: ") || l.startsWith("stderr: ") || l.startsWith("exit "))
                .toList();
        assertThat(printed).as(output).containsExactly("stdout: hello", "stderr: oops", "exit 3");
    }
}
