package dev.sandbox.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sandbox.ExecOptions;
import dev.sandbox.SandboxSession;
import dev.sandbox.SessionInfo;
import dev.sandbox.SessionNotFoundException;
import dev.sandbox.SessionOptions;
import dev.sandbox.local.LocalSandboxProvider;
import dev.sandbox.pool.PoolStats;
import dev.sandbox.pool.SandboxPool;
import dev.sandbox.remote.RemoteSandboxProvider;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A server with a warm pool ({@link SandboxServer.Builder#pool}): a create over real HTTP takes a warm session,
 * customised as the client asked (environment, labels, lifetime), which its tenant lists (by its labels too) and
 * attaches like any other and no other tenant sees; its destroy gives it back and a fresh one takes its place; a create
 * the pool cannot serve (secrets, no lifetime) is cold; stopping the server and closing the pool leaves nothing. The
 * provider's own list says which sessions exist.
 */
class ServerPoolTest {
    private static final String ALICE = "pool-alice-token-0123456789ab";
    private static final String BOB = "pool-bob-token-0123456789abcd";
    private static final Duration WAIT = Duration.ofSeconds(30);
    private static final int WARM = 2;

    private LocalSandboxProvider local;
    private SandboxPool pool;
    private SandboxServer server;

    @BeforeEach
    void start() throws InterruptedException {
        local = LocalSandboxProvider.create();
        pool = SandboxPool.builder(local).warm(WARM).build();
        server = SandboxServer.builder(local)
                .port(0)
                .token("alice", ALICE.toCharArray())
                .token("bob", BOB.toCharArray())
                .pool(pool)
                .start();
        await("the pool is warm", s -> s.warm() == WARM);
    }

    @AfterEach
    void stop() {
        server.close();
        pool.close();
        local.close();
    }

    private RemoteSandboxProvider remote(String token) {
        return RemoteSandboxProvider.builder()
                .baseUrl(server.baseUrl())
                .token(token.toCharArray())
                .build();
    }

    private List<String> existing() {
        return local.list(Map.of()).map(SessionInfo::id).collectList().block(WAIT);
    }

    /** Waits, bounded, for the pool's counts to say what is expected. */
    private PoolStats await(String what, Predicate<PoolStats> expected) throws InterruptedException {
        long deadline = System.nanoTime() + WAIT.toNanos();
        PoolStats s = pool.stats();
        while (!expected.test(s)) {
            assertThat(System.nanoTime()).as(what + "; last counts " + s).isLessThan(deadline);
            Thread.sleep(20); // polling the pool's refill, bounded by the deadline
            s = pool.stats();
        }
        return s;
    }

    @Test
    void aCreateTakesAWarmSessionCustomisedAsAskedAndItsDestroyReplacesIt() throws Exception {
        try (RemoteSandboxProvider alice = remote(ALICE);
                RemoteSandboxProvider bob = remote(BOB)) {
            List<String> warmIds = existing();
            assertThat(warmIds).hasSize(WARM);

            SandboxSession s = alice.create(SessionOptions.defaults()
                            .withEnv("TENANT", "acme")
                            .withLabel("team", "search")
                            .withLifetime(Duration.ofMinutes(2)))
                    .block(WAIT);

            assertThat(warmIds).as("the session was one of the warm ones").contains(s.id());
            PoolStats taken = pool.stats();
            assertThat(taken.acquired()).isEqualTo(1);
            assertThat(taken.coldAcquires()).isZero();
            assertThat(taken.inUse()).isEqualTo(1);
            assertThat(s.run(ExecOptions.shell("echo $TENANT")).block(WAIT).stdout())
                    .isEqualTo("acme\n");
            await("a fresh warm session takes its place", p -> p.warm() == WARM);
            assertThat(existing()).hasSize(WARM + 1);

            // its tenant lists and attaches it like any session; another tenant does not see it
            assertThat(alice.list(Map.of()).map(SessionInfo::id).collectList().block(WAIT))
                    .containsExactly(s.id());
            assertThat(alice.list(Map.of("team", "search"))
                            .map(SessionInfo::id)
                            .collectList()
                            .block(WAIT))
                    .containsExactly(s.id());
            assertThat(s.labels()).as("the labels the server answered with").isEqualTo(Map.of("team", "search"));
            assertThat(bob.list(Map.of()).map(SessionInfo::id).collectList().block(WAIT))
                    .isEmpty();
            try (RemoteSandboxProvider second = remote(ALICE)) {
                SandboxSession again = second.attach(s.id()).block(WAIT);
                assertThat(again.run(ExecOptions.shell("echo $TENANT"))
                                .block(WAIT)
                                .stdout())
                        .as("the claim's environment, through the server's handle")
                        .isEqualTo("acme\n");
            }
            assertThatThrownBy(() -> bob.attach(s.id()).block(WAIT)).isInstanceOf(SessionNotFoundException.class);

            s.destroy().block(WAIT);
            assertThat(existing()).doesNotContain(s.id());
            PoolStats after = await("the destroyed session is replaced", p -> p.inUse() == 0 && p.warm() == WARM);
            assertThat(after.alive()).isEqualTo(WARM);
            assertThat(existing()).hasSize(WARM);
            assertThat(alice.list(Map.of()).collectList().block(WAIT)).isEmpty();
            assertThatThrownBy(() -> alice.attach(s.id()).block(WAIT)).isInstanceOf(SessionNotFoundException.class);
        }
    }

    @Test
    void aCreateWithSecretsOrNoLifetimeIsCold() throws Exception {
        try (RemoteSandboxProvider alice = remote(ALICE)) {
            SandboxSession secret = alice.create(SessionOptions.defaults().withSecret("KEY", "s3cret"))
                    .block(WAIT);
            SandboxSession unlimited = alice.create(SessionOptions.defaults().withUnlimitedLifetime())
                    .block(WAIT);

            assertThat(pool.stats().acquired()).as("none came from the pool").isZero();
            assertThat(pool.stats().warm()).isEqualTo(WARM);
            assertThat(secret.run(ExecOptions.shell("echo $KEY")).block(WAIT).stdout())
                    .isEqualTo("s3cret\n");
            assertThat(existing()).hasSize(WARM + 2).contains(secret.id(), unlimited.id());
        }
    }

    @Test
    void stoppingTheServerAndClosingThePoolLeavesNoSession() throws Exception {
        try (RemoteSandboxProvider alice = remote(ALICE)) {
            alice.create(SessionOptions.defaults()).block(WAIT);
            alice.create(SessionOptions.defaults().withSecret("COLD", "yes")).block(WAIT);
            assertThat(pool.stats().acquired()).isEqualTo(1);
        }
        server.close();
        pool.close();
        assertThat(existing()).isEmpty();
        PoolStats closed = pool.stats();
        assertThat(closed.alive()).isZero();
    }

    /** A full pool whose queue gives up: the client gets 503, retryable, not an internal error. */
    @Test
    void aCreateTheFullPoolCannotServeInTimeIs503Retryable() throws Exception {
        try (SandboxPool full = SandboxPool.builder(local)
                        .warm(1)
                        .maxSessions(1)
                        .acquireTimeout(Duration.ofMillis(300))
                        .build();
                SandboxServer small = SandboxServer.builder(local)
                        .port(0)
                        .token("alice", ALICE.toCharArray())
                        .pool(full)
                        .start()) {
            java.net.http.HttpClient http = java.net.http.HttpClient.newHttpClient();
            java.util.function.Supplier<java.net.http.HttpResponse<String>> create = () -> {
                try {
                    return http.send(
                            java.net.http.HttpRequest.newBuilder(java.net.URI.create(small.baseUrl() + "/v1/sessions"))
                                    .timeout(WAIT)
                                    .header("Authorization", "Bearer " + ALICE)
                                    .header("Content-Type", "application/json")
                                    .POST(java.net.http.HttpRequest.BodyPublishers.ofString("{}"))
                                    .build(),
                            java.net.http.HttpResponse.BodyHandlers.ofString());
                } catch (java.io.IOException | InterruptedException e) {
                    throw new AssertionError(e);
                }
            };
            assertThat(create.get().statusCode()).as("the one session").isBetween(200, 201);
            java.net.http.HttpResponse<String> refused = create.get();
            assertThat(refused.statusCode()).isEqualTo(503);
            assertThat(refused.body()).contains("\"retryable\":true");
        }
    }
}
