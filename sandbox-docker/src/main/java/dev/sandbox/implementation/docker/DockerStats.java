package dev.sandbox.implementation.docker;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.sandbox.BackendException;
import dev.sandbox.implementation.stats.StatsStream.Reading;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.Iterator;
import java.util.Map;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * A container's resource use from the daemon's stats API ({@code GET /containers/{id}/stats?stream=true}): what
 * the daemon read from the container's cgroup
 * (or, under gVisor, what runsc reports for its sandbox). Chosen over reading the cgroup through the agent although
 * the daemon reads only once a second (a one-shot question waits for its next reading: about 1 s, against about
 * 1 ms through the agent on runc; the stream gives its first reading at once; README, "Resource stats"): its figures come from outside the sandbox, asking it is not activity for the
 * agent's idle timer, and it works under gVisor, which has no cgroup files inside.
 *
 * <p>A reading is held up to {@value #MAX_BODY} bytes (a longer one is dropped) and every figure is read as
 * a plain integer or not at all ({@code -1}): the checks of {@link dev.sandbox.implementation.stats.StatsStream}
 * decide what a missing or absurd figure means.
 */
final class DockerStats {
    private static final ObjectMapper JSON = new ObjectMapper();

    /** The longest answer read; a container with many networks answers a few KiB. */
    static final int MAX_BODY = 256 * 1024;

    /** The time the daemon gives a container that does not run. */
    private static final Instant NOT_RUNNING = Instant.parse("1970-01-01T00:00:01Z");

    private DockerStats() {}

    /** A reading of a container that does not run (the daemon's zero time). */
    static final class NotRunning extends BackendException {
        private static final long serialVersionUID = 1L;

        NotRunning() {
            super("the container does not run: the daemon has no stats of it", null);
        }
    }

    /**
     * The container's readings as the daemon streams them ({@code stream=true}): the first at once, then one per
     * tick of the daemon's collector (once a second). One connection, read as the subscriber asks; each reading of at
     * most {@value #MAX_BODY} bytes (a longer one is dropped). Completes when the daemon ends the stream (the
     * container stopped).
     *
     * @param data the daemon's data plane
     * @param containerId the container
     * @return the readings
     */
    static Flux<Reading> stream(DockerDataPlane data, String containerId) {
        String uri = "/containers/" + containerId + "/stats?stream=true";
        return Flux.defer(() -> {
                    DockerEvents.LineSplitter lines = new DockerEvents.LineSplitter(MAX_BODY);
                    return data.http().get().uri(uri).response((resp, body) -> {
                        int status = resp.status().code();
                        if (status != 200) {
                            return body.asByteArray()
                                    .take(1)
                                    .map(b -> new String(b, 0, Math.min(b.length, 512), StandardCharsets.UTF_8))
                                    .defaultIfEmpty(resp.status().reasonPhrase())
                                    .flatMap(m -> Mono.<Reading>error(new BackendException(
                                            "the daemon refused the stats of container " + containerId + " (HTTP "
                                                    + status + "): " + m.strip(),
                                            null)));
                        }
                        // a reading without a time (the container stopped) ends the stream as the daemon's end does
                        return body.asByteArray()
                                .concatMapIterable(lines::feed)
                                .map(DockerStats::parse)
                                .onErrorResume(NotRunning.class, e -> Mono.empty());
                    });
                })
                .onErrorMap(
                        e -> !(e instanceof BackendException),
                        e -> DockerErrors.connection(data.dockerHost(), "the stats of a container", e));
    }

    /**
     * Parses one answer of the stats API.
     *
     * @param json the answer
     * @return the reading; figures the answer lacks are {@code -1}
     */
    static Reading parse(byte[] json) {
        JsonNode n;
        try {
            n = JSON.readTree(json);
        } catch (IOException e) {
            throw new BackendException("the daemon's stats are not JSON: " + e.getMessage(), null);
        }
        if (n == null || !n.isObject()) {
            throw new BackendException("the daemon's stats are not a JSON object", null);
        }
        Instant at = time(n.path("read").asText(""));
        JsonNode memory = n.path("memory_stats");
        long usage = figure(memory.path("usage"));
        // what `docker stats` shows: less the page cache the kernel may drop (cgroup v1 and v2 names)
        long inactive = figure(memory.path("stats").path("total_inactive_file"));
        if (inactive < 0) {
            inactive = figure(memory.path("stats").path("inactive_file"));
        }
        long inUse = usage >= 0 && inactive >= 0 && inactive <= usage ? usage - inactive : usage;
        return new Reading(
                at,
                figure(n.path("cpu_stats").path("cpu_usage").path("total_usage")),
                inUse,
                figure(memory.path("max_usage")),
                figure(n.path("pids_stats").path("current")),
                written(n.path("blkio_stats").path("io_service_bytes_recursive")),
                network(n.path("networks"), "rx_bytes"),
                network(n.path("networks"), "tx_bytes"));
    }

    /** The daemon's time of the reading; a container that does not run has none (year 1), nor a garbled one. */
    private static Instant time(String text) {
        Instant at;
        try {
            at = Instant.parse(text);
        } catch (DateTimeParseException e) {
            throw new BackendException("the daemon's stats have no time of reading: '" + clip(text) + "'", null);
        }
        if (at.isBefore(NOT_RUNNING)) {
            throw new NotRunning();
        }
        return at;
    }

    private static String clip(String s) {
        return s.length() > 64 ? s.substring(0, 64) + "..." : s;
    }

    /** A non-negative integer figure, or {@code -1}. */
    private static long figure(JsonNode v) {
        return v.isIntegralNumber() && v.canConvertToLong() && v.asLong() >= 0 ? v.asLong() : -1;
    }

    /** The bytes written to block devices, summed over devices; {@code -1} when the daemon lists none. */
    private static long written(JsonNode entries) {
        if (!entries.isArray() || entries.isEmpty()) {
            return -1;
        }
        long sum = 0;
        for (JsonNode e : entries) {
            if (e.path("op").asText("").equalsIgnoreCase("write")) {
                long v = figure(e.path("value"));
                if (v < 0 || sum > Long.MAX_VALUE - v) {
                    return -1;
                }
                sum += v;
            }
        }
        return sum;
    }

    /** A network figure summed over the interfaces; {@code -1} without interfaces (network {@code none}). */
    private static long network(JsonNode networks, String field) {
        if (!networks.isObject() || networks.isEmpty()) {
            return -1;
        }
        long sum = 0;
        for (Iterator<Map.Entry<String, JsonNode>> it = networks.properties().iterator(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> e = it.next();
            if (e.getKey().equals("lo")) {
                continue;
            }
            long v = figure(e.getValue().path(field));
            if (v < 0 || sum > Long.MAX_VALUE - v) {
                return -1;
            }
            sum += v;
        }
        return sum;
    }
}
