package dev.sandbox.samples.cli;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.sandbox.ExecOptions;
import dev.sandbox.ExecResult;
import dev.sandbox.blocking.SandboxClient;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.util.Locale;

/** {@code sandbox run}: runs the command to its end and prints the result as one JSON object on one line. */
final class RunCommand {
    private static final ObjectMapper JSON = new ObjectMapper();

    private RunCommand() {}

    static int run(SandboxClient client, ExecOptions options, PrintStream out) {
        ExecResult result = client.process().run(options);
        out.println(toJson(result));
        out.flush();
        return result.exitCode();
    }

    static String toJson(ExecResult result) {
        ObjectNode json = JSON.createObjectNode();
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
            return JSON.writeValueAsString(json);
        } catch (JsonProcessingException e) {
            throw new UncheckedIOException(e);
        }
    }
}
