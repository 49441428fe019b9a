package dev.sandbox.docker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.github.dockerjava.api.command.InspectContainerResponse;
import com.github.dockerjava.api.command.InspectImageResponse;
import com.github.dockerjava.api.model.Container;
import com.github.dockerjava.api.model.HostConfig;
import dev.sandbox.ExecEvent;
import dev.sandbox.ExecOptions;
import dev.sandbox.ExecResult;
import dev.sandbox.InvalidArgumentException;
import dev.sandbox.ProcessLaunchException;
import dev.sandbox.SandboxSession;
import dev.sandbox.SessionClosedException;
import dev.sandbox.SessionEndReason;
import dev.sandbox.SessionInfo;
import dev.sandbox.SessionOptions;
import dev.sandbox.SessionTerminatedException;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.lang.management.ThreadMXBean;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.test.StepVerifier;

/** Docker-provider behaviour beyond the conformance kit, against a real daemon. */
@RequiresDocker
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class DockerProviderTest {
    private static final Duration WAIT = Duration.ofSeconds(60);
    private static final long MIB = 1024 * 1024;

    /**
     * Grows one shell's memory until the OOM killer ends it. One process on purpose: a pipeline (head | tr) kept
     * allocating after its reader was killed, and the second OOM kill in the cgroup took the container's init (seen in
     * dmesg), which ended the session instead of the command.
     */
    private static final String MEMORY_HOG = "x=a; while :; do x=$x$x; done";

    private DockerTestSupport support;
    private DockerSandboxProvider provider;

    @BeforeAll
    void start() {
        support = new DockerTestSupport();
        // sweeping is what one test checks: here it happens only when a test asks
        provider = DockerTestSupport.unsweptProvider();
    }

    @AfterAll
    void stop() {
        support.finish(provider);
    }

    private SessionOptions options() {
        return support.sessionOptions();
    }

    private SandboxSession session(DockerSettings settings) {
        return provider.create(options(), settings).block(WAIT);
    }

    private SandboxSession session() {
        return session(DockerTestSupport.settings());
    }

    @Test
    void theContainerHasTheLimitsNetworkAndRuntimeAskedFor() {
        SandboxSession s = session(DockerTestSupport.settings()
                .withMemoryLimit(64 * MIB)
                .withCpuLimit(0.5)
                .withPidsLimit(100)
                .withNetwork(DockerSettings.Network.NONE)
                .withRuntime(DockerSettings.Runtime.RUNC)
                .withWorkdir("/workspace")
                .withUser("1000:1000"));
        try {
            Container c = support.container(s.id());
            InspectContainerResponse inspect =
                    support.docker.inspectContainerCmd(c.getId()).exec();
            HostConfig host = inspect.getHostConfig();
            assertThat(host.getMemory()).isEqualTo(64 * MIB);
            assertThat(host.getMemorySwap()).as("no swap beyond the limit").isEqualTo(64 * MIB);
            assertThat(host.getNanoCPUs()).isEqualTo(500_000_000L);
            assertThat(host.getPidsLimit()).isEqualTo(100L);
            assertThat(host.getNetworkMode()).isEqualTo("none");
            assertThat(host.getRuntime()).isEqualTo("runc");
            assertThat(inspect.getConfig().getUser()).isEqualTo("1000:1000");
            assertThat(inspect.getConfig().getLabels())
                    .containsEntry("dev.sandbox.session", s.id())
                    .containsEntry(DockerTestSupport.RUN_LABEL, support.runId);
            ExecResult r = s.run(ExecOptions.shell("pwd; id -u; cat /sys/class/net/*/operstate 2>/dev/null | wc -l"))
                    .block(WAIT);
            assertThat(r.stdout()).startsWith("/workspace\n1000\n");
        } finally {
            s.destroy().block(WAIT);
        }
    }

    @Test
    void gvisorRuntimeIsUsedWhenAskedFor() {
        SandboxSession s = session(DockerTestSupport.settings().withRuntime(DockerSettings.Runtime.RUNSC));
        try {
            Container c = support.container(s.id());
            assertThat(support.docker
                            .inspectContainerCmd(c.getId())
                            .exec()
                            .getHostConfig()
                            .getRuntime())
                    .isEqualTo("runsc");
            // gVisor's own kernel answers, not the host's
            assertThat(s.run(ExecOptions.shell("dmesg 2>/dev/null | head -n 1"))
                            .block(WAIT)
                            .stdout())
                    .contains("gVisor");
        } finally {
            s.destroy().block(WAIT);
        }
    }

    @Test
    void aMemoryHogIsOomKilledAndTheResultSaysSo() {
        SandboxSession s = session(DockerTestSupport.settings().withMemoryLimit(64 * MIB));
        try {
            ExecResult r = s.run(ExecOptions.shell(MEMORY_HOG)).block(WAIT);
            assertThat(r.exitCode()).isEqualTo(137);
            assertThat(r.termination()).isEqualTo(ExecEvent.Termination.OOM_KILLED);
            // a kill that was not the OOM killer's is reported as a plain signal
            ExecResult killed = s.run(ExecOptions.shell("kill -9 $$")).block(WAIT);
            assertThat(killed.termination()).isEqualTo(ExecEvent.Termination.SIGNALED);
            // the session survives
            assertThat(s.run(ExecOptions.of("echo", "alive")).block(WAIT).stdout())
                    .isEqualTo("alive\n");
        } finally {
            s.destroy().block(WAIT);
        }
    }

    @Test
    void theOomKillIsRecognisedThroughAnAttachedHandleToo() {
        SandboxSession s = session(DockerTestSupport.settings().withMemoryLimit(64 * MIB));
        try (DockerSandboxProvider other = DockerSandboxProvider.create(DockerTestSupport.settings())) {
            String hog = MEMORY_HOG;
            assertThat(s.run(ExecOptions.shell(hog)).block(WAIT).termination())
                    .isEqualTo(ExecEvent.Termination.OOM_KILLED);
            SandboxSession attached = other.attach(s.id()).block(WAIT);
            // the earlier kill is not counted against the new handle
            assertThat(attached.run(ExecOptions.shell("kill -9 $$")).block(WAIT).termination())
                    .isEqualTo(ExecEvent.Termination.SIGNALED);
            assertThat(attached.run(ExecOptions.shell(hog)).block(WAIT).termination())
                    .isEqualTo(ExecEvent.Termination.OOM_KILLED);
        } finally {
            s.destroy().block(WAIT);
        }
    }

    @Test
    void theProcessLimitStopsAForkBomb() {
        SandboxSession s = session(DockerTestSupport.settings().withPidsLimit(64));
        try {
            ExecResult r = s.run(
                            ExecOptions.shell(
                                    "i=0; while [ $i -lt 500 ]; do sleep 20 >/dev/null 2>&1 & i=$((i+1)); done; echo launched all"))
                    .block(WAIT);
            assertThat(r.exitCode()).isNotZero();
            assertThat(r.stdout()).doesNotContain("launched all");
            assertThat(r.stderr()).contains("can't fork");
            Container c = support.container(s.id());
            String[][] processes =
                    support.docker.topContainerCmd(c.getId()).exec().getProcesses();
            assertThat(processes.length).isBetween(32, 64);
        } finally {
            s.destroy().block(WAIT); // removal works even with every pid taken
        }
        assertThat(support.container(s.id())).isNull();
    }

    @Test
    void snapshotsOutliveTheirSessionAndRestoreWithoutPulling() {
        SandboxSession s = provider.create(
                        options().withEnv("FROM_SNAPSHOT", "yes").withLifetime(Duration.ofHours(2)))
                .block(WAIT);
        String ref = null;
        try {
            s.run(ExecOptions.shell("mkdir -p /data && echo kept > /data/file")).block(WAIT);
            ref = provider.snapshot(s.id()).block(WAIT);
            assertThat(ref).startsWith(DockerSandboxProvider.SNAPSHOT_REPOSITORY + ":" + s.id() + "-");
            InspectImageResponse image = support.docker.inspectImageCmd(ref).exec();
            assertThat(image.getConfig().getLabels())
                    .containsEntry("dev.sandbox.snapshot.source", s.id())
                    .containsEntry(DockerTestSupport.RUN_LABEL, support.runId);
            s.destroy().block(WAIT);
            assertThat(support.container(s.id())).isNull();

            SandboxSession restored = provider.restore(ref, options()).block(WAIT);
            try {
                assertThat(restored.id()).isNotEqualTo(s.id());
                assertThat(restored.run(ExecOptions.shell("cat /data/file; echo $FROM_SNAPSHOT"))
                                .block(WAIT)
                                .stdout())
                        .isEqualTo("kept\nyes\n");
                Container c = support.container(restored.id());
                assertThat(c.getImage()).isEqualTo(ref);
                // the restored session is its own: its id, its own (default) lifetime, not the snapshotted one's
                assertThat(c.getLabels()).containsEntry("dev.sandbox.session", restored.id());
                assertThat(Long.parseLong(c.getLabels().get("dev.sandbox.expires-at")))
                        .isBetween(
                                Instant.now().getEpochSecond() + 200,
                                // the label is when the reaper removes it: the deadline plus the holder's grace
                                Instant.now()
                                                .plus(SessionOptions.DEFAULT_LIFETIME)
                                                .getEpochSecond()
                                        + DockerSandboxProvider.LIFETIME_GRACE_SECONDS
                                        + 5);
            } finally {
                restored.destroy().block(WAIT);
            }
            StepVerifier.create(provider.restore("sandbox-snapshot:no-such-" + s.id(), options()))
                    .expectErrorSatisfies(e -> assertThat(e)
                            .isInstanceOf(InvalidArgumentException.class)
                            .hasMessageContaining("no-such-" + s.id()))
                    .verify(WAIT);
        } finally {
            if (ref != null) {
                provider.deleteSnapshot(ref).block(WAIT);
                provider.deleteSnapshot(ref).block(WAIT); // idempotent
            }
            s.destroy().block(WAIT);
        }
        assertThat(support.docker
                        .listImagesCmd()
                        .withLabelFilter("dev.sandbox.snapshot.source=" + s.id())
                        .exec())
                .isEmpty();
    }

    @Test
    void anAbsentImageWithPullNeverIsATypedErrorNamingIt() {
        StepVerifier.create(provider.create(
                        options(), DockerTestSupport.settings().withImage("sandbox-test:does-not-exist")))
                .expectErrorSatisfies(e -> {
                    assertThat(e).isInstanceOf(InvalidArgumentException.class);
                    assertThat(((InvalidArgumentException) e).field()).isEqualTo("image");
                    assertThat(e).hasMessageContaining("sandbox-test:does-not-exist");
                })
                .verify(WAIT);
        StepVerifier.create(
                        provider.create(options(), DockerTestSupport.settings().withMemoryLimit(1024)))
                .expectErrorSatisfies(e -> assertThat(e)
                        .isInstanceOf(InvalidArgumentException.class)
                        .hasMessageContaining("memoryLimit"))
                .verify(WAIT);
        StepVerifier.create(provider.create(options().withLabel("dev.sandbox.session", "forged")))
                .expectError(InvalidArgumentException.class)
                .verify(WAIT);
    }

    @Test
    void anImageThatCannotBePulledIsAnErrorNamingItAndHowToChooseAnother() {
        // a registry under .invalid never resolves: the daemon's pull fails on every machine, nothing is downloaded
        String image = "registry.invalid/sandbox/none:1";
        StepVerifier.create(provider.create(
                        options(),
                        DockerTestSupport.settings()
                                .withImage(image)
                                .withPullPolicy(DockerSettings.PullPolicy.IF_NOT_PRESENT)))
                .expectErrorSatisfies(e -> assertThat(e)
                        .isInstanceOf(dev.sandbox.BackendException.class)
                        .hasMessageStartingWith(
                                "docker: image '" + image + "' is not present and could not be pulled (")
                        .hasMessageContaining("docker pull " + image)
                        .hasMessageContaining("--image IMAGE")
                        .hasMessageContaining("pull policy")
                        .hasMessageNotContaining("Exception"))
                .verify(WAIT);
    }

    @Test
    void theLifetimeEndsTheSandboxWithNoClientAlive() throws Exception {
        String id;
        try (DockerSandboxProvider shortLived = DockerSandboxProvider.builder()
                .settings(DockerTestSupport.settings())
                .sweepInterval(null)
                .build()) {
            SandboxSession s = shortLived
                    .create(options().withLifetime(Duration.ofSeconds(3)))
                    .block(WAIT);
            id = s.id();
            assertThat(s.run(ExecOptions.of("true")).block(WAIT).exitCode()).isZero();
        }
        // the provider is closed: nothing in this JVM watches the session any more
        Instant deadline = Instant.now().plusSeconds(20);
        while (support.container(id) != null && Instant.now().isBefore(deadline)) {
            Thread.sleep(200);
        }
        assertThat(support.container(id))
                .as("container of %s after its lifetime", id)
                .isNull();
    }

    @Test
    void theIdleTimeoutEndsAQuietSandboxButNotABusyOne() throws Exception {
        SandboxSession s = provider.create(options().withIdleTimeout(Duration.ofSeconds(3)))
                .block(WAIT);
        long start = System.nanoTime();
        // busy for 7 s, twice the idle timeout: still there afterwards
        assertThat(s.run(ExecOptions.of("sleep", "7")).block(WAIT).exitCode()).isZero();
        assertThat(s.run(ExecOptions.of("true")).block(WAIT).exitCode()).isZero();
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isGreaterThan(Duration.ofSeconds(7));
        Instant deadline = Instant.now().plusSeconds(20);
        while (support.container(s.id()) != null && Instant.now().isBefore(deadline)) {
            Thread.sleep(200);
        }
        assertThat(support.container(s.id())).as("container after 3 s idle").isNull();
        StepVerifier.create(s.run(ExecOptions.of("true")))
                .expectErrorSatisfies(e -> assertThat(e)
                        .isInstanceOfSatisfying(
                                SessionClosedException.class,
                                c -> assertThat(c.reason()).isEqualTo(SessionEndReason.IDLE_TIMEOUT)))
                .verify(WAIT);
    }

    @Test
    void theIdleTimeoutEndsAQuietSandboxWithNoClientAlive() throws Exception {
        String id;
        try (DockerSandboxProvider gone = DockerSandboxProvider.builder()
                .settings(DockerTestSupport.settings())
                .sweepInterval(null)
                .build()) {
            SandboxSession s = gone.create(options().withIdleTimeout(Duration.ofSeconds(2)))
                    .block(WAIT);
            id = s.id();
            assertThat(s.run(ExecOptions.of("true")).block(WAIT).exitCode()).isZero();
        }
        // the container's keep-alive ends it after the idle timeout plus its grace
        Instant deadline = Instant.now().plusSeconds(2 + DockerSandboxProvider.IDLE_GRACE_SECONDS + 15);
        while (support.container(id) != null && Instant.now().isBefore(deadline)) {
            Thread.sleep(250);
        }
        assertThat(support.container(id))
                .as("container of %s after its idle timeout", id)
                .isNull();
    }

    @Test
    void theSweeperRemovesExpiredAndStoppedSessions() {
        long past = Instant.now().getEpochSecond() - 60;
        String expired = support.docker
                .createContainerCmd(DockerTestSupport.IMAGE)
                .withCmd("sleep", "600")
                .withLabels(Map.of(
                        "dev.sandbox.session",
                        "docker-expired-" + support.runId,
                        "dev.sandbox.expires-at",
                        Long.toString(past),
                        DockerTestSupport.RUN_LABEL,
                        support.runId))
                .exec()
                .getId();
        try {
            support.docker.startContainerCmd(expired).exec();
        } catch (com.github.dockerjava.api.exception.ConflictException
                | com.github.dockerjava.api.exception.NotFoundException reaped) {
            // the reaper's round (every second) may remove an expired container even before it starts: also swept
        }
        String stopped = support.docker
                .createContainerCmd(DockerTestSupport.IMAGE)
                .withCmd("true")
                .withLabels(Map.of(
                        "dev.sandbox.session",
                        "docker-stopped-" + support.runId,
                        DockerTestSupport.RUN_LABEL,
                        support.runId))
                .exec()
                .getId();
        support.docker.startContainerCmd(stopped).exec();
        support.docker.waitContainerCmd(stopped).start().awaitStatusCode(30, java.util.concurrent.TimeUnit.SECONDS);
        SandboxSession live =
                provider.create(options().withLifetime(Duration.ofHours(1))).block(WAIT);
        try {
            List<String> swept = provider.sweep().block(WAIT);
            // the reaper's own round (every second) may have removed them first; sweep() reports what it removed
            assertThat(swept)
                    .isSubsetOf("docker-expired-" + support.runId, "docker-stopped-" + support.runId)
                    .doesNotContain(live.id());
            assertThat(support.container("docker-expired-" + support.runId)).isNull();
            assertThat(support.container("docker-stopped-" + support.runId)).isNull();
            assertThat(live.run(ExecOptions.of("true")).block(WAIT).exitCode()).isZero();
        } finally {
            live.destroy().block(WAIT);
        }
    }

    @Test
    void expiredSessionsAreRemovedWithoutAnyoneAsking() throws Exception {
        String expired = support.docker
                .createContainerCmd(DockerTestSupport.IMAGE)
                .withCmd("sleep", "600")
                .withLabels(Map.of(
                        "dev.sandbox.session",
                        "docker-periodic-" + support.runId,
                        "dev.sandbox.expires-at",
                        Long.toString(Instant.now().getEpochSecond() - 1),
                        DockerTestSupport.RUN_LABEL,
                        support.runId))
                .exec()
                .getId();
        support.docker.startContainerCmd(expired).exec();
        DockerSandboxProvider sweeping = DockerSandboxProvider.builder()
                .settings(DockerTestSupport.settings())
                .sweepInterval(Duration.ofSeconds(1))
                .build();
        try {
            Instant deadline = Instant.now().plusSeconds(20);
            while (support.container("docker-periodic-" + support.runId) != null
                    && Instant.now().isBefore(deadline)) {
                Thread.sleep(200);
            }
        } finally {
            sweeping.close();
        }
        assertThat(support.container("docker-periodic-" + support.runId)).isNull();
    }

    @Test
    void closeLeavesTheSandboxRunningForAnotherClient() {
        String id;
        try (DockerSandboxProvider first = DockerSandboxProvider.create(DockerTestSupport.settings())) {
            SandboxSession s = first.create(options()
                            .withLabel("purpose", "handover")
                            .withEnv("VISIBLE", "v")
                            .withSecret("TOKEN", "s3cr3t-value"))
                    .block(WAIT);
            id = s.id();
            s.run(ExecOptions.shell("echo $TOKEN > /tmp/seen")).block(WAIT);
            s.close().block(WAIT);
            StepVerifier.create(s.run(ExecOptions.of("true")))
                    .expectError(SessionClosedException.class)
                    .verify(WAIT);
        }
        Container c = support.container(id);
        assertThat(c).isNotNull();
        assertThat(c.getState()).isEqualTo("running");
        // secrets never reach Docker's own records; env does
        InspectContainerResponse inspect =
                support.docker.inspectContainerCmd(c.getId()).exec();
        assertThat(String.join(",", inspect.getConfig().getEnv()))
                .contains("VISIBLE=v")
                .doesNotContain("s3cr3t");

        SandboxSession again = provider.attach(id).block(WAIT);
        try {
            assertThat(again.labels()).containsEntry("purpose", "handover");
            assertThat(again.run(ExecOptions.shell("cat /tmp/seen; echo ${TOKEN:-none}"))
                            .block(WAIT)
                            .stdout())
                    .isEqualTo("s3cr3t-value\nnone\n");
            List<SessionInfo> listed = provider.list(
                            Map.of("purpose", "handover", DockerTestSupport.RUN_LABEL, support.runId))
                    .collectList()
                    .block(WAIT);
            assertThat(listed).extracting(SessionInfo::id).containsExactly(id);
            assertThat(listed.get(0).provider()).isEqualTo("docker");
            assertThat(listed.get(0).labels()).doesNotContainKey("dev.sandbox.session");
        } finally {
            again.destroy().block(WAIT);
        }
    }

    @Test
    void execOnAContainerRemovedFromOutsideIsATypedErrorNotAHang() throws Exception {
        SandboxSession s = session();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        AtomicInteger lines = new AtomicInteger();
        List<ExecEvent> seen = new CopyOnWriteArrayList<>();
        Disposable running = s.exec(ExecOptions.shell("echo started; sleep 60"))
                .subscribe(
                        e -> {
                            seen.add(e);
                            lines.incrementAndGet();
                        },
                        failure::set,
                        () -> failure.set(new AssertionError("the exec completed; it saw " + seen)));
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (lines.get() == 0 && System.nanoTime() < deadline) {
            Thread.sleep(10);
        }
        Container c = support.container(s.id());
        support.docker.removeContainerCmd(c.getId()).withForce(true).exec();
        deadline = System.nanoTime() + Duration.ofSeconds(15).toNanos();
        while (failure.get() == null && System.nanoTime() < deadline) {
            Thread.sleep(10);
        }
        running.dispose();
        assertThat(failure.get()).isInstanceOf(SessionTerminatedException.class).hasMessageContaining(s.id());
        StepVerifier.create(s.run(ExecOptions.of("true")))
                .expectErrorSatisfies(e -> assertThat(e)
                        .isInstanceOf(SessionTerminatedException.class)
                        .hasMessageContaining(s.id()))
                .verify(WAIT);
        StepVerifier.create(s.ping())
                .expectError(SessionTerminatedException.class)
                .verify(WAIT);
        s.destroy().block(WAIT); // nothing left to remove: still succeeds
    }

    @Test
    void execOnAContainerStoppedFromOutsideIsATypedError() {
        SandboxSession s = session();
        Container c = support.container(s.id());
        support.docker.killContainerCmd(c.getId()).exec();
        StepVerifier.create(s.run(ExecOptions.of("true")))
                .expectError(SessionTerminatedException.class)
                .verify(WAIT);
        s.destroy().block(WAIT);
    }

    @Test
    void aMissingWorkingDirectoryIsALaunchError() {
        SandboxSession s = session();
        try {
            StepVerifier.create(s.run(ExecOptions.of("pwd").withCwd("/no/such/dir")))
                    .expectErrorSatisfies(e -> assertThat(e)
                            .isInstanceOf(ProcessLaunchException.class)
                            .hasMessageContaining("/no/such/dir"))
                    .verify(WAIT);
            // output that merely looks like the daemon's error is output
            ExecResult r = s.run(ExecOptions.shell("echo 'OCI runtime exec failed: not really'; exit 126"))
                    .block(WAIT);
            assertThat(r.stdout()).isEqualTo("OCI runtime exec failed: not really\n");
            assertThat(r.exitCode()).isEqualTo(126);
        } finally {
            s.destroy().block(WAIT);
        }
    }

    @Test
    void slowSubscriberKeepsHeapBoundedAndTheWriterBlocked() throws Exception {
        SandboxSession s = session();
        try {
            long baseline = usedHeapAfterGc();
            AtomicLong pid = new AtomicLong();
            AtomicLong lines = new AtomicLong();
            Disposable subscription = s.exec(
                            // the daemon copies stdout and stderr independently: let the pid through before the flood
                            ExecOptions.shell(
                                    "echo $$ >&2; sleep 1; exec yes 0123456789012345678901234567890123456789"))
                    .doOnNext(e -> {
                        if (e instanceof ExecEvent.Stderr err) {
                            pid.set(Long.parseLong(err.text()));
                        } else {
                            lines.incrementAndGet();
                        }
                    })
                    .limitRate(1)
                    .delayElements(Duration.ofMillis(1))
                    .subscribe();
            try {
                long deadline = System.nanoTime() + WAIT.toNanos();
                while (pid.get() == 0 && System.nanoTime() < deadline) {
                    Thread.sleep(10);
                }
                assertThat(pid.get()).isPositive();
                Thread.sleep(5000);
                long held = usedHeapAfterGc();
                String probe = "cat /proc/" + pid.get() + "/wchan; echo; grep wchar /proc/" + pid.get() + "/io";
                String[] out =
                        s.run(ExecOptions.shell(probe)).block(WAIT).stdout().split("\n");
                long written = Long.parseLong(out[1].replace("wchar:", "").trim());
                System.out.printf(
                        "docker slow subscriber: heap growth %.1f MiB, %d lines delivered, writer wrote %.1f MiB,"
                                + " wchan %s%n",
                        (held - baseline) / (double) MIB, lines.get(), written / (double) MIB, out[0]);
                assertThat(held - baseline).as("heap growth").isLessThan(32 * MIB);
                assertThat(out[0]).as("the writer waits in write()").contains("pipe_write");
                assertThat(written).as("bytes the writer got out").isLessThan(64 * MIB);
            } finally {
                subscription.dispose();
            }
            String check = "[ -r /proc/" + pid.get() + "/stat ] && ! grep -q ') Z ' /proc/" + pid.get() + "/stat";
            long deadline = System.nanoTime() + Duration.ofSeconds(3).toNanos();
            int alive;
            do {
                alive = s.run(ExecOptions.shell(check)).block(WAIT).exitCode();
            } while (alive == 0 && System.nanoTime() < deadline);
            assertThat(alive).as("writer killed within 3 s of cancel").isNotZero();
        } finally {
            s.destroy().block(WAIT);
        }
    }

    @Test
    void twoHundredConcurrentStreamsStayWithin64PlatformThreads() throws Exception {
        SandboxSession s = session();
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        AtomicInteger peakThreads = new AtomicInteger(threads.getThreadCount());
        AtomicInteger live = new AtomicInteger();
        AtomicInteger peakLive = new AtomicInteger();
        Thread sampler = Thread.ofPlatform().daemon().start(() -> {
            while (!Thread.currentThread().isInterrupted()) {
                peakThreads.accumulateAndGet(threads.getThreadCount(), Math::max);
                try {
                    Thread.sleep(20);
                } catch (InterruptedException e) {
                    return;
                }
            }
        });
        long start = System.nanoTime();
        try {
            // every command blocks opening a FIFO until all 200 have started, so they overlap whatever the exec rate
            assertThat(s.run(ExecOptions.of("mkfifo", "/tmp/go")).block(WAIT).exitCode())
                    .isZero();
            String cmd = "echo start; read line < /tmp/go; seq 1 2000";
            Disposable release = Flux.interval(Duration.ofMillis(100))
                    .filter(t -> live.get() >= 200)
                    .next()
                    .flatMap(t -> s.run(ExecOptions.shell("exec 3>/tmp/go; sleep 1")))
                    .subscribe();
            List<Long> counts;
            try {
                counts = Flux.range(0, 200)
                        .flatMap(
                                i -> s.exec(ExecOptions.shell(cmd).withTimeout(Duration.ofMinutes(3)))
                                        .doOnNext(e -> {
                                            if (e instanceof ExecEvent.Stdout out
                                                    && out.text().equals("start")) {
                                                peakLive.accumulateAndGet(live.incrementAndGet(), Math::max);
                                            } else if (e instanceof ExecEvent.Exit exit) {
                                                live.decrementAndGet();
                                                assertThat(exit.code()).isZero();
                                            }
                                        })
                                        // whole lines: on a busy machine a line may come in two parts (partial)
                                        .filter(e -> e instanceof ExecEvent.Stdout out && !out.partial())
                                        .count(),
                                200)
                        .collectList()
                        .block(Duration.ofSeconds(240));
            } finally {
                release.dispose();
            }
            assertThat(counts).hasSize(200).allMatch(c -> c == 2001);
        } finally {
            sampler.interrupt();
            sampler.join();
            s.destroy().block(WAIT);
        }
        System.out.printf(
                "docker: 200 streams in %d ms, peak %d running at once, peak %d live platform threads%n",
                Duration.ofNanos(System.nanoTime() - start).toMillis(), peakLive.get(), peakThreads.get());
        assertThat(peakLive.get()).as("streams running at once").isEqualTo(200);
        assertThat(peakThreads.get()).as("live platform threads").isLessThanOrEqualTo(64);
    }

    @Test
    void handlesFailAfterTheProviderIsClosed() {
        DockerSandboxProvider own = DockerSandboxProvider.create(DockerTestSupport.settings());
        SandboxSession s = own.create(options()).block(WAIT);
        own.close();
        assertThatThrownBy(() -> s.run(ExecOptions.of("true")).block(WAIT)).isInstanceOf(SessionClosedException.class);
        provider.attach(s.id()).flatMap(SandboxSession::destroy).block(WAIT);
    }

    private static long usedHeapAfterGc() throws InterruptedException {
        MemoryMXBean memory = ManagementFactory.getMemoryMXBean();
        for (int i = 0; i < 3; i++) {
            System.gc();
            Thread.sleep(50);
        }
        return memory.getHeapMemoryUsage().getUsed();
    }
}
