package dev.sandbox.kubernetes;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sandbox.ExecOptions;
import dev.sandbox.SandboxSession;
import dev.sandbox.SessionTerminatedException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import reactor.core.publisher.Mono;

/**
 * A session pod deleted from outside under a running command (as an operator or a controller would, with plain
 * fabric8 and no grace): the command's stream fails with a {@link SessionTerminatedException} naming the session and
 * the cause within two seconds, and every later call fails the same way. The Docker provider's equivalent is
 * DockerSandboxDeathTest.
 */
@RequiresKubernetes
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class KubernetesPodDeathTest {
    private static final Duration WAIT = Duration.ofSeconds(60);
    /** How long a stream may take to fail once its pod is deleted: the watch event, then the session's end. */
    private static final Duration PROMPT = Duration.ofSeconds(2);

    private KubernetesTestSupport support;
    private KubernetesSandboxProvider provider;

    @BeforeAll
    void start() {
        KubernetesTestSupport.loadAgentImage();
        support = new KubernetesTestSupport();
        provider = KubernetesTestSupport.provider();
    }

    @AfterAll
    void stop() {
        support.finish(provider);
    }

    @Test
    void aPodDeletedFromOutsideFailsTheStreamTypedWithinTwoSecondsAndEveryLaterCall() throws Exception {
        for (int i = 0; i < 3; i++) {
            SandboxSession s = provider.create(support.sessionOptions()).block(WAIT);
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

            long t0 = System.nanoTime();
            support.client
                    .pods()
                    .inNamespace(support.namespace)
                    .withName(s.id())
                    .withGracePeriod(0)
                    .delete();
            Throwable failure = end.get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
            Duration took = Duration.ofNanos(System.nanoTime() - t0);
            System.out.println("measured: pod deletion to typed stream error (ms), try " + i + ": " + took.toMillis()
                    + " (" + failure + ")");
            assertThat(took).as("time until the stream failed").isLessThanOrEqualTo(PROMPT);
            assertThat(failure)
                    .isInstanceOf(SessionTerminatedException.class)
                    .hasMessageContaining(s.id())
                    .hasMessageContaining("deleted");
            assertThat(((SessionTerminatedException) failure).isRetryable()).isFalse();

            // later calls: the same typed error, at once, with no call to the cluster needed
            for (Mono<?> call : new Mono<?>[] {
                s.run(ExecOptions.of("true")), s.files().stat("/"), s.ping(), s.start(ExecOptions.of("true"))
            }) {
                Object outcome =
                        call.map(Object.class::cast).onErrorResume(Mono::just).block(Duration.ofSeconds(10));
                assertThat(outcome)
                        .isInstanceOf(SessionTerminatedException.class)
                        .asInstanceOf(org.assertj.core.api.InstanceOfAssertFactories.THROWABLE)
                        .hasMessageContaining(s.id())
                        .hasMessageContaining("deleted");
            }
            // destroying an ended session is not an error the user must handle
            s.destroy().onErrorResume(e -> Mono.empty()).block(WAIT);
        }
    }

    @Test
    void attachingToASessionWhosePodWasJustDeletedSaysNotFound() {
        // another provider instance: nothing known of the session but what its own watch saw, which may lag the
        // deletion by a moment; a leased session makes the attach add the attaching provider's lease to the pod
        try (KubernetesSandboxProvider other = KubernetesTestSupport.provider()) {
            for (int i = 0; i < 5; i++) {
                SandboxSession s = provider.create(support.sessionOptions()).block(WAIT);
                support.client
                        .pods()
                        .inNamespace(support.namespace)
                        .withName(s.id())
                        .withGracePeriod(0)
                        .delete();
                Object outcome = other.attach(s.id())
                        .map(Object.class::cast)
                        .onErrorResume(Mono::just)
                        .block(WAIT);
                assertThat(outcome).as("try %d", i).isInstanceOf(dev.sandbox.SessionNotFoundException.class);
                s.destroy().onErrorResume(e -> Mono.empty()).block(WAIT);
            }
        }
    }
}
