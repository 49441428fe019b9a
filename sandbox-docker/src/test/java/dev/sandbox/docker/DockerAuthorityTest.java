package dev.sandbox.docker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.github.dockerjava.api.command.InspectContainerResponse;
import com.github.dockerjava.api.model.Capability;
import com.github.dockerjava.api.model.Container;
import dev.sandbox.ExecOptions;
import dev.sandbox.ExecResult;
import dev.sandbox.InvalidArgumentException;
import dev.sandbox.SandboxSession;
import dev.sandbox.SessionStatus;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * Nothing inside a sandbox decides its fate: deadlines and leases are kept and enforced outside the container (the
 * reaper), and the default profile limits what a session may take from the host. Each test plays a client that is
 * gone (a closed provider renews nothing and enforces nothing, as a dead JVM).
 */
@RequiresDocker
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class DockerAuthorityTest {
    private static final Duration WAIT = Duration.ofSeconds(60);
    private static final Duration LEASE = Duration.ofSeconds(3);

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

    private static DockerSandboxProvider leasedProvider() {
        return DockerSandboxProvider.builder()
                .settings(DockerTestSupport.settings())
                .sweepInterval(null)
                .lease(LEASE)
                .build();
    }

    /** Waits until the session's container is gone, at most until the deadline; returns whether it went. */
    private boolean goneBy(String sessionId, Instant deadline) throws InterruptedException {
        while (Instant.now().isBefore(deadline)) {
            if (support.container(sessionId) == null) {
                return true;
            }
            Thread.sleep(200);
        }
        return support.container(sessionId) == null;
    }

    private boolean running(String sessionId) {
        Container c = support.container(sessionId);
        return c != null && "running".equals(c.getState());
    }

    @Test
    void aSandboxThatTellsItsAgentToLiveForeverAndStopsItStillEndsOnTime() throws InterruptedException {
        DockerSandboxProvider gone = DockerTestSupport.unsweptProvider();
        SandboxSession session = gone.create(support.sessionOptions().withLifetime(Duration.ofSeconds(4)))
                .block(WAIT);
        Instant created = Instant.now();
        // what root in the sandbox can do: speak the agent's protocol itself (HELLO, then TIMERS with a deadline in
        // the year 2286 and no idle timeout), and signal the agent
        session.files().write("/tmp/frames", impostorFrames()).block(WAIT);
        ExecResult r = session.run(ExecOptions.shell("timeout 5 /.dev-sandbox/agent relay < /tmp/frames | wc -c;"
                        + " kill -STOP 1; kill -9 1; echo signalled"))
                .block(WAIT);
        assertThat(r.exitCode()).isZero();
        assertThat(r.stdout()).endsWith("signalled\n");
        // the answers came back: HELLO and OK, so the agent did take the far deadline
        assertThat(Long.parseLong(r.stdout().lines().findFirst().orElseThrow().trim()))
                .isGreaterThan(18);
        gone.close(); // no client is left to end it

        // deadline 4 s (+1 s rounding) plus the 5 s grace, a reaper round and the removal
        assertThat(goneBy(session.id(), created.plusSeconds(20)))
                .as("the session past its deadline is removed although its agent was told otherwise")
                .isTrue();
    }

    /** HELLO (versions 1..1) and TIMERS on stream 1 with the deadline 9999999999000 ms and no idle timeout. */
    private static byte[] impostorFrames() {
        java.nio.ByteBuffer b = java.nio.ByteBuffer.allocate(64);
        byte[] client = "impostor".getBytes(StandardCharsets.US_ASCII);
        b.putInt(4 + 4 + client.length).put((byte) 0x01).putInt(0);
        b.putShort((short) 1).putShort((short) 1).putInt(client.length).put(client);
        b.putInt(16).put((byte) 0x03).putInt(1);
        b.putLong(9_999_999_999_000L).putLong(0);
        return java.util.Arrays.copyOf(b.array(), b.position());
    }

    @Test
    void aSessionWithoutLifetimeEndsWhenItsHolderStopsRenewingAndLivesWhileItRenews() throws InterruptedException {
        DockerSandboxProvider dying = leasedProvider();
        DockerSandboxProvider living = leasedProvider();
        try {
            SandboxSession orphan = dying.create(support.sessionOptions()).block(WAIT);
            SandboxSession kept = living.create(support.sessionOptions()).block(WAIT);
            Instant start = Instant.now();
            dying.close(); // as a JVM that died: its leases are no longer renewed

            assertThat(goneBy(orphan.id(), start.plus(LEASE.multipliedBy(4))))
                    .as("the orphan is removed about a lease after its holder went")
                    .isTrue();
            // the living holder's session outlives several leases
            Thread.sleep(Math.max(
                    0,
                    Duration.between(Instant.now(), start.plus(LEASE.multipliedBy(3)))
                            .toMillis()));
            assertThat(running(kept.id())).isTrue();
            assertThat(kept.run(ExecOptions.shell("echo alive")).block(WAIT).stdout())
                    .isEqualTo("alive\n");
            kept.destroy().block(WAIT);
        } finally {
            living.close();
        }
    }

    @Test
    void theWarmSessionsOfAPoolWhoseJvmWasKilledAreGoneAboutALeaseLater() throws Exception {
        Duration lease = DockerSandboxProvider.MIN_LEASE; // the child's provider leases for the shortest time
        String java = ProcessHandle.current().info().command().orElse("java");
        Process owner = new ProcessBuilder(
                        java,
                        "--enable-native-access=ALL-UNNAMED",
                        "-cp",
                        System.getProperty("java.class.path"),
                        WarmPoolOwner.class.getName(),
                        support.runId)
                .redirectError(ProcessBuilder.Redirect.INHERIT)
                .start();
        try {
            List<String> ids = warmSessionIds(owner);
            assertThat(ids).as("the warm sessions the child printed").hasSize(WarmPoolOwner.WARM);
            for (String id : ids) {
                assertThat(running(id)).as("%s before the kill", id).isTrue();
            }
            owner.destroyForcibly(); // SIGKILL: no shutdown hook, no pool or provider close
            assertThat(owner.waitFor(30, TimeUnit.SECONDS)).isTrue();
            Instant killed = Instant.now();

            // the lease (renewed a third of a lease apart, counted in whole seconds), the reaper's one-second round
            // and the removals of three containers on a busy machine
            Instant deadline = killed.plus(lease).plusSeconds(9);
            for (String id : ids) {
                assertThat(goneBy(id, deadline))
                        .as(
                                "the warm session %s of the killed JVM, %s after the kill",
                                id, Duration.between(killed, Instant.now()))
                        .isTrue();
            }
        } finally {
            owner.destroyForcibly();
        }
    }

    /** Reads the child's {@code session <id>} lines until {@code ready}, at most a minute. */
    private static List<String> warmSessionIds(Process owner) throws Exception {
        BufferedReader out = new BufferedReader(new InputStreamReader(owner.getInputStream(), StandardCharsets.UTF_8));
        CompletableFuture<List<String>> ready = new CompletableFuture<>();
        // bounded: the reader ends when the child exits, and the wait below is bounded
        Thread.ofPlatform().daemon().start(() -> {
            List<String> ids = new ArrayList<>();
            try {
                for (String line; (line = out.readLine()) != null; ) {
                    if (line.startsWith("session ")) {
                        ids.add(line.substring("session ".length()));
                    } else if (line.equals("ready")) {
                        ready.complete(List.copyOf(ids));
                    }
                }
                ready.completeExceptionally(new IllegalStateException("the child ended before it was ready"));
            } catch (IOException e) {
                ready.completeExceptionally(e);
            }
        });
        return ready.get(60, TimeUnit.SECONDS);
    }

    @Test
    void aSessionAttachedByAnotherProviderIsHeldByItAfterItsCreatorGoes() throws InterruptedException {
        DockerSandboxProvider creator = leasedProvider();
        DockerSandboxProvider holder = leasedProvider();
        SandboxSession created = creator.create(support.sessionOptions()).block(WAIT);
        holder.attach(created.id()).block(WAIT);
        Instant start = Instant.now();
        creator.close();
        Thread.sleep(LEASE.multipliedBy(3).toMillis());
        assertThat(running(created.id())).as("held by the second provider").isTrue();

        holder.close();
        assertThat(goneBy(created.id(), Instant.now().plus(LEASE.multipliedBy(4))))
                .as("removed once its last holder went")
                .isTrue();
        assertThat(Duration.between(start, Instant.now())).isGreaterThan(LEASE.multipliedBy(3));
    }

    @Test
    void aLifetimeExtendedByItsHolderIsKeptByTheReaperAndSeenByTheNextHolder() throws InterruptedException {
        DockerSandboxProvider first = DockerTestSupport.unsweptProvider();
        SandboxSession session = first.create(support.sessionOptions().withLifetime(Duration.ofSeconds(3)))
                .block(WAIT);
        session.setLifetime(Duration.ofSeconds(60)).block(WAIT);
        Instant start = Instant.now();
        first.close();
        // past the deadline it was created with, its grace and a few reaper rounds
        Thread.sleep(Duration.ofSeconds(12).toMillis());
        assertThat(running(session.id())).isTrue();

        SandboxSession again = provider.attach(session.id()).block(WAIT);
        SessionStatus status = again.ping().block(WAIT);
        assertThat(status.expiresAt()).isAfter(start.plusSeconds(50)).isBefore(start.plusSeconds(62));
        again.destroy().block(WAIT);
    }

    @Test
    void theDefaultProfileLimitsMemoryCpuPidsAndCapabilities() {
        SandboxSession session = provider.create(support.sessionOptions()).block(WAIT);
        try {
            InspectContainerResponse c = support.docker
                    .inspectContainerCmd(support.container(session.id()).getId())
                    .exec();
            var host = c.getHostConfig();
            assertThat(host.getMemory()).isEqualTo(DockerSettings.DEFAULT_MEMORY_LIMIT);
            assertThat(host.getMemorySwap()).isEqualTo(DockerSettings.DEFAULT_MEMORY_LIMIT);
            assertThat(host.getNanoCPUs()).isEqualTo(1_000_000_000L);
            assertThat(host.getPidsLimit()).isPositive();
            assertThat(host.getCapDrop()).containsExactly(Capability.ALL);
            assertThat(List.of(host.getCapAdd()))
                    .extracting(Capability::name)
                    .containsExactlyInAnyOrderElementsOf(DockerSettings.DEFAULT_CAPABILITIES);
            assertThat(host.getSecurityOpts()).contains("no-new-privileges");

            // as the sandboxed code sees itself: no new privileges, and only the capabilities of the profile
            String status = session.run(ExecOptions.shell("grep -E '^(CapEff|NoNewPrivs)' /proc/self/status"))
                    .block(WAIT)
                    .stdout();
            assertThat(status).contains("NoNewPrivs:\t1");
            long capEff = Long.parseLong(
                    status.lines()
                            .filter(l -> l.startsWith("CapEff"))
                            .findFirst()
                            .orElseThrow()
                            .split("\\s+")[1],
                    16);
            assertThat(capEff).isEqualTo(capabilityMask(DockerSettings.DEFAULT_CAPABILITIES));
            // raw sockets and device nodes are among what is gone
            ExecResult mknod =
                    session.run(ExecOptions.shell("mknod /tmp/null c 1 3")).block(WAIT);
            assertThat(mknod.exitCode()).isNotZero();
        } finally {
            session.destroy().block(WAIT);
        }
    }

    @Test
    void theProfileIsLoosenedOnlyOnPurpose() {
        Set<String> caps = new LinkedHashSet<>(DockerSettings.DEFAULT_CAPABILITIES);
        caps.add("NET_RAW");
        DockerSettings loose = DockerTestSupport.settings()
                .withoutMemoryLimit()
                .withoutCpuLimit()
                .withoutPidsLimit()
                .withCapabilities(caps);
        SandboxSession session =
                provider.create(support.sessionOptions(), loose).block(WAIT);
        try {
            var host = support.docker
                    .inspectContainerCmd(support.container(session.id()).getId())
                    .exec()
                    .getHostConfig();
            assertThat(host.getMemory()).isIn(null, 0L);
            assertThat(host.getNanoCPUs()).isIn(null, 0L);
            assertThat(host.getPidsLimit()).isIn(null, 0L, -1L);
            assertThat(List.of(host.getCapAdd())).contains(Capability.NET_RAW);
        } finally {
            session.destroy().block(WAIT);
        }
        assertThatThrownBy(() -> DockerTestSupport.settings()
                        .withCapabilities(Set.of("CAP_SYS_ADMIN"))
                        .validate())
                .isInstanceOf(InvalidArgumentException.class)
                .hasMessageContaining("capabilities")
                .hasMessageContaining("CAP_SYS_ADMIN");
    }

    @Test
    void aReadOnlyRootLeavesOnlyTheWorkdirTmpWritable() {
        SandboxSession session = provider.create(
                        support.sessionOptions(), DockerTestSupport.settings().withReadOnlyRootFilesystem(true))
                .block(WAIT);
        try {
            ExecResult r = session.run(
                            ExecOptions.shell("pwd; echo a > note && cat note; echo b > /tmp/t && cat /tmp/t;"
                                    + " echo c > /etc/x 2>/dev/null && echo etc-written || echo etc-refused"))
                    .block(WAIT);
            assertThat(r.stdout()).isEqualTo(DockerSettings.READ_ONLY_DEFAULT_WORKDIR + "\na\nb\netc-refused\n");
            // the files API works in the workdir
            session.files()
                    .write("up.txt", "uploaded".getBytes(StandardCharsets.UTF_8))
                    .block(WAIT);
            assertThat(new String(session.files().readAllBytes("up.txt", 1024).block(WAIT), StandardCharsets.UTF_8))
                    .isEqualTo("uploaded");
            // and the lifetime still reaches the agent
            session.setLifetime(Duration.ofMinutes(5)).block(WAIT);
        } finally {
            session.destroy().block(WAIT);
        }
    }

    @Test
    void aDiskLimitIsAppliedOrRefusedByNameWhereTheStorageDriverCannot() {
        var info = support.docker.infoCmd().exec();
        String backing = String.valueOf(info.getDriverStatuses());
        boolean limitable = !info.getDriver().equals("overlay2") || backing.contains("xfs");
        DockerSettings limited = DockerTestSupport.settings().withDiskLimit(64L << 20);
        if (limitable) {
            SandboxSession session =
                    provider.create(support.sessionOptions(), limited).block(WAIT);
            session.destroy().block(WAIT);
        } else {
            assertThatThrownBy(() ->
                            provider.create(support.sessionOptions(), limited).block(WAIT))
                    .isInstanceOf(InvalidArgumentException.class)
                    .hasMessageContaining("diskLimit");
        }
    }

    @Test
    void sessionsOnTheBridgeCannotReachEachOther() {
        DockerSettings bridge = DockerTestSupport.settings().withNetwork(DockerSettings.Network.BRIDGE);
        SandboxSession server =
                provider.create(support.sessionOptions(), bridge).block(WAIT);
        SandboxSession other = provider.create(support.sessionOptions(), bridge).block(WAIT);
        try {
            String ip = server.run(ExecOptions.shell(
                            "nc -ll -p 8080 -e /bin/echo reached >/dev/null 2>&1 & sleep 0.3; hostname -i"))
                    .block(WAIT)
                    .stdout()
                    .strip();
            assertThat(ip).matches("[0-9.]+");
            // the listener answers on that address (so the refusal below is the network's doing)
            assertThat(server.run(ExecOptions.shell("nc -w 2 " + ip + " 8080 </dev/null"))
                            .block(WAIT)
                            .stdout())
                    .isEqualTo("reached\n");
            ExecResult fromOther = other.run(ExecOptions.shell("nc -w 2 " + ip + " 8080 </dev/null; echo rc=$?"))
                    .block(WAIT);
            assertThat(fromOther.stdout()).doesNotContain("reached").contains("rc=1");
        } finally {
            server.destroy().block(WAIT);
            other.destroy().block(WAIT);
        }
    }

    @Test
    void aReaperThatCannotReachTheDaemonRefusesSessionsSayingHowToFixIt() {
        // the shared reaper stands aside for this test; the next provider that needs one starts it again
        try {
            support.docker
                    .removeContainerCmd("dev-sandbox-reaper")
                    .withForce(true)
                    .exec();
        } catch (com.github.dockerjava.api.exception.NotFoundException notRunning) {
            // none yet
        }
        try (DockerSandboxProvider misconfigured = DockerSandboxProvider.builder()
                .settings(DockerTestSupport.settings())
                .sweepInterval(null)
                .reaperDockerSocket("/no/such/dir/docker.sock")
                .build()) {
            assertThatThrownBy(
                            () -> misconfigured.create(support.sessionOptions()).block(WAIT))
                    .isInstanceOf(dev.sandbox.BackendException.class)
                    .hasMessageContaining("/no/such/dir/docker.sock")
                    .hasMessageContaining("reaperDockerSocket")
                    .hasMessageContaining("reaper(false)");
        }
        // nothing was left half-made, and a provider with the right socket brings the reaper back
        try (DockerSandboxProvider fine = leasedProvider()) {
            SandboxSession s = fine.create(support.sessionOptions()).block(WAIT);
            assertThat(support.docker
                            .inspectContainerCmd("dev-sandbox-reaper")
                            .exec()
                            .getState()
                            .getRunning())
                    .isTrue();
            s.destroy().block(WAIT);
        }
    }

    @Test
    void aLifetimeChangedRightAfterTheReaperWentAwayStartsItAgain() {
        SandboxSession s = provider.create(support.sessionOptions()).block(WAIT); // the reaper was just checked
        try {
            // the reaper's container goes (its idle exit, or someone removed it) while the provider still counts
            // on its last check: the new deadline is written all the same, to a reaper started again
            support.docker
                    .removeContainerCmd("dev-sandbox-reaper")
                    .withForce(true)
                    .exec();
            s.setLifetime(Duration.ofMinutes(3)).block(WAIT);
            assertThat(support.docker
                            .inspectContainerCmd("dev-sandbox-reaper")
                            .exec()
                            .getState()
                            .getRunning())
                    .isTrue();
            assertThat(s.ping().block(WAIT).expiresAt()).isAfter(Instant.now().plusSeconds(120));
        } finally {
            s.destroy().block(WAIT);
        }
    }

    @Test
    void sessionIdsCarry128RandomBits() {
        Set<String> ids = new HashSet<>();
        for (int i = 0; i < 3; i++) {
            SandboxSession s = provider.create(support.sessionOptions()).block(WAIT);
            ids.add(s.id());
            s.destroy().block(WAIT);
        }
        assertThat(ids).hasSize(3).allMatch(id -> id.matches("docker-[0-9a-f]{32}"));
        // and the bits differ everywhere, not in a counter's low digits
        String[] a = ids.toArray(String[]::new);
        int differing = 0;
        for (int i = 7; i < a[0].length(); i++) {
            if (a[0].charAt(i) != a[1].charAt(i)) {
                differing++;
            }
        }
        assertThat(differing).isGreaterThan(16);
    }

    private static long capabilityMask(Set<String> names) {
        List<String> order = List.of(
                "CHOWN",
                "DAC_OVERRIDE",
                "DAC_READ_SEARCH",
                "FOWNER",
                "FSETID",
                "KILL",
                "SETGID",
                "SETUID",
                "SETPCAP",
                "LINUX_IMMUTABLE",
                "NET_BIND_SERVICE",
                "NET_BROADCAST",
                "NET_ADMIN",
                "NET_RAW",
                "IPC_LOCK",
                "IPC_OWNER",
                "SYS_MODULE",
                "SYS_RAWIO",
                "SYS_CHROOT",
                "SYS_PTRACE",
                "SYS_PACCT",
                "SYS_ADMIN",
                "SYS_BOOT",
                "SYS_NICE",
                "SYS_RESOURCE",
                "SYS_TIME",
                "SYS_TTY_CONFIG",
                "MKNOD",
                "LEASE",
                "AUDIT_WRITE",
                "AUDIT_CONTROL",
                "SETFCAP");
        long mask = 0;
        for (String n : names) {
            mask |= 1L << order.indexOf(n);
        }
        return mask;
    }
}
