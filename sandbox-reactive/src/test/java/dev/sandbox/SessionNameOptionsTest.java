package dev.sandbox;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** A session's name survives every other option set after it, and is not taken from an argument called name. */
class SessionNameOptionsTest {

    @Test
    void theNameIsKeptByEveryOtherWither() {
        SessionOptions o = SessionOptions.defaults()
                .withName("cache-1")
                .withEnv("A", "1")
                .withEnv(java.util.Map.of("B", "2"))
                .withSecret("TOKEN", "t")
                .withLabel("k", "v")
                .withWorkdir("/tmp")
                .withLifetime(java.time.Duration.ofMinutes(1))
                .withIdleTimeout(java.time.Duration.ofMinutes(1))
                .withUnlimitedLifetime();
        assertThat(o.name()).contains("cache-1");
        assertThat(o.validate().toString()).contains("name=cache-1").doesNotContain("TOKEN=t");
        assertThat(SessionOptions.defaults().withEnv("X", "y").name()).isEmpty();
    }
}
