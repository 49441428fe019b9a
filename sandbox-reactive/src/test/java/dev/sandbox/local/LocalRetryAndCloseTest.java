package dev.sandbox.local;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assumptions.assumeThat;

import com.sun.jna.Library;
import com.sun.jna.Native;
import dev.sandbox.BackgroundProcess;
import dev.sandbox.ExecOptions;
import dev.sandbox.ExecResult;
import dev.sandbox.ProcessLaunchException;
import dev.sandbox.ProviderClosedException;
import dev.sandbox.SandboxException;
import dev.sandbox.SandboxSession;
import dev.sandbox.SandboxTimeoutException;
import dev.sandbox.SessionClosedException;
import dev.sandbox.SessionEndReason;
import dev.sandbox.SessionNotFoundException;
import dev.sandbox.SessionOptions;
import dev.sandbox.implementation.process.LaunchErrors;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import reactor.util.retry.Retry;

/** The local provider says whether a retry can help, and closes without blocking. */
class LocalRetryAndCloseTest {
    private static final Duration WAIT = Duration.ofSeconds(30);

    @TempDir
    Path tmp;

    /** libc's resource limits, for starving this JVM of file descriptors for a moment. */
    interface Rlimits extends Library {
        Rlimits C = Native.load("c", Rlimits.class);
        int RLIMIT_NOFILE = 7;
        int O_RDONLY = 0;

        int getrlimit(int resource, long[] limit);

        int setrlimit(int resource, long[] limit);

        int open(String path, int flags);

        int close(int fd);
    }

    @Test
    void aProgramThatDoesNotExistIsNotRetryable() {
        try (LocalSandboxProvider provider = LocalSandboxProvider.create(tmp)) {
            SandboxSession s = provider.create(SessionOptions.defaults()).block(WAIT);
            assertThatThrownBy(
                            () -> s.run(ExecOptions.of("no-such-program-here")).block(WAIT))
                    .isInstanceOfSatisfying(
                            ProcessLaunchException.class,
                            e -> assertThat(e.isRetryable())
                                    .as("a missing program stays missing")
                                    .isFalse());
            assertThatThrownBy(() -> s.run(ExecOptions.of("true").withCwd("/no/such/dir"))
                            .block(WAIT))
                    .isInstanceOfSatisfying(
                            ProcessLaunchException.class,
                            e -> assertThat(e.isRetryable()).isFalse());
            assertThatThrownBy(() -> provider.attach("local-nope").block(WAIT))
                    .isInstanceOfSatisfying(
                            SessionNotFoundException.class,
                            e -> assertThat(e.isRetryable()).isFalse());
            s.destroy().block(WAIT);
        }
    }

    @Test
    void aStartThatRanOutOfFileDescriptorsIsRetryableAndARetryPasses() {
        try (LocalSandboxProvider provider = LocalSandboxProvider.create(tmp)) {
            assumeThat(provider.processLauncher()).isEqualTo("native-epoll");
            SandboxSession s = provider.create(SessionOptions.defaults()).block(WAIT);
            assertThat(s.run(ExecOptions.of("true")).block(WAIT).exitCode()).isZero();

            // loading a class from target/classes takes a descriptor: load what the failure path needs first
            assertThat(LaunchErrors.retryable(0)).isFalse();
            assertThatThrownBy(
                            () -> s.run(ExecOptions.of("no-such-program-here")).block(WAIT))
                    .isInstanceOf(ProcessLaunchException.class);
            AtomicInteger tries = new AtomicInteger();
            assertThat(Mono.defer(() -> tries.incrementAndGet() == 1
                                    ? Mono.error(new ProcessLaunchException("warm-up", null, true))
                                    : s.run(ExecOptions.of("true")))
                            .retryWhen(retryable())
                            .block(WAIT)
                            .exitCode())
                    .isZero();

            long[] saved = new long[2];
            assertThat(Rlimits.C.getrlimit(Rlimits.RLIMIT_NOFILE, saved)).isZero();
            Throwable failure;
            try {
                starve(saved);
                failure = s.run(ExecOptions.of("true"))
                        .map(r -> (Throwable) new AssertionError("started without a descriptor: " + r))
                        .onErrorResume(e -> Mono.just(e))
                        .block(WAIT);
            } finally {
                Rlimits.C.setrlimit(Rlimits.RLIMIT_NOFILE, saved);
            }
            assertThat(failure).isInstanceOf(ProcessLaunchException.class).hasMessageContaining("Too many open files");
            assertThat(((SandboxException) failure).isRetryable())
                    .as("EMFILE passes once descriptors are free")
                    .isTrue();

            // what the README recommends, while descriptors come back after a moment: retry only what may pass
            ExecResult retried;
            AtomicInteger failedTries = new AtomicInteger();
            try {
                starve(saved);
                Schedulers.parallel()
                        .schedule(() -> Rlimits.C.setrlimit(Rlimits.RLIMIT_NOFILE, saved), 50, TimeUnit.MILLISECONDS);
                retried = s.run(ExecOptions.of("true"))
                        .doOnError(e -> failedTries.incrementAndGet())
                        .retryWhen(retryable())
                        .block(WAIT);
            } finally {
                Rlimits.C.setrlimit(Rlimits.RLIMIT_NOFILE, saved);
            }
            assertThat(retried.exitCode()).isZero();
            assertThat(failedTries)
                    .as("tries that failed before descriptors came back")
                    .hasPositiveValue();
            s.destroy().block(WAIT);
        }
    }

    private static Retry retryable() {
        return Retry.backoff(8, Duration.ofMillis(20)).filter(e -> e instanceof SandboxException x && x.isRetryable());
    }

    /** Lowers this JVM's descriptor limit to its lowest free descriptor: no new descriptor fits until it is raised. */
    private static void starve(long[] saved) {
        int lowest = Rlimits.C.open("/dev/null", Rlimits.O_RDONLY);
        assertThat(lowest).isPositive();
        Rlimits.C.close(lowest);
        assertThat(Rlimits.C.setrlimit(Rlimits.RLIMIT_NOFILE, new long[] {lowest, saved[1]}))
                .isZero();
    }

    @Test
    void launchErrnosThatPassAreRetryable() {
        assertThat(LaunchErrors.retryable(11)).as("EAGAIN").isTrue();
        assertThat(LaunchErrors.retryable(12)).as("ENOMEM").isTrue();
        assertThat(LaunchErrors.retryable(24)).as("EMFILE").isTrue();
        assertThat(LaunchErrors.retryable(23)).as("ENFILE").isTrue();
        assertThat(LaunchErrors.retryable(2)).as("ENOENT").isFalse();
        assertThat(LaunchErrors.retryable(13)).as("EACCES").isFalse();
        assertThat(LaunchErrors.retryable(8)).as("ENOEXEC").isFalse();
        assertThat(new SandboxTimeoutException("x", Duration.ofSeconds(1)).isRetryable())
                .isTrue();
    }

    @Test
    void closeAsyncFromAnEventLoopDestroysTheSessionsWithoutBlockingAndThenRefusesWork() throws Exception {
        LocalSandboxProvider provider = LocalSandboxProvider.create(tmp);
        SandboxSession s = provider.create(SessionOptions.defaults()).block(WAIT);
        Path workdir = Path.of(s.run(ExecOptions.of("pwd")).block(WAIT).stdout().strip());
        Files.writeString(workdir.resolve("data.txt"), "x");
        BackgroundProcess sleeper = s.start(ExecOptions.of("sleep", "60")).block(WAIT);
        AtomicBoolean onEventLoop = new AtomicBoolean();

        // subscribed on a parallel thread, where BlockHound fails any blocking call
        Mono.delay(Duration.ofMillis(1))
                .flatMap(x -> {
                    onEventLoop.set(Schedulers.isInNonBlockingThread());
                    return provider.closeAsync();
                })
                .block(WAIT);

        assertThat(onEventLoop).isTrue();
        assertThat(workdir).doesNotExist();
        // the process ended with its session: its exit says why, not as a kill -9 would
        assertThatThrownBy(() -> sleeper.exit().block(WAIT))
                .isInstanceOfSatisfying(
                        SessionClosedException.class,
                        e -> assertThat(e.reason()).isEqualTo(SessionEndReason.PROVIDER_CLOSED));
        assertThatThrownBy(() -> s.run(ExecOptions.of("true")).block(WAIT))
                .isInstanceOfSatisfying(SessionClosedException.class, e -> {
                    assertThat(e.reason()).isEqualTo(SessionEndReason.PROVIDER_CLOSED);
                    assertThat(e.isRetryable()).isFalse();
                });
        assertThatThrownBy(() -> provider.create(SessionOptions.defaults()).block(WAIT))
                .isInstanceOfSatisfying(ProviderClosedException.class, e -> {
                    assertThat(e.provider()).isEqualTo("local");
                    assertThat(e.isRetryable()).isFalse();
                });
        assertThatThrownBy(() -> provider.list(Map.of()).collectList().block(WAIT))
                .isInstanceOf(ProviderClosedException.class);
        // idempotent, and close() after closeAsync() returns at once
        provider.closeAsync().block(WAIT);
        provider.close();
    }

    @Test
    void closeOnAnEventLoopStartsTheCloseInsteadOfBlocking() {
        LocalSandboxProvider provider = LocalSandboxProvider.create(tmp);
        SandboxSession s = provider.create(SessionOptions.defaults()).block(WAIT);
        Mono.delay(Duration.ofMillis(1)).doOnNext(x -> provider.close()).block(WAIT);
        provider.closeAsync().block(WAIT);
        assertThatThrownBy(() -> s.run(ExecOptions.of("true")).block(WAIT)).isInstanceOf(SessionClosedException.class);
    }
}
