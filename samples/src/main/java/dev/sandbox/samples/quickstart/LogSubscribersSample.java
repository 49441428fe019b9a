package dev.sandbox.samples.quickstart;

import dev.sandbox.BackgroundProcess;
import dev.sandbox.ExecEvent;
import dev.sandbox.ExecOptions;
import dev.sandbox.SandboxSession;
import dev.sandbox.SessionOptions;
import dev.sandbox.local.LocalSandboxProvider;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * Two log subscribers on one background process: the first follows from the start and leaves after three lines,
 * the second joins later and resumes at the byte offset after the last line the first one saw, so between them
 * nothing is lost and nothing repeats.
 *
 * <pre>{@code
 * java -cp samples/target/sandbox.jar dev.sandbox.samples.quickstart.LogSubscribersSample
 * }</pre>
 */
public final class LogSubscribersSample {
    private LogSubscribersSample() {}

    /**
     * Runs the sample and returns what each subscriber saw.
     *
     * @return the early subscriber's lines, then the late subscriber's lines
     */
    public static List<List<String>> run() {
        // tag::logs[]
        Duration timeout = Duration.ofSeconds(30);
        List<List<String>> seen = new ArrayList<>();
        try (LocalSandboxProvider provider = LocalSandboxProvider.create()) {
            SandboxSession session = provider.create(SessionOptions.defaults()).block(timeout);
            BackgroundProcess process = session.start(
                            ExecOptions.shell("for i in 1 2 3 4 5 6; do echo log line $i; sleep 0.2; done"))
                    .block(timeout);

            // the first subscriber follows from the start and leaves after three lines
            List<ExecEvent.Stdout> early = process.output(0, 0)
                    .ofType(ExecEvent.Stdout.class)
                    .take(3)
                    .collectList()
                    .block(timeout);

            // the second joins later and resumes right after the last line the first one saw
            long resumeAt = early.get(early.size() - 1).nextOffset();
            List<ExecEvent.Stdout> late = process.output(resumeAt, 0)
                    .ofType(ExecEvent.Stdout.class)
                    .collectList()
                    .block(timeout);

            seen.add(early.stream().map(ExecEvent.Stdout::text).toList()); // log line 1 to 3
            seen.add(late.stream().map(ExecEvent.Stdout::text).toList()); // log line 4 to 6
        }
        // end::logs[]
        return seen;
    }

    /**
     * Prints what both subscribers saw.
     *
     * @param args ignored
     */
    public static void main(String[] args) {
        List<List<String>> seen = run();
        System.out.println("early subscriber: " + seen.get(0));
        System.out.println("late subscriber:  " + seen.get(1));
    }
}
