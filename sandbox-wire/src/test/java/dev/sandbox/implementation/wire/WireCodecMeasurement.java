package dev.sandbox.implementation.wire;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.sandbox.ExecEvent;
import dev.sandbox.ExecResult;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.concurrent.Callable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;

/**
 * Why the hot paths of the wire format keep their hand-written code: each one timed against Jackson databind doing
 * the same job, in the same JVM. Not a benchmark (no JMH; the best of a few rounds); run it with {@code mvn -pl
 * sandbox-remote -am verify -Dtest=WireCodecMeasurement -Dsurefire.failIfNoSpecifiedTests=false
 * -Dsandbox.measure=true}.
 */
@EnabledIfSystemProperty(named = "sandbox.measure", matches = "true")
class WireCodecMeasurement {
    /** A line event as databind would write it. */
    @JsonInclude(JsonInclude.Include.NON_DEFAULT)
    record LineBody(String type, long offset, long next, String text, boolean partial) {}

    /** Any stream line as databind would read it. */
    record StreamLine(
            String type,
            long offset,
            Long next,
            String text,
            boolean partial,
            int code,
            ExecEvent.Termination termination,
            long durationNanos,
            String kind,
            String stream,
            String path,
            JsonNode error) {}

    private static volatile Object sink;

    @Test
    void handWrittenAgainstDatabind() throws Exception {
        int n = Integer.getInteger("sandbox.measure.ops", 200_000);
        ExecEvent.Stdout plain =
                new ExecEvent.Stdout("2024-01-01 12:00:00 INFO request served in 12 ms", 1234, false, 1283);
        ExecEvent.Stdout escaped =
                new ExecEvent.Stdout("{\"level\":\"info\",\"msg\":\"served\",\"ms\":12}\tdone", 1234, false, 1278);
        byte[] plainJson = StreamFrames.event(plain);
        byte[] escapedJson = StreamFrames.event(escaped);
        compare(
                n,
                "encode a line event (server, per line)",
                () -> StreamFrames.event(plain),
                () -> WireJson.bytes(
                        new LineBody("stdout", plain.offset(), plain.nextOffset(), plain.text(), plain.partial())));
        compare(
                n,
                "decode a plain line event (client, per line)",
                () -> StreamFrames.streamItem(plainJson, 0, plainJson.length),
                () -> line(plainJson));
        compare(
                n,
                "decode an escaped line event (client, fallback parser)",
                () -> StreamFrames.streamItem(escapedJson, 0, escapedJson.length),
                () -> line(escapedJson));

        ExecResult result =
                new ExecResult(0, "", "", false, false, 0, 0, ExecEvent.Termination.EXITED, Duration.ofNanos(1834211));
        byte[] resultJson = WireJson.bytes(ResourceBodies.ExecResultBody.of(result));
        compare(
                n,
                "decode the run result from its tree (client, per run)",
                () -> ResourceBodies.execResult(WireJson.lenient(resultJson)),
                () -> ResourceBodies.read(WireJson.lenient(resultJson), ResourceBodies.ExecResultBody.class));
        compare(
                n,
                "encode the run result (server, per run): a tree by hand / the record",
                () -> WireJson.bytes(tree(result)),
                () -> WireJson.bytes(ResourceBodies.ExecResultBody.of(result)));
    }

    private static ExecEvent.Stdout line(byte[] json) {
        try {
            StreamLine l = WireJson.MAPPER.readValue(json, StreamLine.class);
            return new ExecEvent.Stdout(l.text(), l.offset(), l.partial(), l.next());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The run result as a tree built field by field, as the encoder before the records did. */
    private static ObjectNode tree(ExecResult r) {
        ObjectNode n = WireJson.MAPPER.createObjectNode();
        n.put("exitCode", r.exitCode());
        n.put("stdout", r.stdout());
        n.put("stderr", r.stderr());
        n.put("stdoutTruncated", r.stdoutTruncated());
        n.put("stderrTruncated", r.stderrTruncated());
        n.put("stdoutBytes", r.stdoutBytes());
        n.put("stderrBytes", r.stderrBytes());
        n.put("termination", r.termination().name());
        n.put("durationNanos", r.duration().toNanos());
        return n;
    }

    private static void compare(int n, String what, Callable<Object> hand, Callable<Object> databind) throws Exception {
        double h = Double.MAX_VALUE;
        double d = Double.MAX_VALUE;
        for (int round = 0; round < 6; round++) {
            // the first rounds warm both up; the best of the rest counts
            h = Math.min(h, time(n, hand));
            d = Math.min(d, time(n, databind));
        }
        System.out.printf("%-70s hand %6.0f ns  databind %6.0f ns  databind/hand %.2f%n", what, h, d, d / h);
    }

    private static double time(int n, Callable<Object> op) throws Exception {
        long t0 = System.nanoTime();
        for (int i = 0; i < n; i++) {
            sink = op.call();
        }
        return (System.nanoTime() - t0) / (double) n;
    }
}
