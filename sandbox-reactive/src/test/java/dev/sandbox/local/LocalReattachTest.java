package dev.sandbox.local;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sandbox.BackgroundProcess;
import dev.sandbox.ExecEvent;
import dev.sandbox.ExecOptions;
import dev.sandbox.SandboxSession;
import dev.sandbox.SessionClosedException;
import dev.sandbox.SessionEndReason;
import dev.sandbox.SessionOptions;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import reactor.test.StepVerifier;

/** A background process found again through another handle of its session belongs to that handle. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class LocalReattachTest {
    private static final Duration WAIT = Duration.ofSeconds(10);

    private LocalSandboxProvider provider;

    @BeforeAll
    void start() {
        provider = LocalSandboxProvider.create();
    }

    @AfterAll
    void stop() {
        provider.close();
    }

    @Test
    void aProcessStartedThroughAClosedHandleCanBeUsedThroughAnother() {
        SandboxSession owner = provider.create(SessionOptions.defaults()).block(WAIT);
        try {
            SandboxSession starter = provider.attach(owner.id()).block(WAIT);
            BackgroundProcess started =
                    starter.start(ExecOptions.shell("echo hello; exec cat")).block(WAIT);
            starter.close().block(WAIT);

            // the starter's own reference follows its closed handle
            StepVerifier.create(started.output(0, 0))
                    .expectErrorSatisfies(e -> assertThat(e)
                            .isInstanceOfSatisfying(
                                    SessionClosedException.class,
                                    closed -> assertThat(closed.reason()).isEqualTo(SessionEndReason.HANDLE_CLOSED)))
                    .verify(WAIT);

            // another handle re-attaches to it by id and can do everything with it
            SandboxSession other = provider.attach(owner.id()).block(WAIT);
            BackgroundProcess again = other.process(started.id()).block(WAIT);
            StepVerifier.create(again.output(0, 0).take(1))
                    .expectNext(new ExecEvent.Stdout("hello", 0, false, 6))
                    .expectComplete()
                    .verify(WAIT);
            again.writeStdin(java.nio.ByteBuffer.wrap("echoed\n".getBytes())).block(WAIT);
            again.closeStdin().block(WAIT);
            assertThat(again.collect().block(WAIT).stdout()).isEqualTo("hello\nechoed\n");
            assertThat(again.exitNow()).map(ExecEvent.Exit::code).contains(0);

            // and once that handle is closed, its view stops too
            other.close().block(WAIT);
            StepVerifier.create(again.kill())
                    .expectError(SessionClosedException.class)
                    .verify(WAIT);
        } finally {
            owner.destroy().block(WAIT);
        }
    }
}
