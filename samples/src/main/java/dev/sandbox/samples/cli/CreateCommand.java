package dev.sandbox.samples.cli;

import dev.sandbox.SessionOptions;
import java.time.Duration;
import java.util.List;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code sandbox create}: a session that outlives the command, made now; prints its id. */
@Command(
        name = "create",
        customSynopsis = {
            "sandbox create [PROVIDER] [--label K=V]... [--lifetime D] [--idle-timeout D]",
            "                      [--from-snapshot REF] [--name NAME]"
        },
        description = {
            "Makes a session that outlives this command and prints its id; with --from-snapshot, from a snapshot"
                    + " (docker). Local sessions end with the command that made them, so use --provider docker or"
                    + " --provider remote."
        })
final class CreateCommand extends SessionSubcommand {
    /** How long making the session may take: a container start on a busy daemon included. */
    static final Duration CONTROL_WAIT = Duration.ofMinutes(2);

    @Option(
            names = "--label",
            paramLabel = "K=V",
            converter = Values.KeyValue.Converter.class,
            description = "add a label; may be repeated")
    List<Values.KeyValue> labels = List.of();

    @Option(names = "--lifetime", paramLabel = "D", description = "end the session after D [5m]")
    Duration lifetime;

    @Option(names = "--idle-timeout", paramLabel = "D", description = "end the session after D without activity")
    Duration idleTimeout;

    @Option(
            names = "--from-snapshot",
            paramLabel = "REF",
            converter = Values.NonBlank.class,
            description = "start from this snapshot (docker)")
    String fromSnapshot;

    @Option(
            names = "--name",
            paramLabel = "NAME",
            description = "name the session (unique at the provider; 1 to 40 of a-z, 0-9 and '-')")
    String name;

    @Override
    int execute() throws UsageException {
        SessionOptions options = SessionOptions.defaults();
        if (name != null) {
            options = options.withName(name);
        }
        for (Values.KeyValue label : labels) {
            options = options.withLabel(label.name(), label.value());
        }
        // always a chosen lifetime: a session made to outlive this command must not be leased to it
        options = options.withLifetime(lifetime != null ? lifetime : SessionOptions.DEFAULT_LIFETIME);
        if (idleTimeout != null) {
            options = options.withIdleTimeout(idleTimeout);
        }
        try (SessionSource sessions = sessions()) {
            cli.out.println(sessions.createSession(options, fromSnapshot, CONTROL_WAIT));
            cli.out.flush();
            return 0;
        }
    }
}
