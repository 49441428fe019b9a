package dev.sandbox.samples.cli;

import dev.sandbox.SessionInfo;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code sandbox ls}: one line per session that has all the given labels. */
@Command(
        name = "ls",
        customSynopsis = "sandbox ls [PROVIDER] [--label K=V]...",
        description = {"Prints \"SESSION PROVIDER CREATED LABELS\" for each session that has all the given labels."})
final class ListSessionsCommand extends SessionSubcommand {
    @Option(
            names = "--label",
            paramLabel = "K=V",
            converter = Values.KeyValue.Converter.class,
            description = "list only sessions with this label; may be repeated")
    List<Values.KeyValue> labels = List.of();

    /** The labels every listed session has. */
    Map<String, String> labels() {
        Map<String, String> map = new LinkedHashMap<>();
        labels.forEach(label -> map.put(label.name(), label.value()));
        return map;
    }

    @Override
    int execute() throws UsageException {
        try (SessionSource sessions = sessions()) {
            for (SessionInfo info : sessions.list(labels(), CreateCommand.CONTROL_WAIT)) {
                StringBuilder line = new StringBuilder();
                info.labels()
                        .forEach((k, v) -> line.append(line.isEmpty() ? "" : ",")
                                .append(k)
                                .append('=')
                                .append(v));
                cli.out.println(info.id() + " " + info.provider() + " " + info.createdAt() + " "
                        + (line.isEmpty() ? "-" : line));
            }
            cli.out.flush();
            return 0;
        }
    }
}
