package dev.sandbox.implementation.wire;

import com.fasterxml.jackson.databind.JsonNode;
import dev.sandbox.BackendException;
import dev.sandbox.SessionStats;
import dev.sandbox.implementation.stats.StatsStream.Reading;
import java.time.Instant;
import java.time.format.DateTimeParseException;

/**
 * A resource sample on the wire, a frame of {@code GET /v1/sessions/{id}/stats}: {@code
 * {"type":"stats","sample":{"sampledAt":"2026-...Z","cpuNanos":N,"memoryBytes":N,"memoryPeakBytes":N,"pids":N,
 * "diskWriteBytes":N,"networkInBytes":N,"networkOutBytes":N}}}, unknown figures {@code -1}. The client reads a frame
 * as a {@link Reading}, each figure a plain integer or {@code -1}, and checks it as every provider's readings are
 * checked: a server is not trusted more than a sandbox.
 */
public final class StatsFrames {
    private StatsFrames() {}

    /**
     * Encodes a sample.
     *
     * @param s the sample
     * @return the JSON bytes of the frame
     */
    public static byte[] frame(SessionStats s) {
        return WireJson.bytes(new StatsBody(
                "stats",
                new SampleBody(
                        s.sampledAt().toString(),
                        s.cpuTime().toNanos(),
                        s.memoryBytes(),
                        s.memoryPeakBytes(),
                        s.pids(),
                        s.diskWriteBytes(),
                        s.networkInBytes(),
                        s.networkOutBytes())));
    }

    /**
     * Reads the {@code sample} of a frame.
     *
     * @param n the sample object
     * @return the reading; a figure that is not a non-negative integer is {@code -1}
     * @throws BackendException when the sample has no time
     */
    public static Reading reading(JsonNode n) {
        Instant at;
        String text = n.path("sampledAt").asText("");
        try {
            at = Instant.parse(text);
        } catch (DateTimeParseException e) {
            throw new BackendException(
                    "the server sent a stats sample without a time: '"
                            + (text.length() > 64 ? text.substring(0, 64) + "..." : text) + "'",
                    null);
        }
        return new Reading(
                at,
                figure(n.path("cpuNanos")),
                figure(n.path("memoryBytes")),
                figure(n.path("memoryPeakBytes")),
                figure(n.path("pids")),
                figure(n.path("diskWriteBytes")),
                figure(n.path("networkInBytes")),
                figure(n.path("networkOutBytes")));
    }

    private static long figure(JsonNode v) {
        return v.isIntegralNumber() && v.canConvertToLong() && v.asLong() >= 0 ? v.asLong() : -1;
    }

    /**
     * A stats frame.
     *
     * @param type {@code stats}
     * @param sample the figures
     */
    record StatsBody(String type, SampleBody sample) {}

    /**
     * The figures of a sample.
     *
     * @param sampledAt when, ISO-8601
     * @param cpuNanos CPU time in nanoseconds
     * @param memoryBytes memory in use
     * @param memoryPeakBytes peak memory
     * @param pids processes
     * @param diskWriteBytes disk written, or -1
     * @param networkInBytes bytes received, or -1
     * @param networkOutBytes bytes sent, or -1
     */
    record SampleBody(
            String sampledAt,
            long cpuNanos,
            long memoryBytes,
            long memoryPeakBytes,
            long pids,
            long diskWriteBytes,
            long networkInBytes,
            long networkOutBytes) {}
}
