package dev.sandbox.samples.cli;

import java.time.Duration;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;

/** {@code sandbox snapshot}: saves a session as a snapshot and prints its reference. */
@Command(
        name = "snapshot",
        customSynopsis = "sandbox snapshot [PROVIDER] SESSION",
        description = {"Saves session SESSION as an image and prints its reference (docker)."})
final class SnapshotCommand extends SessionSubcommand {
    @Parameters(paramLabel = "SESSION", converter = Values.NonBlank.class, description = "the session's id")
    String session;

    @Override
    int execute() throws UsageException {
        try (SessionSource sessions = sessions()) {
            cli.out.println(sessions.snapshot(session, Duration.ofMinutes(10)));
            cli.out.flush();
            return 0;
        }
    }
}
