package dev.sandbox.tck;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sandbox.InvalidArgumentException;
import dev.sandbox.SandboxSession;
import dev.sandbox.SessionInfo;
import dev.sandbox.UnsupportedFeatureException;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * Labels added to a running session ({@link SandboxSession#addLabels}): either the provider shows them on the handle,
 * in its {@code list} at once and on a new handle from {@code attach}, or it says it cannot with {@link
 * UnsupportedFeatureException} and changes nothing. Bad labels are refused the same way on every provider.
 *
 * <pre>{@code
 * class MyProviderConformanceTest implements SandboxProviderConformance { ... } // includes these
 * }</pre>
 */
public interface LabelConformance extends ConformanceBase {

    /** Required: added labels are listed and attached by, replacing an old value; or the feature is refused. */
    @Test
    default void addedLabelsAreFoundByListAndAttachOrRefusedAsUnsupported() {
        String mark = UUID.randomUUID().toString();
        SandboxSession s = provider()
                .create(sessionOptions().withLabel("kit-stage", "warm-" + mark))
                .block(WAIT);
        try {
            Map<String, String> added = Map.of("kit-stage", "claimed-" + mark, "kit-mark", mark);
            try {
                s.addLabels(added).block(WAIT);
            } catch (UnsupportedFeatureException unsupported) {
                assertThat(s.labels()).doesNotContainKey("kit-mark");
                assertThat(ids(Map.of("kit-mark", mark))).isEmpty();
                return;
            }
            assertThat(s.labels()).containsAllEntriesOf(added);
            assertThat(ids(Map.of("kit-mark", mark))).containsExactly(s.id());
            assertThat(ids(Map.of("kit-stage", "warm-" + mark)))
                    .as("the replaced value")
                    .isEmpty();
            SandboxSession again = provider().attach(s.id()).block(WAIT);
            assertThat(again.labels()).containsAllEntriesOf(added);
            again.close().block(WAIT);
        } finally {
            s.destroy().block(WAIT);
        }
    }

    /** Required: an empty addition and an empty key are refused naming {@code labels}, whatever the provider. */
    @Test
    default void badLabelsAreRefusedNamingTheField() {
        inSession(s -> {
            for (Map<String, String> bad : java.util.List.of(Map.<String, String>of(), Map.of("", "x"))) {
                assertThatThrownBy(() -> s.addLabels(bad).block(WAIT))
                        .isInstanceOfAny(InvalidArgumentException.class, UnsupportedFeatureException.class)
                        .satisfies(e -> {
                            if (e instanceof InvalidArgumentException iae) {
                                assertThat(iae.field()).isEqualTo("labels");
                            }
                        });
            }
        });
    }

    private java.util.List<String> ids(Map<String, String> labels) {
        return provider().list(labels).map(SessionInfo::id).collectList().block(WAIT);
    }
}
