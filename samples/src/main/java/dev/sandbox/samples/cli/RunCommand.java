package dev.sandbox.samples.cli;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.sandbox.ExecOptions;
import dev.sandbox.ExecResult;
import dev.sandbox.blocking.SandboxClient;
import java.io.UncheckedIOException;
import java.util.Locale;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code sandbox run}: runs the command to its end and prints the result as one JSON object on one line. */
@Command(
        name = "run",
        customSynopsis = "sandbox run [OPTIONS] [--max-output BYTES] [--session SESSION] -- CMD [ARG...]",
        description = {
            "Runs CMD in a new sandbox session, destroyed when it ends (or, with --session, in an existing one),"
                    + " waits for it and prints one JSON object to stdout: exitCode, stdout, stderr,"
                    + " stdoutTruncated, stderrTruncated, durationMs (and stdoutBytes, stderrBytes, termination);"
                    + " exits with CMD's exit code."
        })
final class RunCommand extends CommandInSession {
    @Option(
            names = "--max-output",
            paramLabel = "BYTES",
            converter = Values.WholeNumber.class,
            description = "keep at most BYTES of each stream [1048576]")
    Long maxOutput;

    /** {@code exec}'s option, accepted only to say so. */
    @Option(names = "--background", arity = "0", hidden = true)
    boolean background;

    @Override
    void validate() {
        if (background) {
            throw usageError("--background applies to 'sandbox exec' only");
        }
        super.validate();
    }

    @Override
    ExecOptions execOptions() {
        return maxOutput == null ? super.execOptions() : super.execOptions().withMaxOutputBytes(maxOutput);
    }

    @Override
    int run(SandboxClient client, ExecOptions options) {
        ExecResult result = client.process().run(options);
        termination = result.termination();
        cli.out.println(toJson(result));
        cli.out.flush();
        return result.exitCode();
    }

    static String toJson(ExecResult result) {
        // made here, not when picocli makes the command: it takes a while, and only run prints JSON
        ObjectMapper mapper = new ObjectMapper();
        ObjectNode json = mapper.createObjectNode();
        json.put("exitCode", result.exitCode());
        json.put("stdout", result.stdout());
        json.put("stderr", result.stderr());
        json.put("stdoutTruncated", result.stdoutTruncated());
        json.put("stderrTruncated", result.stderrTruncated());
        json.put("durationMs", result.duration().toMillis());
        json.put("stdoutBytes", result.stdoutBytes());
        json.put("stderrBytes", result.stderrBytes());
        json.put("termination", result.termination().name().toLowerCase(Locale.ROOT));
        try {
            return mapper.writeValueAsString(json);
        } catch (JsonProcessingException e) {
            throw new UncheckedIOException(e);
        }
    }
}
