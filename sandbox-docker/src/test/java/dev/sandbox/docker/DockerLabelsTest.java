package dev.sandbox.docker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.github.dockerjava.api.command.InspectVolumeResponse;
import dev.sandbox.InvalidArgumentException;
import dev.sandbox.SandboxSession;
import dev.sandbox.SessionClosedException;
import dev.sandbox.SessionInfo;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * Labels added to a running Docker session (a container's own labels cannot change): recorded in a volume, shown by
 * this provider's and another provider's {@code list} and {@code attach}, checked on the way in, removed with the
 * session or by a sweep once the session is gone.
 */
@RequiresDocker
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class DockerLabelsTest {
    private static final Duration WAIT = Duration.ofSeconds(60);

    private DockerTestSupport support;
    private DockerSandboxProvider provider;
    private DockerSandboxProvider other;

    @BeforeAll
    void start() {
        support = new DockerTestSupport();
        provider = DockerTestSupport.unsweptProvider();
        other = DockerTestSupport.unsweptProvider();
    }

    @AfterAll
    void stop() {
        other.close();
        support.finish(provider);
    }

    private List<String> ids(DockerSandboxProvider p, Map<String, String> labels) {
        return p.list(labels).map(SessionInfo::id).collectList().block(WAIT);
    }

    @Test
    void addedLabelsAreFoundByThisAndAnotherProviderAndReplaceOldValues() {
        SandboxSession s = provider.create(support.sessionOptions().withLabel("stage", "warm"))
                .block(WAIT);
        try {
            Map<String, String> added = new LinkedHashMap<>();
            added.put("stage", "claimed");
            added.put("query", "a=b&c d\nsecond line, \u00e9t\u00e9 \u2603");
            added.put("tenant", support.runId);
            s.addLabels(added).block(WAIT);

            assertThat(s.labels()).containsAllEntriesOf(added);
            Map<String, String> tenant = Map.of("tenant", support.runId);
            assertThat(ids(provider, tenant)).containsExactly(s.id());
            assertThat(ids(other, Map.of("tenant", support.runId, "stage", "claimed")))
                    .containsExactly(s.id());
            assertThat(ids(other, Map.of("tenant", support.runId, "stage", "warm")))
                    .as("the value replaced")
                    .isEmpty();
            assertThat(ids(other, Map.of(DockerTestSupport.RUN_LABEL, support.runId)))
                    .as("a label from the create still matches")
                    .contains(s.id());
            SandboxSession attached = other.attach(s.id()).block(WAIT);
            assertThat(attached.labels()).containsAllEntriesOf(added);
            assertThat(attached.labels()).containsEntry(DockerTestSupport.RUN_LABEL, support.runId);
            attached.close().block(WAIT);
            s.addLabels(Map.of("stage", "running")).block(WAIT);
            assertThat(ids(other, Map.of("tenant", support.runId, "stage", "running")))
                    .containsExactly(s.id());
            assertThat(labelVolumes(s.id()))
                    .as("one record per session, the newest")
                    .hasSize(1);
        } finally {
            s.destroy().block(WAIT);
        }
        assertThat(ids(other, Map.of("tenant", support.runId)))
                .as("a destroyed session")
                .isEmpty();
        assertThat(labelVolumes(s.id())).as("records of a destroyed session").isEmpty();
    }

    private List<String> labelVolumes(String sessionId) {
        List<InspectVolumeResponse> found = support.docker
                .listVolumesCmd()
                .withFilter("label", List.of("dev.sandbox.labels-of=" + sessionId))
                .exec()
                .getVolumes();
        return found == null
                ? List.of()
                : found.stream().map(InspectVolumeResponse::getName).toList();
    }

    @Test
    void aSweepRemovesTheRecordsOfSessionsThatAreGoneOnceTheyAreAMinuteOld() {
        String gone = "gone-" + support.runId.substring(0, 8);
        String fresh = "fresh-" + support.runId.substring(0, 8);
        long now = System.currentTimeMillis();
        for (String[] v : new String[][] {{gone, Long.toString(now - 120_000)}, {fresh, Long.toString(now)}}) {
            support.docker
                    .createVolumeCmd()
                    .withName("dev-sandbox-labels-" + v[0] + "-0")
                    .withLabels(Map.of(
                            "dev.sandbox.labels-of", v[0], "dev.sandbox.labels-at", v[1], "dev.sandbox.labels", "k=v"))
                    .exec();
        }
        try {
            other.sweep().block(WAIT);
            assertThat(labelVolumes(gone)).as("a gone session's old record").isEmpty();
            assertThat(labelVolumes(fresh)).as("a record too young to tell").hasSize(1);
        } finally {
            support.docker.removeVolumeCmd("dev-sandbox-labels-" + fresh + "-0").exec();
            if (!labelVolumes(gone).isEmpty()) {
                support.docker
                        .removeVolumeCmd("dev-sandbox-labels-" + gone + "-0")
                        .exec();
            }
        }
    }

    @Test
    void badLabelsAreRefusedNamingTheFieldAndChangeNothing() {
        SandboxSession s = provider.create(support.sessionOptions()).block(WAIT);
        try {
            assertThatThrownBy(() ->
                            s.addLabels(Map.of("dev.sandbox.session", "other")).block(WAIT))
                    .isInstanceOf(InvalidArgumentException.class)
                    .satisfies(e ->
                            assertThat(((InvalidArgumentException) e).field()).isEqualTo("labels"))
                    .hasMessageContaining("dev.sandbox.");
            assertThatThrownBy(() -> s.addLabels(Map.of()).block(WAIT))
                    .isInstanceOf(InvalidArgumentException.class)
                    .hasMessageContaining("labels");
            assertThatThrownBy(
                            () -> s.addLabels(Map.of("big", "x".repeat(5000))).block(WAIT))
                    .isInstanceOf(InvalidArgumentException.class)
                    .hasMessageContaining("big");
            assertThat(s.labels()).doesNotContainKeys("dev.sandbox.session", "big");
            SandboxSession attached = other.attach(s.id()).block(WAIT);
            assertThat(attached.labels()).doesNotContainKeys("big");
            attached.close().block(WAIT);
        } finally {
            s.destroy().block(WAIT);
        }
        assertThatThrownBy(() -> s.addLabels(Map.of("late", "yes")).block(WAIT))
                .isInstanceOf(SessionClosedException.class);
    }
}
