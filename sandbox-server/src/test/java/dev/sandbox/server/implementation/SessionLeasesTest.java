package dev.sandbox.server.implementation;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sandbox.ExecOptions;
import dev.sandbox.SandboxSession;
import dev.sandbox.SessionInfo;
import dev.sandbox.SessionOptions;
import dev.sandbox.local.LocalSandboxProvider;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.test.scheduler.VirtualTimeScheduler;

/**
 * The server's leases on virtual time: a {@link Sessions} registry over a real local provider whose lease checks run on
 * a {@link VirtualTimeScheduler}, so a lease of a minute runs out in no time. The sessions, their commands and their
 * destruction are real; only the waiting is virtual. {@code SessionLeaseTest} keeps the end-to-end cases through the
 * server and the remote client in real time.
 */
class SessionLeasesTest {
    private static final Duration WAIT = Duration.ofSeconds(30);
    private static final Duration LEASE = Duration.ofMinutes(1);
    /** The lease check's period: a quarter of the lease, at most 5 s. */
    private static final Duration TICK = Duration.ofSeconds(5);

    private final Tenant tenant = Tenant.of("t", Auth.sha256("lease-token".getBytes(StandardCharsets.UTF_8)));
    private final VirtualTimeScheduler scheduler = VirtualTimeScheduler.create();
    private final LocalSandboxProvider local = LocalSandboxProvider.create();
    private final Sessions sessions =
            new Sessions(local, 16, LEASE, scheduler, () -> scheduler.now(TimeUnit.NANOSECONDS));

    @AfterEach
    void stop() {
        sessions.stopLeases();
        scheduler.dispose();
        local.close();
    }

    private boolean exists(String id) {
        return local.list(Map.of())
                .map(SessionInfo::id)
                .collectList()
                .block(WAIT)
                .contains(id);
    }

    /** Runs a command in the session through the provider (not the registry, which would count it as a renewal). */
    private String echo(String id) {
        return local.attach(id)
                .flatMap(s -> s.run(ExecOptions.of("echo", "alive")))
                .block(WAIT)
                .stdout();
    }

    /** Waits, bounded, for the destroy the lease check started (real work on the provider's threads). */
    private void awaitGone(String id) {
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (exists(id)) {
            assertThat(System.nanoTime()).as("session " + id + " is destroyed").isLessThan(deadline);
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(20));
        }
    }

    @Test
    void aLeasedSessionIsDestroyedOnceItsLeaseRunsOut() {
        SandboxSession s = sessions.create(SessionOptions.defaults(), tenant).block(WAIT);
        assertThat(sessions.leaseMs(s.id())).isEqualTo(LEASE.toMillis());

        scheduler.advanceTimeBy(LEASE.minusMillis(1));
        assertThat(echo(s.id())).as("alive just before its lease runs out").isEqualTo("alive\n");

        scheduler.advanceTimeBy(TICK.plusMillis(1)); // to the first check past the lease
        awaitGone(s.id());
    }

    @Test
    void aRenewedSessionOutlivesManyLeases() {
        SandboxSession s = sessions.create(SessionOptions.defaults(), tenant).block(WAIT);
        for (int i = 0; i < 10; i++) {
            scheduler.advanceTimeBy(LEASE.dividedBy(2));
            assertThat(sessions.renew(List.of(s.id()), tenant).block(WAIT)).containsExactly(s.id());
        }
        assertThat(echo(s.id())).as("alive after five leases of renewals").isEqualTo("alive\n");

        scheduler.advanceTimeBy(LEASE.plus(TICK));
        awaitGone(s.id());
    }

    @Test
    void aSessionWithALifetimeIsNotLeased() {
        SandboxSession s = sessions.create(SessionOptions.defaults().withLifetime(Duration.ofMinutes(5)), tenant)
                .block(WAIT);
        assertThat(sessions.leaseMs(s.id())).isNull();
        scheduler.advanceTimeBy(LEASE.multipliedBy(10));
        assertThat(echo(s.id())).as("a session with a lifetime keeps it").isEqualTo("alive\n");
        s.destroy().block(WAIT);
    }

    @Test
    void aLeasedSessionLeftOnTheProviderIsLeasedAgainAndExpires() {
        // what a server that crashed leaves behind: a leased session of the tenant, whose client is gone too
        SandboxSession orphan = local.create(SessionOptions.defaults()
                        .withUnlimitedLifetime()
                        .withLabel(Tenant.LABEL, tenant.marker())
                        .withLabel(Sessions.LEASED_LABEL, "true"))
                .block(WAIT);
        SandboxSession foreign =
                local.create(SessionOptions.defaults().withUnlimitedLifetime()).block(WAIT);
        sessions.adoptLeased(List.of(tenant)).block(WAIT);
        assertThat(sessions.leaseMs(orphan.id())).isEqualTo(LEASE.toMillis());

        scheduler.advanceTimeBy(LEASE.plus(TICK));
        awaitGone(orphan.id());
        assertThat(echo(foreign.id()))
                .as("a session the server did not lease is left alone")
                .isEqualTo("alive\n");
        foreign.destroy().block(WAIT);
    }
}
