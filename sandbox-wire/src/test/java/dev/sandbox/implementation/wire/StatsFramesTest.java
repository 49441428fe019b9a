package dev.sandbox.implementation.wire;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sandbox.BackendException;
import dev.sandbox.SessionStats;
import dev.sandbox.implementation.stats.StatsStream.Reading;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Test;

/** A stats frame encoded by the server and read by the client, and hostile frames a server could send. */
class StatsFramesTest {
    private static StreamFrames.StreamItem item(String json) {
        byte[] b = json.getBytes(StandardCharsets.UTF_8);
        return StreamFrames.streamItem(b, 0, b.length);
    }

    private static Reading read(String json) {
        return StatsFrames.reading(((StreamFrames.StatsItem) item(json)).sample());
    }

    @Test
    void aSampleGoesThereAndBack() {
        SessionStats s = new SessionStats(
                Instant.parse("2026-12-06T11:00:00.123Z"), Duration.ofMillis(1500), 100, 200, 3, -1, 10, 20);
        Reading r = read(new String(StatsFrames.frame(s), StandardCharsets.UTF_8));
        assertThat(r).isEqualTo(new Reading(s.sampledAt(), 1_500_000_000L, 100, 200, 3, -1, 10, 20));
    }

    @Test
    void hostileFiguresAreUnknownAndASampleWithoutATimeFails() {
        Reading r = read("{\"type\":\"stats\",\"sample\":{\"sampledAt\":\"2026-12-06T11:00:00Z\",\"cpuNanos\":-4,"
                + "\"memoryBytes\":\"1\",\"memoryPeakBytes\":1e400,\"pids\":99999999999999999999999,"
                + "\"diskWriteBytes\":[1],\"networkInBytes\":{},\"networkOutBytes\":null}}");
        assertThat(new long[] {
                    r.cpuNanos(),
                    r.memoryBytes(),
                    r.memoryPeakBytes(),
                    r.pids(),
                    r.diskWriteBytes(),
                    r.networkInBytes(),
                    r.networkOutBytes()
                })
                .containsOnly(-1L);
        assertThatThrownBy(() -> read("{\"type\":\"stats\"}")).isInstanceOf(BackendException.class);
        assertThatThrownBy(() -> read("{\"type\":\"stats\",\"sample\":{\"sampledAt\":\"" + "9".repeat(5000) + "\"}}"))
                .isInstanceOf(BackendException.class)
                .satisfies(e -> assertThat(e.getMessage().length()).isLessThan(200));
    }
}
