package dev.sandbox.samples.webflux;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import java.time.Duration;
import org.junit.jupiter.api.Test;
import reactor.blockhound.BlockingOperationError;
import reactor.core.publisher.Mono;

/** The other tests of this module mean something about blocking only if BlockHound is watching. */
class BlockHoundInstalledTest {

    @Test
    void blocking_on_a_non_blocking_thread_is_reported() {
        Throwable failure = catchThrowable(() -> Mono.delay(Duration.ofMillis(1))
                .doOnNext(tick -> {
                    try {
                        Thread.sleep(1);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                })
                .block(Duration.ofSeconds(5)));
        Throwable blocking = failure;
        while (blocking != null && !(blocking instanceof BlockingOperationError)) {
            blocking = blocking.getCause();
        }
        assertThat(blocking).as("BlockingOperationError in %s", failure).isNotNull();
    }
}
