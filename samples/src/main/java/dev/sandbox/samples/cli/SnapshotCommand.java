package dev.sandbox.samples.cli;

import java.time.Duration;
import java.util.List;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;

/**
 * {@code sandbox snapshot}: saves a session as a snapshot and prints its reference; {@code sandbox snapshot rm REF...}
 * deletes snapshots. A snapshot is an image that outlives its session, so one that is no longer restored from takes
 * disk space until it is deleted.
 */
@Command(
        name = "snapshot",
        customSynopsis = {"sandbox snapshot [PROVIDER] SESSION", "sandbox snapshot rm [PROVIDER] REF..."},
        description = {
            "Saves session SESSION as an image and prints its reference (docker). With rm, deletes the snapshots"
                    + " REF... (references snapshot printed, sandbox-snapshot:...); one already gone counts as deleted."
        })
final class SnapshotCommand extends SessionSubcommand {
    /** The repository every snapshot's reference names. */
    static final String REPOSITORY = dev.sandbox.docker.DockerSandboxProvider.SNAPSHOT_REPOSITORY + ":";

    @Parameters(
            paramLabel = "SESSION",
            arity = "1..*",
            converter = Values.NonBlank.class,
            description = "the session's id; or rm followed by snapshot references")
    List<String> args;

    @Override
    void validate() {
        super.validate();
        if (args.getFirst().equals("rm")) {
            if (args.size() == 1) {
                throw usageError("snapshot rm needs the references of the snapshots to delete");
            }
            for (String ref : args.subList(1, args.size())) {
                if (!ref.startsWith(REPOSITORY) || ref.length() == REPOSITORY.length()) {
                    throw usageError("'" + ref + "' is not a snapshot reference (" + REPOSITORY
                            + "...): snapshot rm deletes snapshots only, not other images");
                }
            }
        } else if (args.size() > 1) {
            throw usageError("unexpected argument '" + args.get(1) + "'; snapshot takes one SESSION");
        }
    }

    @Override
    int execute() throws UsageException {
        try (SessionSource sessions = sessions()) {
            if (args.getFirst().equals("rm")) {
                for (String ref : args.subList(1, args.size())) {
                    sessions.deleteSnapshot(ref, Duration.ofMinutes(1));
                }
                return 0;
            }
            cli.out.println(sessions.snapshot(args.getFirst(), Duration.ofMinutes(10)));
            cli.out.flush();
            return 0;
        }
    }
}
