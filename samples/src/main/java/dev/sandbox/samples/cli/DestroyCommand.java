package dev.sandbox.samples.cli;

import dev.sandbox.SandboxException;
import java.util.List;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;

/** {@code sandbox destroy}: removes sessions; exits 1 if one of them could not be removed. */
@Command(
        name = "destroy",
        customSynopsis = "sandbox destroy [PROVIDER] SESSION...",
        description = {"Removes the sessions; exits 1 if one of them could not be removed."})
final class DestroyCommand extends SessionSubcommand {
    @Parameters(
            paramLabel = "SESSION",
            arity = "1..*",
            converter = Values.NonBlank.class,
            description = "the sessions' ids")
    List<String> sessions;

    @Override
    int execute() throws UsageException {
        int code = 0;
        try (SessionSource source = sessions()) {
            for (String id : sessions) {
                try {
                    source.destroy(id, CreateCommand.CONTROL_WAIT);
                } catch (SandboxException e) {
                    code = SandboxCli.fail(cli.err, e.getMessage(), SandboxCli.EXIT_ERROR);
                }
            }
        }
        return code;
    }
}
