package dev.sandbox.blocking;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sandbox.ExecOptions;
import dev.sandbox.InvalidArgumentException;
import dev.sandbox.SessionNotFoundException;
import dev.sandbox.SessionOptions;
import dev.sandbox.local.LocalSandboxProvider;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The blocking facade's named sessions: twenty threads racing on one name share one session; attach by name. */
class NamedClientTest {
    private LocalSandboxProvider provider;

    @BeforeEach
    void start() {
        provider = LocalSandboxProvider.create();
    }

    @AfterEach
    void stop() {
        provider.close();
    }

    @Test
    void twentyThreadsRacingCreateOrAttachShareOneSessionAndCloseLeavesIt() throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(20);
        CountDownLatch go = new CountDownLatch(1);
        List<Future<SandboxClient>> futures = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            futures.add(pool.submit(() -> {
                go.await();
                return SandboxClient.createOrAttach(
                        provider, "shared-cache", SessionOptions.defaults().withLabel("race", "blocking"));
            }));
        }
        go.countDown();
        Set<String> ids = new HashSet<>();
        List<SandboxClient> clients = new ArrayList<>();
        for (Future<SandboxClient> f : futures) {
            SandboxClient c = f.get(30, TimeUnit.SECONDS);
            clients.add(c);
            ids.add(c.sessionId());
            assertThat(c.name()).contains("shared-cache");
        }
        pool.shutdown();
        assertThat(ids).hasSize(1);
        assertThat(provider.list(Map.of("race", "blocking")).collectList().block(Duration.ofSeconds(5)))
                .hasSize(1);
        for (SandboxClient c : clients) {
            c.close(); // releases the shared handle only
        }
        try (SandboxClient again = SandboxClient.attachByName(provider, "shared-cache")) {
            assertThat(again.sessionId()).isEqualTo(ids.iterator().next());
            assertThat(again.process().run(ExecOptions.shell("echo ok")).stdout())
                    .isEqualTo("ok\n");
        }
    }

    @Test
    void aMissingOrBadNameIsATypedError() {
        assertThatThrownBy(() -> SandboxClient.attachByName(provider, "nobody-has-this"))
                .isInstanceOf(SessionNotFoundException.class)
                .hasMessageContaining("nobody-has-this");
        assertThatThrownBy(() -> SandboxClient.createOrAttach(provider, "Bad_Name", SessionOptions.defaults()))
                .isInstanceOfSatisfying(
                        InvalidArgumentException.class,
                        e -> assertThat(e.field()).isEqualTo("name"))
                .hasMessageContaining("Bad_Name");
    }
}
