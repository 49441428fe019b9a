package dev.sandbox.tck;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sandbox.ExecOptions;
import dev.sandbox.SandboxSession;
import dev.sandbox.SessionClosedException;
import dev.sandbox.SessionEndReason;
import dev.sandbox.SessionNotFoundException;
import dev.sandbox.SessionStatus;
import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Test;
import reactor.test.StepVerifier;

/** Sessions end by themselves: lifetime and idle timeouts, both extendable, and say why they ended. */
public interface LifetimeConformance extends ConformanceBase {

    private SandboxSession create(Duration lifetime, Duration idle) {
        var options = sessionOptions().withLifetime(lifetime);
        if (idle != null) {
            options = options.withIdleTimeout(idle);
        }
        return provider().create(options).block(WAIT);
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    private void expectEnded(SandboxSession s, SessionEndReason reason) {
        StepVerifier.create(s.run(ExecOptions.of("true")))
                .expectErrorSatisfies(e -> {
                    assertThat(e).isInstanceOf(SessionClosedException.class);
                    assertThat(((SessionClosedException) e).reason()).isEqualTo(reason);
                })
                .verify(WAIT);
        StepVerifier.create(provider().attach(s.id()))
                .expectError(SessionNotFoundException.class)
                .verify(WAIT);
    }

    /** Waits until the session reports that it ended, or the limit passes. */
    private static void awaitEnd(SandboxSession s, Duration limit) {
        long deadline = System.nanoTime() + limit.toNanos();
        while (System.nanoTime() < deadline) {
            try {
                s.ping().block(WAIT);
            } catch (SessionClosedException e) {
                return;
            }
            sleep(100);
        }
    }

    /** Required: Lifetime ends the session and status says when. */
    @Test
    default void lifetimeEndsTheSessionAndStatusSaysWhen() {
        Instant before = Instant.now();
        SandboxSession s = create(Duration.ofMillis(1500), null);
        try {
            SessionStatus status = s.ping().block(WAIT);
            assertThat(status.expiresAt())
                    .isBetween(before.plusMillis(1400), Instant.now().plusMillis(1600));
            assertThat(status.endReason()).isNull();
            assertThat(s.run(ExecOptions.of("true")).block(WAIT).exitCode()).isZero();
            awaitEnd(s, Duration.ofSeconds(10));
            expectEnded(s, SessionEndReason.LIFETIME_EXPIRED);
        } finally {
            s.destroy().onErrorComplete().block(WAIT);
        }
    }

    /** Required: Lifetime can be extended on a live session. */
    @Test
    default void lifetimeCanBeExtendedOnALiveSession() {
        SandboxSession s = create(Duration.ofMillis(1000), null);
        try {
            s.setLifetime(Duration.ofSeconds(20)).block(WAIT);
            sleep(1800);
            assertThat(s.run(ExecOptions.of("true")).block(WAIT).exitCode()).isZero();
            assertThat(s.ping().block(WAIT).expiresAt()).isAfter(Instant.now().plusSeconds(15));
        } finally {
            s.destroy().block(WAIT);
        }
    }

    /** Required: Idle timeout ends a quiet session only. */
    @Test
    default void idleTimeoutEndsAQuietSessionOnly() {
        SandboxSession s = create(Duration.ofMinutes(5), Duration.ofMillis(1500));
        try {
            assertThat(s.ping().block(WAIT).idleTimeout()).isEqualTo(Duration.ofMillis(1500));
            // activity every half second keeps it alive well past its idle timeout
            for (int i = 0; i < 6; i++) {
                s.files().list(".").collectList().block(WAIT);
                sleep(500);
            }
            // a command that runs longer than the idle timeout is activity too
            assertThat(s.run(ExecOptions.shell("sleep 2; echo ok")).block(WAIT).stdout())
                    .isEqualTo("ok\n");
            awaitEnd(s, Duration.ofSeconds(10));
            expectEnded(s, SessionEndReason.IDLE_TIMEOUT);
        } finally {
            s.destroy().onErrorComplete().block(WAIT);
        }
    }

    /** Required: Last activity follows every operation. */
    @Test
    default void lastActivityFollowsEveryOperation() {
        inSession(s -> {
            Instant first = s.ping().block(WAIT).lastActivity();
            sleep(50);
            assertThat(s.ping().block(WAIT).lastActivity())
                    .as("ping is not activity")
                    .isEqualTo(first);
            s.files().list(".").collectList().block(WAIT);
            Instant afterFiles = s.ping().block(WAIT).lastActivity();
            assertThat(afterFiles).isAfter(first);
            sleep(50);
            s.run(ExecOptions.of("true")).block(WAIT);
            assertThat(s.ping().block(WAIT).lastActivity()).isAfter(afterFiles);
        });
    }
}
