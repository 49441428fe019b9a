package dev.sandbox.samples.quickstart;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The samples the README shows run and print what the README says they print. */
class SamplesTest {

    @Test
    void blockingQuickStartRunsAndStreams() {
        PrintStream original = System.out;
        ByteArrayOutputStream captured = new ByteArrayOutputStream();
        System.setOut(new PrintStream(captured, true, StandardCharsets.UTF_8));
        try {
            BlockingQuickStart.main(new String[0]);
        } finally {
            System.setOut(original);
        }
        String out = captured.toString(StandardCharsets.UTF_8);
        assertThat(out).startsWith("exit 0: Linux");
        assertThat(out).contains("Stdout[text=one").contains("Stderr[text=two").contains("Exit[code=0");
    }

    @Test
    void lateLogSubscriberResumesWhereTheEarlyOneStopped() {
        List<List<String>> seen = LogSubscribersSample.run();
        assertThat(seen.get(0)).containsExactly("log line 1", "log line 2", "log line 3");
        assertThat(seen.get(1)).containsExactly("log line 4", "log line 5", "log line 6");
    }
}
