package dev.sandbox.samples.quickstart;

import dev.sandbox.ExecEvent;
import dev.sandbox.ExecOptions;
import dev.sandbox.ExecResult;
import dev.sandbox.blocking.ExecStream;
import dev.sandbox.blocking.SandboxClient;

/**
 * The blocking quick start shown in the README: one collected run and one streamed command, on the local provider.
 *
 * <pre>{@code
 * java -cp samples/target/sandbox.jar dev.sandbox.samples.quickstart.BlockingQuickStart
 * }</pre>
 */
public final class BlockingQuickStart {
    private BlockingQuickStart() {}

    /**
     * Runs the sample.
     *
     * @param args ignored
     */
    public static void main(String[] args) {
        // tag::quickstart[]
        try (SandboxClient client = SandboxClient.local()) {
            ExecResult result = client.process().run(ExecOptions.of("uname", "-s"));
            System.out.println(
                    "exit " + result.exitCode() + ": " + result.stdout().strip());

            try (ExecStream events = client.process().exec(ExecOptions.shell("echo one; echo two >&2"))) {
                for (ExecEvent event : events) {
                    System.out.println(event);
                }
            }
        }
        // end::quickstart[]
    }
}
