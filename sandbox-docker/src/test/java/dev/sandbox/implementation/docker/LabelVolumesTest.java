package dev.sandbox.implementation.docker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sandbox.InvalidArgumentException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The labels recorded in volumes: what is written reads back the same, the newest record wins, and volumes this SDK
 * did not make that way (any program with the daemon's socket can make volumes) are skipped.
 */
class LabelVolumesTest {
    private static Map<String, String> volumeLabels(String session, String at, String text) {
        Map<String, String> m = new LinkedHashMap<>();
        m.put(LabelVolumes.OF, session);
        m.put(LabelVolumes.AT, at);
        m.put(LabelVolumes.TEXT, text);
        return m;
    }

    @Test
    void labelsReadBackAsWritten() {
        Map<String, String> labels = new LinkedHashMap<>();
        labels.put("a=b", "c=d\ne");
        labels.put("tenant", "acme \u2603");
        labels.put("empty", "");
        String text = LabelVolumes.encode(labels);
        assertThat(text).isASCII();
        LabelVolumes.Record r =
                LabelVolumes.record(LabelVolumes.NAME_PREFIX + "s-1-abc", volumeLabels("s-1", "17", text));
        assertThat(r).isNotNull();
        assertThat(r.sessionId()).isEqualTo("s-1");
        assertThat(r.labels()).containsExactlyEntriesOf(labels);
    }

    @Test
    void theNewestRecordOfASessionWins() {
        LabelVolumes.Record old =
                LabelVolumes.record(LabelVolumes.NAME_PREFIX + "s-1-a", volumeLabels("s-1", "100", "stage=warm"));
        LabelVolumes.Record mid =
                LabelVolumes.record(LabelVolumes.NAME_PREFIX + "s-1-b", volumeLabels("s-1", "200", "stage=claimed"));
        LabelVolumes.Record other =
                LabelVolumes.record(LabelVolumes.NAME_PREFIX + "s-2-c", volumeLabels("s-2", "50", "stage=other"));
        assertThat(LabelVolumes.newest(List.of(mid, old, other)))
                .containsExactlyInAnyOrderEntriesOf(
                        Map.of("s-1", Map.of("stage", "claimed"), "s-2", Map.of("stage", "other")));
    }

    @Test
    void volumesNotMadeThisWayAreSkippedAndTheProvidersOwnKeysDropped() {
        String ok = "ok=1";
        assertThat(LabelVolumes.record("someone-elses-volume", volumeLabels("s-1", "1", ok)))
                .isNull();
        assertThat(LabelVolumes.record(LabelVolumes.NAME_PREFIX + "s-2-x", volumeLabels("s-1", "1", ok)))
                .as("a name for another session")
                .isNull();
        assertThat(LabelVolumes.record(LabelVolumes.NAME_PREFIX + "../x-1", volumeLabels("../x", "1", ok)))
                .isNull();
        assertThat(LabelVolumes.record(LabelVolumes.NAME_PREFIX + "s-1-x", volumeLabels("s-1", "soon", ok)))
                .isNull();
        assertThat(LabelVolumes.record(
                        LabelVolumes.NAME_PREFIX + "s-1-x",
                        volumeLabels("s-1", "1", "k=" + "v".repeat(LabelVolumes.MAX_TEXT))))
                .as("oversized")
                .isNull();
        assertThat(LabelVolumes.record(LabelVolumes.NAME_PREFIX + "s-1-x", Map.of(LabelVolumes.OF, "s-1")))
                .isNull();
        assertThat(LabelVolumes.record(LabelVolumes.NAME_PREFIX + "s-1-x", null))
                .isNull();
        LabelVolumes.Record r = LabelVolumes.record(
                LabelVolumes.NAME_PREFIX + "s-1-x",
                volumeLabels("s-1", "1", "dev.sandbox.session=other\nno-equals\n=novalue\nbad%zz=1\nok=1"));
        assertThat(r.labels()).containsExactly(Map.entry("ok", "1"));
    }

    @Test
    void labelsTooLargeAreATypedError() {
        Map<String, String> labels = new LinkedHashMap<>();
        for (int i = 0; i < 64; i++) {
            labels.put("key" + i, "\u2603".repeat(400)); // 9 characters each once encoded
        }
        assertThatThrownBy(() -> LabelVolumes.encode(labels))
                .isInstanceOf(InvalidArgumentException.class)
                .hasMessageContaining("labels");
    }
}
