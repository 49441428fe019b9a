package dev.sandbox.docker;

import static org.assertj.core.api.Assertions.assertThat;

import com.github.dockerjava.api.command.InspectContainerResponse;
import com.github.dockerjava.api.model.Container;
import com.github.dockerjava.api.model.Ulimit;
import dev.sandbox.ExecEvent;
import dev.sandbox.ExecOptions;
import dev.sandbox.ExecResult;
import dev.sandbox.SandboxSession;
import dev.sandbox.SessionTerminatedException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import reactor.core.publisher.Mono;

/**
 * A sandbox that dies under a running command, on both runtimes: removed or killed from outside, out of memory, out of
 * processes. Each ends the command with a typed result or the session with a {@link SessionTerminatedException} that
 * names the cause, within seconds; none hangs and none is a bare exit code 128.
 */
@RequiresDocker
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class DockerSandboxDeathTest {
    private static final Duration WAIT = Duration.ofSeconds(60);
    /** How long a stream may take to fail once its container is removed or killed from outside. */
    private static final Duration PROMPT = Duration.ofSeconds(2);
    /** How long a memory hog or a fork bomb may take to end, limit reached and reported. */
    private static final Duration SECONDS = Duration.ofSeconds(20);

    private static final long MIB = 1024 * 1024;

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

    private SandboxSession session(DockerSettings settings) {
        return provider.create(support.sessionOptions(), settings).block(WAIT);
    }

    private static DockerSettings settings(DockerSettings.Runtime runtime) {
        return DockerTestSupport.settings().withRuntime(runtime);
    }

    /** Runs one streaming command until it printed its first line; the future holds how its stream ended. */
    private static CompletableFuture<Throwable> streamStarted(SandboxSession s) throws InterruptedException {
        CompletableFuture<Throwable> end = new CompletableFuture<>();
        CountDownLatch started = new CountDownLatch(1);
        s.exec(ExecOptions.shell("echo started; sleep 120"))
                .subscribe(
                        e -> started.countDown(),
                        end::complete,
                        () -> end.complete(new AssertionError("the stream completed instead of failing")));
        assertThat(started.await(WAIT.toSeconds(), TimeUnit.SECONDS))
                .as("the command started")
                .isTrue();
        return end;
    }

    /** Prints a measurement to the test's output (target/surefire-reports), for the record. */
    private static void measured(String what, Object value) {
        System.out.println("measured: " + what + ": " + value);
    }

    private static Throwable within(CompletableFuture<Throwable> end, long fromNanos, Duration limit) throws Exception {
        Throwable failure;
        try {
            failure = end.get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
        } catch (java.util.concurrent.TimeoutException e) {
            throw new AssertionError("the stream neither failed nor ended within " + WAIT, e);
        }
        Duration took = Duration.ofNanos(System.nanoTime() - fromNanos);
        measured("stream failed after (ms)", took.toMillis());
        assertThat(took).as("time until the stream failed").isLessThanOrEqualTo(limit);
        return failure;
    }

    @ParameterizedTest
    @EnumSource(DockerSettings.Runtime.class)
    void aContainerRemovedFromOutsideFailsTheStreamTypedWithinTwoSecondsEveryTime(DockerSettings.Runtime runtime)
            throws Exception {
        int tries = runtime == DockerSettings.Runtime.RUNSC ? 20 : 3;
        for (int i = 0; i < tries; i++) {
            SandboxSession s = session(settings(runtime));
            CompletableFuture<Throwable> end = streamStarted(s);
            Container c = support.container(s.id());
            long t0 = System.nanoTime();
            support.docker.removeContainerCmd(c.getId()).withForce(true).exec();
            Throwable failure = within(end, t0, PROMPT);
            measured(runtime + " rm -f try " + i, failure);
            assertThat(failure)
                    .as("try %d on %s", i, runtime)
                    .isInstanceOf(SessionTerminatedException.class)
                    .hasMessageContaining(s.id());
            s.destroy().block(WAIT);
        }
    }

    @ParameterizedTest
    @EnumSource(DockerSettings.Runtime.class)
    void aContainerKilledFromOutsideNamesTheKillAndLaterCallsFailTyped(DockerSettings.Runtime runtime)
            throws Exception {
        SandboxSession s = session(settings(runtime));
        CompletableFuture<Throwable> end = streamStarted(s);
        long t0 = System.nanoTime();
        support.docker.killContainerCmd(support.container(s.id()).getId()).exec();
        assertThat(within(end, t0, PROMPT))
                .isInstanceOf(SessionTerminatedException.class)
                .hasMessageContaining("killed from outside");
        assertThat(s.run(ExecOptions.of("true"))
                        .map(Object.class::cast)
                        .onErrorResume(Mono::just)
                        .block(WAIT))
                .isInstanceOf(SessionTerminatedException.class);
        s.destroy().block(WAIT);
    }

    @ParameterizedTest
    @EnumSource(DockerSettings.Runtime.class)
    void aMemoryHogEndsTheCommandOrTheSessionTypedWithinSeconds(DockerSettings.Runtime runtime) throws Exception {
        SandboxSession s = session(settings(runtime).withMemoryLimit(96 * MIB));
        try {
            long t0 = System.nanoTime();
            Object outcome = s.run(ExecOptions.shell("x=a; while :; do x=$x$x; done"))
                    .map(Object.class::cast)
                    .onErrorResume(Mono::just)
                    .block(WAIT);
            assertThat(Duration.ofNanos(System.nanoTime() - t0)).isLessThanOrEqualTo(SECONDS);
            measured(
                    runtime + " memory hog ended after (ms), with",
                    (System.nanoTime() - t0) / 1_000_000 + ", " + outcome);
            if (outcome instanceof ExecResult r) {
                assertThat(r.termination()).as("%s", r).isEqualTo(ExecEvent.Termination.OOM_KILLED);
            } else {
                assertThat((Throwable) outcome)
                        .isInstanceOf(SessionTerminatedException.class)
                        .hasMessageContaining("out of memory");
            }
        } finally {
            s.destroy().block(WAIT);
        }
    }

    @ParameterizedTest
    @EnumSource(DockerSettings.Runtime.class)
    void aForkBombOnAPidsLimitedSessionFailsItsForksAndTheSessionLives(DockerSettings.Runtime runtime) {
        SandboxSession s = session(settings(runtime).withPidsLimit(64));
        try {
            long t0 = System.nanoTime();
            // the bomb's shell dies at its first failed fork; its parent then ends the sleeps it left
            Object outcome = s.run(ExecOptions.shell("(while :; do sleep 100 & done); kill 0"))
                    .map(Object.class::cast)
                    .onErrorResume(Mono::just)
                    .block(WAIT);
            assertThat(Duration.ofNanos(System.nanoTime() - t0)).isLessThanOrEqualTo(SECONDS);
            measured(
                    runtime + " fork bomb ended after (ms), with",
                    (System.nanoTime() - t0) / 1_000_000 + ", " + outcome);
            assertThat(outcome).isInstanceOf(ExecResult.class);
            ExecResult r = (ExecResult) outcome;
            assertThat(r.exitCode()).isNotZero();
            assertThat(r.stderr()).contains("can't fork");
            // the sandbox survives its processes' limit: once they are gone, commands run again
            assertThat(s.run(ExecOptions.of("echo", "alive")).block(WAIT).stdout())
                    .isEqualTo("alive\n");
        } finally {
            s.destroy().block(WAIT);
        }
    }

    @ParameterizedTest
    @EnumSource(DockerSettings.Runtime.class)
    void thePidsLimitIsTheUsersLimitOnRuncAndInsideTheSandboxOnRunsc(DockerSettings.Runtime runtime) {
        SandboxSession s = session(settings(runtime).withPidsLimit(64));
        try {
            InspectContainerResponse inspect = support.docker
                    .inspectContainerCmd(support.container(s.id()).getId())
                    .exec();
            List<Ulimit> ulimits = inspect.getHostConfig().getUlimits() == null
                    ? List.of()
                    : List.of(inspect.getHostConfig().getUlimits());
            if (runtime == DockerSettings.Runtime.RUNC) {
                assertThat(inspect.getHostConfig().getPidsLimit()).isEqualTo(64L);
                assertThat(ulimits).noneMatch(u -> u.getName().equals("nproc"));
            } else {
                assertThat(inspect.getHostConfig().getPidsLimit()).isGreaterThan(64L);
                assertThat(s.run(ExecOptions.shell("ulimit -u")).block(WAIT).stdout())
                        .isEqualTo("64\n");
            }
        } finally {
            s.destroy().block(WAIT);
        }
    }
}
