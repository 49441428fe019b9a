package dev.sandbox.local;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sandbox.BackgroundProcess;
import dev.sandbox.ExecEvent;
import dev.sandbox.ExecOptions;
import dev.sandbox.SandboxSession;
import dev.sandbox.SessionOptions;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import reactor.test.StepVerifier;

/** Reading a background process's output from an offset past what it has written. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class LocalOutputOffsetTest {
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
    void anOffsetPastTheEndOfAnEndedProcessYieldsJustTheExit() {
        SandboxSession s = provider.create(SessionOptions.defaults()).block(WAIT);
        try {
            BackgroundProcess p = s.start(ExecOptions.shell("echo hi; exit 4")).block(WAIT);
            ExecEvent.Exit exit = p.exit().block(WAIT);

            StepVerifier.create(p.output(1000, 0))
                    .expectNext(exit)
                    .expectComplete()
                    .verify(WAIT);
            StepVerifier.create(p.snapshot(1000, 1000))
                    .expectNext(exit)
                    .expectComplete()
                    .verify(WAIT);
        } finally {
            s.destroy().block(WAIT);
        }
    }

    @Test
    void anOffsetPastTheEndOfARunningProcessWaitsForTheOutputToGetThere() {
        SandboxSession s = provider.create(SessionOptions.defaults()).block(WAIT);
        try {
            BackgroundProcess p = s.start(ExecOptions.shell("echo one; read x; echo two; echo three"))
                    .block(WAIT);
            // "one\n" is 4 bytes; ask from 8, the start of "three", before it is written
            StepVerifier.create(p.snapshot(8, 0)).expectComplete().verify(WAIT);
            StepVerifier.create(p.output(8, 0))
                    .then(() -> p.writeStdin(java.nio.ByteBuffer.wrap("go\n".getBytes()))
                            .block(WAIT))
                    .assertNext(e -> assertThat(e).isEqualTo(new ExecEvent.Stdout("three", 8, false, 14)))
                    .assertNext(e -> assertThat(e).isInstanceOf(ExecEvent.Exit.class))
                    .expectComplete()
                    .verify(WAIT);
        } finally {
            s.destroy().block(WAIT);
        }
    }
}
