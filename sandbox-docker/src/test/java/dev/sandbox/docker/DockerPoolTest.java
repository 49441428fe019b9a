package dev.sandbox.docker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sandbox.ExecOptions;
import dev.sandbox.InvalidArgumentException;
import dev.sandbox.SandboxSession;
import dev.sandbox.SessionInfo;
import dev.sandbox.pool.Claim;
import dev.sandbox.pool.PoolAtCapacityException;
import dev.sandbox.pool.SandboxPool;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * The pool on the real daemon: a burst of callers far past the cap, each served or refused in time with never more
 * containers than the cap, and nothing left after; a claim customised with environment, working directory, a file and
 * a lifetime that ends the session on time once no client is alive, and a label that list and attach find it by.
 */
@RequiresDocker
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class DockerPoolTest {
    private static final Duration WAIT = Duration.ofSeconds(120);

    private DockerTestSupport support;
    private DockerSandboxProvider provider;

    @BeforeAll
    void start() {
        support = new DockerTestSupport();
        provider = DockerTestSupport.unsweptProvider();
    }

    @AfterAll
    void stop() {
        support.finish(provider);
    }

    private int containers() {
        return support.docker
                .listContainersCmd()
                .withShowAll(true)
                .withLabelFilter(List.of(DockerTestSupport.RUN_LABEL + "=" + support.runId))
                .exec()
                .size();
    }

    @Test
    void aBurstOfTwoHundredOnAPoolOfEightCappedAtThirtyTwoIsServedOrRefusedInTimeAndLeavesNothing()
            throws InterruptedException {
        int cap = 32;
        Duration timeout = Duration.ofSeconds(20);
        AtomicInteger most = new AtomicInteger();
        AtomicBoolean watching = new AtomicBoolean(true);
        Thread watcher = Thread.ofPlatform().daemon().start(() -> {
            while (watching.get()) {
                most.accumulateAndGet(containers(), Math::max);
            }
        });
        ConcurrentLinkedQueue<Throwable> failures = new ConcurrentLinkedQueue<>();
        AtomicInteger served = new AtomicInteger();
        try (SandboxPool pool = SandboxPool.builder(provider)
                .template(support.sessionOptions())
                .warm(8)
                .maxSessions(cap)
                .maxCreatesInFlight(8)
                .refillPerSecond(50)
                .acquireTimeout(timeout)
                .build()) {
            long t0 = System.nanoTime();
            Flux.range(0, 200)
                    .flatMap(
                            i -> pool.withSession(
                                            Claim.defaults().withEnv("CALLER", Integer.toString(i)),
                                            s -> s.run(ExecOptions.shell("echo $CALLER")))
                                    .doOnNext(r -> {
                                        assertThat(r.stdout()).isEqualTo(i + "\n");
                                        served.incrementAndGet();
                                    })
                                    .onErrorResume(e -> {
                                        failures.add(e);
                                        return Mono.empty();
                                    }),
                            200)
                    .blockLast(WAIT);
            Duration took = Duration.ofNanos(System.nanoTime() - t0);
            System.out.printf(
                    "burst of 200 on a pool of 8 capped at %d: %d served, %d refused, most containers at once %d, %d ms,"
                            + " %s%n",
                    cap, served.get(), failures.size(), most.get(), took.toMillis(), pool.stats());
            assertThat(failures).allSatisfy(e -> assertThat(e).isInstanceOf(PoolAtCapacityException.class));
            assertThat(served.get() + failures.size()).isEqualTo(200);
            assertThat(served.get()).as("served").isPositive();
            assertThat(pool.stats().createFailures()).isZero();
        } finally {
            watching.set(false);
            watcher.join(10_000);
        }
        assertThat(most.get()).as("containers alive at once").isLessThanOrEqualTo(cap);
        assertThat(containers()).as("containers left after the pool closed").isZero();
    }

    @Test
    void aCustomisedClaimIsSeenByCommandsAndItsLifetimeEndsTheSessionWithNoClientAlive() throws InterruptedException {
        DockerSandboxProvider own = DockerTestSupport.unsweptProvider();
        String id;
        try (SandboxPool pool = SandboxPool.builder(own)
                .template(support.sessionOptions())
                .warm(1)
                .build()) {
            SandboxSession s = pool.acquire(Claim.defaults()
                            .withEnv("TENANT", "acme")
                            .withWorkdir("/work/acme")
                            .withFile("/work/acme/input.txt", "hello".getBytes(StandardCharsets.UTF_8))
                            .withLabel("tenant", "acme " + support.runId)
                            .withLifetime(Duration.ofSeconds(4)))
                    .block(WAIT);
            id = s.id();
            assertThat(s.run(ExecOptions.shell("echo $TENANT; pwd; cat input.txt"))
                            .block(WAIT)
                            .stdout())
                    .isEqualTo("acme\n/work/acme\nhello");
            assertThat(s.ping().block(WAIT).expiresAt()).isNotNull();
            assertThat(s.labels()).containsEntry("tenant", "acme " + support.runId);
            // the label the container was not created with: found by this provider and by another one
            Map<String, String> byTenant = Map.of("tenant", "acme " + support.runId);
            assertThat(own.list(byTenant).map(SessionInfo::id).collectList().block(WAIT))
                    .containsExactly(id);
            assertThat(provider.list(byTenant).collectList().block(WAIT))
                    .singleElement()
                    .satisfies(info -> {
                        assertThat(info.id()).isEqualTo(id);
                        assertThat(info.labels()).containsEntry("tenant", "acme " + support.runId);
                    });
            SandboxSession attached = provider.attach(id).block(WAIT);
            assertThat(attached.labels()).containsEntry("tenant", "acme " + support.runId);
            attached.close().block(WAIT);
            // no client alive from here: the pool and its provider closed, the claimed session still held
        } finally {
            own.close();
        }
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (support.container(id) != null && System.nanoTime() < deadline) {
            Thread.sleep(200);
        }
        assertThat(support.container(id))
                .as("the container of " + id + " after its lifetime")
                .isNull();
    }

    @Test
    void anImageRemovedWhileThePoolRefillsFailsTheCallersWithItsCauseAndTheRefillsBackOff()
            throws InterruptedException {
        // a tag of the test image of this run's own: removing it leaves the image (and the other tests) alone
        String tag = "pool-" + support.runId.substring(0, 8);
        String image = "sandbox-test:" + tag;
        support.docker.tagImageCmd(DockerTestSupport.IMAGE, "sandbox-test", tag).exec();
        DockerSandboxProvider own = DockerSandboxProvider.builder()
                .settings(DockerSettings.of(image).withPullPolicy(DockerSettings.PullPolicy.NEVER))
                .sweepInterval(null)
                .build();
        try (SandboxPool pool = SandboxPool.builder(own)
                .template(support.sessionOptions())
                .warm(1)
                .refillPerSecond(1000)
                .acquireTimeout(Duration.ofSeconds(10))
                .build()) {
            long deadline = System.nanoTime() + WAIT.toNanos();
            while (pool.stats().warm() < 1 && System.nanoTime() < deadline) {
                Thread.sleep(50);
            }
            support.docker.removeImageCmd(image).exec(); // the tag only: the image keeps its other name
            SandboxSession warm = pool.acquire().block(WAIT);
            assertThat(warm.run(ExecOptions.of("true")).block(WAIT).exitCode()).isZero();
            // the refill cannot create: the next caller gets the cause, not a timeout
            long t0 = System.nanoTime();
            assertThatThrownBy(() -> pool.acquire().block(WAIT))
                    .isInstanceOf(InvalidArgumentException.class)
                    .isNotInstanceOf(PoolAtCapacityException.class)
                    .hasMessageContaining(image);
            assertThat(Duration.ofNanos(System.nanoTime() - t0)).isLessThan(Duration.ofSeconds(10));
            // backing off: 100, 200, 400, 800 ms... a handful of attempts in two seconds, not hundreds
            long before = pool.stats().createFailures();
            Thread.sleep(2000);
            long during = pool.stats().createFailures() - before;
            System.out.println("create attempts in 2 s with the image gone: " + during);
            assertThat(during).isBetween(1L, 6L);
            warm.destroy().block(WAIT);
        } finally {
            own.close();
            try {
                support.docker.removeImageCmd(image).exec();
            } catch (RuntimeException alreadyGone) {
                // removed above
            }
        }
    }

    @Test
    void aHundredWaitingAcquiresCancelledLeakNothing() throws InterruptedException {
        try (SandboxPool pool = SandboxPool.builder(provider)
                .template(support.sessionOptions())
                .warm(1)
                .maxSessions(1)
                .acquireTimeout(Duration.ofSeconds(60))
                .build()) {
            SandboxSession held = pool.acquire().block(WAIT);
            List<reactor.core.Disposable> waiters = new java.util.ArrayList<>();
            ConcurrentLinkedQueue<SandboxSession> leaked = new ConcurrentLinkedQueue<>();
            for (int i = 0; i < 100; i++) {
                waiters.add(pool.acquire().subscribe(leaked::add, e -> {}));
            }
            long deadline = System.nanoTime() + WAIT.toNanos();
            while (pool.stats().waiting() < 100 && System.nanoTime() < deadline) {
                Thread.sleep(20);
            }
            assertThat(pool.stats().waiting()).isEqualTo(100);
            waiters.forEach(reactor.core.Disposable::dispose);
            assertThat(pool.stats().waiting()).isZero();
            held.destroy().block(WAIT);
            // the place the held session frees goes to a refill, not to a cancelled waiter
            while ((pool.stats().warm() != 1 || pool.stats().inUse() != 0) && System.nanoTime() < deadline) {
                Thread.sleep(20);
            }
            assertThat(pool.stats().warm()).isEqualTo(1);
            assertThat(pool.stats().inUse()).isZero();
            assertThat(leaked).as("sessions handed to cancelled callers").isEmpty();
            assertThat(containers()).as("containers: the one warm session").isEqualTo(1);
        }
        assertThat(containers()).isZero();
    }
}
