package dev.sandbox.implementation.docker;

import static org.assertj.core.api.Assertions.assertThat;

import com.github.dockerjava.api.model.Ulimit;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The pure parts of the gVisor failure handling: limits per runtime, causes of death, event framing. */
class DockerLimitsAndDeathTest {

    @Test
    void runcGetsTheUsersPidsLimitAndNoNprocLimit() {
        assertThat(DockerLimits.dockerPidsLimit(64, "runc")).isEqualTo(64);
        assertThat(DockerLimits.ulimits(64, "runc")).isEmpty();
    }

    @Test
    void gvisorGetsTheUsersLimitInsideAndRoomForItsOwnThreadsOutside() {
        // an idle sandbox already holds about 57 host threads: the user's 64 must not be the host's limit
        assertThat(DockerLimits.dockerPidsLimit(64, "runsc")).isEqualTo(1024 + 16 * 64);
        assertThat(DockerLimits.ulimits(64, "runsc")).containsExactly(new Ulimit("nproc", 64L, 64L));
        assertThat(DockerLimits.dockerPidsLimit(Long.MAX_VALUE, "runsc")).isEqualTo(Long.MAX_VALUE);
    }

    @Test
    void theCauseNamesOutOfMemoryTheProcessLimitAndKillsFromOutside() {
        assertThat(ContainerDeath.cause(true, 137L, "", "runsc", 64L << 20, null))
                .contains("out of memory")
                .contains("64 MiB");
        assertThat(ContainerDeath.cause(false, 2L, null, "runsc", null, 1088L)).contains("process limit");
        assertThat(ContainerDeath.cause(false, 137L, null, "runc", null, null)).contains("killed from outside");
        assertThat(ContainerDeath.cause(false, 1L, "oci runtime error", "runc", null, null))
                .contains("exit code 1")
                .contains("oci runtime error");
        assertThat(ContainerDeath.describe(Map.of("exitCode", "137"), true)).contains("out of memory");
        assertThat(ContainerDeath.describe(Map.of("exitCode", "137"), false)).contains("killed from outside");
    }

    @Test
    void eventsAreCutIntoLinesAndAnOverlongOneIsDroppedWhole() {
        DockerEvents.LineSplitter split = new DockerEvents.LineSplitter(8);
        List<String> lines = new ArrayList<>();
        for (String chunk : List.of("ab", "c\nde", "f\n0123456789", "abc\nxy\n")) {
            split.feed(chunk.getBytes(StandardCharsets.US_ASCII))
                    .forEach(l -> lines.add(new String(l, StandardCharsets.US_ASCII)));
        }
        assertThat(lines).containsExactly("abc", "def", "xy");
    }

    @Test
    void aDieEventGivesItsContainerAndExitCode() {
        DockerEvents events = new DockerEvents(null, e -> {});
        DockerEvents.Event e =
                events.parse(("{\"status\":\"die\",\"id\":\"c1\",\"Type\":\"container\",\"Action\":\"die\","
                                + "\"Actor\":{\"ID\":\"c1\",\"Attributes\":{\"exitCode\":\"137\",\"dev.sandbox.session\":\"s\"}},"
                                + "\"time\":1,\"timeNano\":1000000001}")
                        .getBytes(StandardCharsets.UTF_8));
        assertThat(e.action()).isEqualTo("die");
        assertThat(e.containerId()).isEqualTo("c1");
        assertThat(e.attributes()).containsEntry("exitCode", "137");
        assertThat(events.parse("not json".getBytes(StandardCharsets.UTF_8))).isNull();
    }
}
