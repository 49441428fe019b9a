package dev.sandbox.implementation.docker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sandbox.BackendException;
import dev.sandbox.implementation.stats.StatsStream.Reading;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import org.junit.jupiter.api.Test;

/**
 * The daemon's stats answer read into figures: an answer as Docker 20.10 gives it on cgroup v1 (taken from this
 * machine's daemon), and hostile ones (what a compromised daemon or a runtime reporting for a sandbox could send):
 * wrong types, negative and huge numbers, a missing time, a container that does not run. Each figure that is not a
 * plain non-negative integer is {@code -1}; what that means is decided by the stream's checks (StatsStreamTest).
 */
class DockerStatsTest {
    private static final String REAL = """
            {"read":"2026-12-06T11:17:16.564774408Z","preread":"0001-01-01T00:00:00Z",
             "pids_stats":{"current":3,"limit":32},
             "blkio_stats":{"io_service_bytes_recursive":[
               {"major":8,"minor":0,"op":"Read","value":4096},{"major":8,"minor":0,"op":"Write","value":8192},
               {"major":8,"minor":16,"op":"Write","value":100},{"major":8,"minor":0,"op":"Total","value":12288}]},
             "cpu_stats":{"cpu_usage":{"total_usage":22609397,"percpu_usage":[14462937,8146460]}},
             "memory_stats":{"usage":835584,"max_usage":4083712,
               "stats":{"inactive_file":1,"total_inactive_file":28672},"limit":67108864},
             "networks":{"eth0":{"rx_bytes":1000,"tx_bytes":2000},"eth1":{"rx_bytes":1,"tx_bytes":2}}}
            """;

    private static Reading parse(String json) {
        return DockerStats.parse(json.getBytes(StandardCharsets.UTF_8));
    }

    @Test
    void anAnswerOfTheDaemonGivesEveryFigure() {
        Reading r = parse(REAL);
        assertThat(r.at()).isEqualTo(Instant.parse("2026-12-06T11:17:16.564774408Z"));
        assertThat(r.cpuNanos()).isEqualTo(22609397);
        assertThat(r.memoryBytes()).as("usage less inactive file pages").isEqualTo(835584 - 28672);
        assertThat(r.memoryPeakBytes()).isEqualTo(4083712);
        assertThat(r.pids()).isEqualTo(3);
        assertThat(r.diskWriteBytes()).isEqualTo(8292);
        assertThat(r.networkInBytes()).isEqualTo(1001);
        assertThat(r.networkOutBytes()).isEqualTo(2002);
    }

    @Test
    void withoutNetworksOrDevicesThoseFiguresAreUnknownAndTheV2NamesAreRead() {
        Reading r = parse("""
                {"read":"2026-12-06T11:17:16Z","pids_stats":{"current":1},
                 "blkio_stats":{"io_service_bytes_recursive":null},
                 "cpu_stats":{"cpu_usage":{"total_usage":5}},
                 "memory_stats":{"usage":1000,"stats":{"inactive_file":400}}}
                """);
        assertThat(r.memoryBytes()).isEqualTo(600);
        assertThat(r.memoryPeakBytes()).as("cgroup v2 has no max_usage").isEqualTo(-1);
        assertThat(r.diskWriteBytes()).isEqualTo(-1);
        assertThat(r.networkInBytes()).isEqualTo(-1);
        assertThat(r.networkOutBytes()).isEqualTo(-1);
    }

    @Test
    void hostileFiguresAreUnknownNotTrusted() {
        Reading r = parse("""
                {"read":"2026-12-06T11:17:16Z","pids_stats":{"current":"9"},
                 "blkio_stats":{"io_service_bytes_recursive":[{"op":"Write","value":9223372036854775807},
                                                              {"op":"write","value":9223372036854775807}]},
                 "cpu_stats":{"cpu_usage":{"total_usage":-5}},
                 "memory_stats":{"usage":18446744073709551615,"max_usage":1.5e300,
                                 "stats":{"total_inactive_file":999999999999}},
                 "networks":{"eth0":{"rx_bytes":[1],"tx_bytes":{"a":1}}}}
                """);
        assertThat(r.pids()).as("a string").isEqualTo(-1);
        assertThat(r.diskWriteBytes()).as("a sum that overflows").isEqualTo(-1);
        assertThat(r.cpuNanos()).as("negative").isEqualTo(-1);
        assertThat(r.memoryBytes()).as("beyond a long").isEqualTo(-1);
        assertThat(r.memoryPeakBytes()).as("a float").isEqualTo(-1);
        assertThat(r.networkInBytes()).isEqualTo(-1);
        assertThat(r.networkOutBytes()).isEqualTo(-1);
        // inactive pages above the usage: the usage as it is
        assertThat(parse("""
                        {"read":"2026-12-06T11:17:16Z","memory_stats":{"usage":10,"stats":{"total_inactive_file":99}}}
                        """).memoryBytes()).isEqualTo(10);
    }

    @Test
    void anAnswerThatIsNotStatsFailsTyped() {
        for (String bad : new String[] {
            "not json", "[1,2]", "{}", "{\"read\":\"yesterday\"}", "{\"read\":\"0001-01-01T00:00:00Z\"}", "null"
        }) {
            assertThatThrownBy(() -> parse(bad)).as(bad).isInstanceOf(BackendException.class);
        }
        assertThatThrownBy(() -> parse("{\"read\":\"" + "x".repeat(10_000) + "\"}"))
                .isInstanceOf(BackendException.class)
                .satisfies(e -> assertThat(e.getMessage().length()).isLessThan(300));
    }
}
