package dev.sandbox.pool;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sandbox.ExecOptions;
import dev.sandbox.ExecResult;
import dev.sandbox.InvalidArgumentException;
import dev.sandbox.SandboxException;
import dev.sandbox.SandboxSession;
import dev.sandbox.SessionInfo;
import dev.sandbox.SessionOptions;
import dev.sandbox.local.LocalSandboxProvider;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * The pool on the local provider (real processes, real directories): warm sessions handed out at once and customised
 * at the claim, never handed out twice and replaced after release; the caps, the queue and its timeout; cancelled
 * waiters that leak nothing; creates that cannot pass failing the waiting callers with their cause, backing off.
 */
class SandboxPoolTest {
    private static final Duration WAIT = Duration.ofSeconds(30);

    private LocalSandboxProvider provider;

    @BeforeEach
    void start() {
        provider = LocalSandboxProvider.create();
    }

    @AfterEach
    void stop() {
        provider.close();
    }

    private int sessionsAlive() {
        List<SessionInfo> all = provider.list(Map.of()).collectList().block(WAIT);
        return all == null ? 0 : all.size();
    }

    private static void await(String what, Supplier<Boolean> condition) {
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (!condition.get()) {
            if (System.nanoTime() - deadline >= 0) {
                System.out.println("THREADS at the failure of " + what);
                Thread.getAllStackTraces().forEach((t, st) -> {
                    System.out.println(t);
                    for (StackTraceElement e : st) {
                        System.out.println("    " + e);
                    }
                });
            }
            assertThat(System.nanoTime() - deadline).as("waiting for " + what).isNegative();
            try {
                Thread.sleep(10);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError(e);
            }
        }
    }

    @Test
    void aClaimTakesAWarmSessionCustomisedAndItsReleaseDestroysItAndRefills() {
        try (SandboxPool pool =
                SandboxPool.builder(provider).warm(3).refillPerSecond(100).build()) {
            await("three warm sessions", () -> pool.stats().warm() == 3);
            // (the local provider keeps files inside the session's directory: a relative path; the Docker test uses
            // absolute ones and a working directory)
            Claim claim = Claim.defaults()
                    .withEnv("TENANT", "acme")
                    .withLabel("tenant", "acme")
                    .withFile("in/input.txt", "hello".getBytes(StandardCharsets.UTF_8));
            SandboxSession s = pool.acquire(claim).block(WAIT);
            assertThat(pool.stats().inUse()).isEqualTo(1);
            assertThat(pool.stats().coldAcquires()).isZero();
            // the claim's label: on the session, and found by list and attach; the warm ones do not have it
            assertThat(s.labels()).containsEntry("tenant", "acme");
            assertThat(provider.list(Map.of("tenant", "acme"))
                            .map(SessionInfo::id)
                            .collectList()
                            .block(WAIT))
                    .containsExactly(s.id());
            assertThat(provider.attach(s.id()).block(WAIT).labels()).containsEntry("tenant", "acme");
            ExecResult r =
                    s.run(ExecOptions.shell("echo $TENANT; cat in/input.txt")).block(WAIT);
            assertThat(r.stdout()).isEqualTo("acme\nhello");
            // a command's own variables win over the claim's
            assertThat(s.run(ExecOptions.shell("echo $TENANT").withEnv("TENANT", "mine"))
                            .block(WAIT)
                            .stdout())
                    .isEqualTo("mine\n");
            String id = s.id();
            s.close().block(WAIT);
            assertThat(provider.list(Map.of())
                            .map(SessionInfo::id)
                            .collectList()
                            .block(WAIT))
                    .doesNotContain(id);
            await(
                    "the pool refilled",
                    () -> pool.stats().warm() == 3 && pool.stats().inUse() == 0);
            // never handed out twice
            List<String> ids = new ArrayList<>();
            for (int i = 0; i < 5; i++) {
                SandboxSession again = pool.acquire().block(WAIT);
                ids.add(again.id());
                again.destroy().block(WAIT);
            }
            assertThat(ids).doesNotHaveDuplicates().doesNotContain(id);
        }
        assertThat(sessionsAlive()).isZero();
    }

    @Test
    void pastTheCapCallersWaitInOrderUpToTheQueueAndTheTimeoutThenFailRetryably() {
        try (SandboxPool pool = SandboxPool.builder(provider)
                .warm(0)
                .maxSessions(2)
                .maxWaiting(2)
                .acquireTimeout(Duration.ofMillis(500))
                .refillPerSecond(100)
                .build()) {
            SandboxSession a = pool.acquire().block(WAIT);
            SandboxSession b = pool.acquire().block(WAIT);
            assertThat(pool.stats().coldAcquires()).isEqualTo(2);
            List<Mono<SandboxSession>> waiting =
                    List.of(pool.acquire().cache(), pool.acquire().cache());
            waiting.forEach(m -> m.subscribe(x -> {}, e -> {}));
            await("two waiting", () -> pool.stats().waiting() == 2);
            // a third waiter is one too many: refused at once
            assertThatThrownBy(() -> pool.acquire().block(WAIT))
                    .isInstanceOf(PoolAtCapacityException.class)
                    .hasMessageContaining("2 callers wait already")
                    .satisfies(e ->
                            assertThat(((SandboxException) e).isRetryable()).isTrue());
            // the first waiter gets the session the first release frees; the second times out
            a.destroy().block(WAIT);
            SandboxSession c = waiting.get(0).block(WAIT);
            assertThat(c.id()).isNotEqualTo(a.id()).isNotEqualTo(b.id());
            assertThatThrownBy(() -> waiting.get(1).block(WAIT))
                    .isInstanceOf(PoolAtCapacityException.class)
                    .hasMessageContaining("within PT0.5S");
            assertThat(pool.stats().alive()).isLessThanOrEqualTo(2);
            assertThat(sessionsAlive()).isLessThanOrEqualTo(2);
            b.destroy().block(WAIT);
            c.destroy().block(WAIT);
        }
        assertThat(sessionsAlive()).isZero();
    }

    @Test
    void aHundredCancelledWaitersLeakNothing() {
        try (SandboxPool pool = SandboxPool.builder(provider)
                .warm(0)
                .maxSessions(1)
                .refillPerSecond(100)
                .build()) {
            SandboxSession held = pool.acquire().block(WAIT);
            List<Disposable> waiters = new ArrayList<>();
            for (int i = 0; i < 100; i++) {
                waiters.add(pool.acquire().subscribe(s -> s.destroy().subscribe()));
            }
            assertThat(pool.stats().waiting()).isEqualTo(100);
            waiters.forEach(Disposable::dispose);
            assertThat(pool.stats().waiting()).isZero();
            held.destroy().block(WAIT);
            await("nothing alive", () -> pool.stats().alive() == 0);
            assertThat(pool.stats().inUse()).isZero();
            assertThat(sessionsAlive()).isZero();
        }
    }

    @Test
    void createsThatCannotPassFailTheWaitingCallersWithTheirCauseAndBackOff() {
        // a working directory that cannot be made: every create fails the same way
        SessionOptions broken = SessionOptions.defaults().withWorkdir("/proc/1/no-such-dir/x");
        try (SandboxPool pool = SandboxPool.builder(provider)
                .template(broken)
                .warm(2)
                .refillPerSecond(1000)
                .acquireTimeout(Duration.ofSeconds(5))
                .build()) {
            long t0 = System.nanoTime();
            assertThatThrownBy(() -> pool.acquire().block(WAIT))
                    .isInstanceOf(SandboxException.class)
                    .isNotInstanceOf(PoolAtCapacityException.class)
                    .hasMessageContaining("/proc/1/no-such-dir/x");
            assertThat(Duration.ofNanos(System.nanoTime() - t0)).isLessThan(Duration.ofSeconds(5));
            // backing off: 100, 200, 400, 800 ms... about five attempts in a second and a half, not thousands
            long before = pool.stats().createFailures();
            sleep(1500);
            long during = pool.stats().createFailures() - before;
            assertThat(during).isBetween(1L, 6L);
        }
    }

    @Test
    void closingFailsTheWaitersAndDestroysTheWarmSessions() {
        SandboxPool pool = SandboxPool.builder(provider)
                .warm(2)
                .maxSessions(3)
                .refillPerSecond(100)
                .build();
        await("two warm", () -> pool.stats().warm() == 2);
        SandboxSession a = pool.acquire().block(WAIT);
        SandboxSession b = pool.acquire().block(WAIT);
        SandboxSession c = pool.acquire().block(WAIT);
        Mono<SandboxSession> waiting = pool.acquire().cache();
        waiting.subscribe(x -> {}, e -> {});
        await("one waiting", () -> pool.stats().waiting() == 1);
        pool.close();
        assertThatThrownBy(() -> waiting.block(WAIT)).isInstanceOf(dev.sandbox.ProviderClosedException.class);
        Flux.just(a, b, c).flatMap(SandboxSession::destroy).blockLast(WAIT);
        assertThat(sessionsAlive()).isZero();
        assertThatThrownBy(() -> pool.acquire().block(WAIT)).isInstanceOf(dev.sandbox.ProviderClosedException.class);
    }

    @Test
    void aClaimedSessionWhoseLifetimeRanOutFreesItsPlaceWithoutBeingGivenBack() {
        try (SandboxPool pool = SandboxPool.builder(provider)
                .warm(0)
                .maxSessions(1)
                .refillPerSecond(100)
                .build()) {
            SandboxSession s = pool.acquire(Claim.defaults().withLifetime(Duration.ofSeconds(1)))
                    .block(WAIT);
            assertThat(pool.stats().inUse()).isEqualTo(1);
            // never given back: the provider ends it at its lifetime, and the pool notices within its audit
            await("the place freed", () -> pool.stats().inUse() == 0);
            SandboxSession next = pool.acquire().block(WAIT);
            assertThat(next.id()).isNotEqualTo(s.id());
            next.destroy().block(WAIT);
        }
        assertThat(sessionsAlive()).isZero();
    }

    @Test
    void aCallerThatCancelsWhileItsSessionIsCustomisedLeavesNothingInUse() {
        try (SandboxPool pool =
                SandboxPool.builder(provider).warm(4).refillPerSecond(100).build()) {
            await("four warm", () -> pool.stats().warm() == 4);
            byte[] big = new byte[4 << 20]; // a claim that takes a moment to apply
            for (int i = 0; i < 4; i++) {
                // cancelled as soon as subscribed, before the session can arrive: a `.subscribe().dispose()` lost
                // the race on a loaded machine, the customisation ended first and the caller owned the session
                pool.acquire(Claim.defaults().withFile("in/big-" + i, big))
                        .subscribe(new reactor.core.publisher.BaseSubscriber<SandboxSession>() {
                            @Override
                            protected void hookOnSubscribe(org.reactivestreams.Subscription s) {
                                s.request(1);
                                dispose();
                            }
                        });
            }
            try {
                await(
                        "nothing in use",
                        () -> pool.stats().inUse() == 0 && pool.stats().destroying() == 0);
            } catch (AssertionError e) {
                throw new AssertionError(e.getMessage() + "; the pool: " + pool.stats(), e);
            }
            assertThat(pool.stats().acquired()).isEqualTo(4);
        }
        assertThat(sessionsAlive()).isZero();
    }

    @Test
    void badSettingsNameTheirField() {
        assertThatThrownBy(() -> SandboxPool.builder(provider).warm(-1))
                .isInstanceOf(InvalidArgumentException.class)
                .hasMessageContaining("warm");
        assertThatThrownBy(() ->
                        SandboxPool.builder(provider).warm(4).maxSessions(2).build())
                .isInstanceOf(InvalidArgumentException.class)
                .hasMessageContaining("maxSessions");
        assertThatThrownBy(() -> SandboxPool.builder(provider).acquireTimeout(Duration.ZERO))
                .isInstanceOf(InvalidArgumentException.class)
                .hasMessageContaining("acquireTimeout");
        assertThatThrownBy(() -> Claim.defaults().withWorkdir("relative"))
                .isInstanceOf(InvalidArgumentException.class)
                .hasMessageContaining("workdir");
        assertThatThrownBy(() -> Claim.defaults().withEnv("A=B", "x"))
                .isInstanceOf(InvalidArgumentException.class)
                .hasMessageContaining("env");
        assertThatThrownBy(() -> Claim.defaults().withLabel("", "x"))
                .isInstanceOf(InvalidArgumentException.class)
                .hasMessageContaining("labels");
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
