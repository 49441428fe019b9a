package dev.sandbox.samples.webflux;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.sandbox.InvalidArgumentException;
import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringApplication;
import org.springframework.core.NestedExceptionUtils;

/** The provider comes from {@code sandbox.provider}; a name this build lacks stops the application with a clear error. */
class ProviderSelectionTest {

    @Test
    void an_unknown_provider_stops_the_application_naming_the_property() {
        Throwable failure = catchThrowable(() -> SpringApplication.run(
                        WebfluxDemoApplication.class,
                        "--server.port=0",
                        "--spring.main.banner-mode=off",
                        "--sandbox.provider=firecracker")
                .close());
        Throwable cause = NestedExceptionUtils.getMostSpecificCause(failure);
        assertThat(cause).isInstanceOf(InvalidArgumentException.class).hasMessageContaining("'firecracker'");
        assertThat(((InvalidArgumentException) cause).field()).isEqualTo("sandbox.provider");
    }
}
