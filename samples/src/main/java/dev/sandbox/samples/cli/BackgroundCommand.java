package dev.sandbox.samples.cli;

import dev.sandbox.ExecOptions;
import dev.sandbox.blocking.BackgroundProcessHandle;
import dev.sandbox.blocking.SandboxClient;
import java.io.PrintStream;

/**
 * {@code sandbox exec --background}: starts the command in the client's session and prints {@code SESSION PROCESS},
 * the two ids {@code sandbox logs} takes. The client must be one whose session outlives the CLI.
 */
final class BackgroundCommand {
    private BackgroundCommand() {}

    static int run(SandboxClient client, ExecOptions options, PrintStream out) {
        BackgroundProcessHandle process = client.process().start(options);
        out.println(client.sessionId() + " " + process.id());
        out.flush();
        return 0;
    }
}
