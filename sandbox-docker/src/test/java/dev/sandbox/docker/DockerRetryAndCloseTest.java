package dev.sandbox.docker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.github.dockerjava.api.model.Container;
import dev.sandbox.BackendException;
import dev.sandbox.ExecOptions;
import dev.sandbox.InvalidArgumentException;
import dev.sandbox.ProviderClosedException;
import dev.sandbox.SandboxException;
import dev.sandbox.SandboxSession;
import dev.sandbox.SessionClosedException;
import dev.sandbox.SessionEndReason;
import dev.sandbox.SessionOptions;
import dev.sandbox.SessionTerminatedException;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import reactor.util.retry.Retry;

/** Whether a retry can help, against a real daemon, and closing the provider without blocking. */
@RequiresDocker
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class DockerRetryAndCloseTest {
    private static final Duration WAIT = Duration.ofSeconds(60);

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

    private SessionOptions options() {
        return support.sessionOptions();
    }

    @Test
    void anAbsentImageWithPullNeverIsNotRetryable() {
        assertThatThrownBy(() -> provider.create(
                                options(), DockerTestSupport.settings().withImage("sandbox-test:does-not-exist"))
                        .block(WAIT))
                .isInstanceOfSatisfying(
                        InvalidArgumentException.class,
                        e -> assertThat(e.isRetryable()).isFalse());
    }

    @Test
    void aPausedContainerIsRetryableAndARetryPassesOnceItRunsAgain() {
        SandboxSession s = provider.create(options()).block(WAIT);
        try {
            String container = support.container(s.id()).getId();
            support.docker.pauseContainerCmd(container).exec();
            try {
                assertThatThrownBy(() -> s.run(ExecOptions.of("true")).block(WAIT))
                        .isInstanceOfSatisfying(BackendException.class, e -> {
                            assertThat(e.isRetryable()).isTrue();
                            assertThat(e).hasMessageContaining("paused");
                        });
                Schedulers.boundedElastic()
                        .schedule(
                                () -> support.docker
                                        .unpauseContainerCmd(container)
                                        .exec(),
                                300,
                                TimeUnit.MILLISECONDS);
                assertThat(s.run(ExecOptions.shell("echo back"))
                                .retryWhen(Retry.backoff(10, Duration.ofMillis(100))
                                        .filter(e -> e instanceof SandboxException x && x.isRetryable()))
                                .block(WAIT)
                                .stdout())
                        .isEqualTo("back\n");
            } finally {
                if (Boolean.TRUE.equals(support.docker
                        .inspectContainerCmd(container)
                        .exec()
                        .getState()
                        .getPaused())) {
                    support.docker.unpauseContainerCmd(container).exec();
                }
            }
        } finally {
            s.destroy().block(WAIT);
        }
    }

    @Test
    void aContainerRemovedFromOutsideIsNotRetryable() {
        SandboxSession s = provider.create(options()).block(WAIT);
        support.docker
                .removeContainerCmd(support.container(s.id()).getId())
                .withForce(true)
                .exec();
        assertThatThrownBy(() -> s.run(ExecOptions.of("true")).block(WAIT))
                .isInstanceOfSatisfying(
                        SessionTerminatedException.class,
                        e -> assertThat(e.isRetryable()).isFalse());
        s.destroy().onErrorResume(e -> Mono.empty()).block(WAIT);
    }

    @Test
    void closeAsyncFromAnEventLoopLeavesTheSandboxRunningAndRefusesWork() {
        DockerSandboxProvider own = DockerSandboxProvider.builder()
                .settings(DockerTestSupport.settings())
                .build();
        SandboxSession s = own.create(options()).block(WAIT);
        s.start(ExecOptions.of("sleep", "60")).block(WAIT); // a command for the close to stop
        AtomicBoolean onEventLoop = new AtomicBoolean();

        // subscribed on a parallel thread, where BlockHound fails any blocking call
        Mono.delay(Duration.ofMillis(1))
                .flatMap(x -> {
                    onEventLoop.set(Schedulers.isInNonBlockingThread());
                    return own.closeAsync();
                })
                .block(WAIT);

        assertThat(onEventLoop).isTrue();
        assertThatThrownBy(() -> own.create(options()).block(WAIT))
                .isInstanceOfSatisfying(
                        ProviderClosedException.class,
                        e -> assertThat(e.isRetryable()).isFalse());
        assertThatThrownBy(() -> own.list(Map.of()).collectList().block(WAIT))
                .isInstanceOf(ProviderClosedException.class);
        assertThatThrownBy(() -> s.run(ExecOptions.of("true")).block(WAIT))
                .isInstanceOfSatisfying(
                        SessionClosedException.class,
                        e -> assertThat(e.reason()).isEqualTo(SessionEndReason.PROVIDER_CLOSED));
        own.closeAsync().block(WAIT); // idempotent
        own.close();

        Container c = support.container(s.id());
        assertThat(c.getState()).as("sessions outlive their provider").isEqualTo("running");
        provider.attach(s.id()).flatMap(SandboxSession::destroy).block(WAIT);
    }
}
