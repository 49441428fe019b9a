package dev.sandbox.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.sandbox.ExecOptions;
import dev.sandbox.SandboxSession;
import dev.sandbox.SessionInfo;
import dev.sandbox.SessionOptions;
import dev.sandbox.local.LocalSandboxProvider;
import dev.sandbox.remote.RemoteSandboxProvider;
import dev.sandbox.server.implementation.Auth;
import dev.sandbox.server.implementation.Tenant;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Sessions created through the server without a lifetime are leased to the client holding them: a live remote
 * provider keeps them over many leases, and once its renewals stop (its transport closed without destroying) the
 * server destroys them within the lease and a margin. End to end in real time; the leases' own rules (expiry, renewal,
 * a lifetime instead of a lease, adoption) are checked on virtual time by {@code SessionLeasesTest}.
 */
class SessionLeaseTest {
    private static final String TOKEN = "lease-token-0123456789abcdef";
    private static final Duration WAIT = Duration.ofSeconds(30);
    private static final Duration LEASE = Duration.ofSeconds(1);
    /** The reaper checks four times a lease; allow a lease more for a destroy under load. */
    private static final Duration MARGIN = Duration.ofSeconds(3);

    private static final ObjectMapper JSON = new ObjectMapper();

    private LocalSandboxProvider local;
    private SandboxServer server;

    @BeforeEach
    void start() {
        local = LocalSandboxProvider.create();
        server = SandboxServer.builder(local)
                .port(0)
                .token(TOKEN.toCharArray())
                .lease(LEASE)
                .start();
    }

    @AfterEach
    void stop() {
        server.close();
        local.close();
    }

    private RemoteSandboxProvider remote() {
        return RemoteSandboxProvider.builder()
                .baseUrl(server.baseUrl())
                .token(TOKEN.toCharArray())
                .build();
    }

    private boolean exists(String id) {
        return local.list(Map.of())
                .map(SessionInfo::id)
                .collectList()
                .block(WAIT)
                .contains(id);
    }

    /** Waits, bounded, until the session is gone; returns how long it took. */
    private Duration awaitGone(String id, Duration within) throws InterruptedException {
        long t0 = System.nanoTime();
        long deadline = t0 + within.toNanos();
        while (exists(id)) {
            assertThat(System.nanoTime())
                    .as("session " + id + " is gone within " + within)
                    .isLessThan(deadline);
            Thread.sleep(50); // polling an outcome with a deadline, not synchronising
        }
        return Duration.ofNanos(System.nanoTime() - t0);
    }

    @Test
    void aDeadClientsSessionIsDestroyedAfterItsLease() throws Exception {
        RemoteSandboxProvider dying = remote();
        SandboxSession s =
                dying.create(SessionOptions.defaults().withUnlimitedLifetime()).block(WAIT);
        Path workdir = Path.of(s.run(ExecOptions.of("pwd")).block(WAIT).stdout().trim());
        dying.close(); // its JVM "dies": the transport closes, nothing is destroyed

        assertThat(exists(s.id())).isTrue();
        awaitGone(s.id(), LEASE.plus(MARGIN));
        assertThat(workdir).doesNotExist();
    }

    @Test
    void aLiveClientsSessionOutlivesManyLeases() throws Exception {
        try (RemoteSandboxProvider live = remote()) {
            SandboxSession s = live.create(SessionOptions.defaults().withUnlimitedLifetime())
                    .block(WAIT);
            long until = System.nanoTime() + LEASE.multipliedBy(4).toNanos();
            while (System.nanoTime() < until) {
                assertThat(exists(s.id()))
                        .as("still there while its client renews")
                        .isTrue();
                Thread.sleep(100); // observing over several leases
            }
            assertThat(s.run(ExecOptions.of("echo", "alive")).block(WAIT).stdout())
                    .isEqualTo("alive\n");

            // a closed handle is no longer renewed
            s.close().block(WAIT);
            awaitGone(s.id(), LEASE.plus(MARGIN));
        }
    }

    /** The answer of a raw create says it is leased; how a lease runs out is SessionLeasesTest's, on virtual time. */
    @Test
    void aRawCreateIsLeasedAndItsAnswerSaysSo() throws Exception {
        try (HttpClient http = HttpClient.newBuilder().connectTimeout(WAIT).build()) {
            HttpResponse<String> r = http.send(
                    HttpRequest.newBuilder(URI.create(server.baseUrl() + "/v1/sessions"))
                            .timeout(WAIT)
                            .header("Authorization", "Bearer " + TOKEN)
                            .POST(HttpRequest.BodyPublishers.ofString("{\"lifetimeMs\":null}"))
                            .build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(r.statusCode()).isEqualTo(201);
            JsonNode body = JSON.readTree(r.body());
            assertThat(body.path("leaseMs").asLong()).isEqualTo(LEASE.toMillis());
            assertThat(body.path("labels").size())
                    .as("the server's labels are not shown")
                    .isZero();
            assertThat(exists(body.path("id").asText())).isTrue();
        }
    }

    @Test
    void aLeasedSessionLeftOnTheProviderIsLeasedAgainByTheNextServer() throws Exception {
        // what a server that crashed leaves behind: a leased session of its token, whose client is gone too
        Tenant tenant = Tenant.of("default", Auth.sha256(TOKEN.getBytes(StandardCharsets.UTF_8)));
        SandboxSession orphan = local.create(SessionOptions.defaults()
                        .withUnlimitedLifetime()
                        .withLabel(Tenant.LABEL, tenant.marker())
                        .withLabel(Tenant.RESERVED_PREFIX + "leased", "true"))
                .block(WAIT);
        SandboxSession foreign =
                local.create(SessionOptions.defaults().withUnlimitedLifetime()).block(WAIT);
        try (SandboxServer next = SandboxServer.builder(local)
                .port(0)
                .token(TOKEN.toCharArray())
                .lease(LEASE)
                .start()) {
            assertThat(next.port()).isPositive();
            awaitGone(orphan.id(), LEASE.plus(MARGIN));
            assertThat(exists(foreign.id()))
                    .as("a session the server did not lease is left alone")
                    .isTrue();
        } finally {
            foreign.destroy().block(WAIT);
        }
    }
}
