package dev.sandbox.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sandbox.ExecOptions;
import dev.sandbox.ExecResult;
import dev.sandbox.SandboxSession;
import dev.sandbox.SessionOptions;
import dev.sandbox.local.LocalSandboxProvider;
import dev.sandbox.remote.RemoteSandboxProvider;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * 1,250 clients at once through a server that serves 32 connections: every request is answered, its command's own
 * output and nothing else, none cut. Over the limit a request waits in the guard's queue, or is answered 503 with
 * {@code Retry-After} and sent again by the remote provider. Ten providers (ten client processes, as it were) each
 * run 125 commands at once, each on its own connection.
 */
class ConnectionLimitLoadTest {
    private static final char[] TOKEN = "load-token-0123456789abcdef".toCharArray();
    private static final int PROVIDERS = 10;
    private static final int PER_PROVIDER = 125;
    private static final int SLOTS = 32;

    @Test
    void everyOneOf1250ConcurrentClientsIsAnsweredNoneCut() throws Exception {
        List<RemoteSandboxProvider> providers = new ArrayList<>();
        try (LocalSandboxProvider local = LocalSandboxProvider.create();
                SandboxServer server = SandboxServer.builder(local)
                        .port(0)
                        .token(TOKEN)
                        .maxConnections(SLOTS)
                        .start()) {
            List<SandboxSession> sessions = new ArrayList<>();
            for (int p = 0; p < PROVIDERS; p++) {
                RemoteSandboxProvider remote = RemoteSandboxProvider.builder()
                        .baseUrl(server.baseUrl())
                        .token(TOKEN)
                        .maxConnections(PER_PROVIDER)
                        .build();
                providers.add(remote);
                sessions.add(remote.create(SessionOptions.defaults()).block(Duration.ofSeconds(30)));
            }

            Map<Integer, String> failures = new ConcurrentHashMap<>();
            AtomicInteger answered = new AtomicInteger();
            long start = System.nanoTime();
            Flux.range(0, PROVIDERS * PER_PROVIDER)
                    .flatMap(
                            i -> sessions.get(i % PROVIDERS)
                                    .run(ExecOptions.of("echo", "client-" + i))
                                    .doOnNext(r -> {
                                        if (check(r, i)) {
                                            answered.incrementAndGet();
                                        } else {
                                            failures.put(i, "exit " + r.exitCode() + ", stdout '" + r.stdout() + "'");
                                        }
                                    })
                                    .onErrorResume(e -> {
                                        failures.put(i, e.toString());
                                        return Mono.empty();
                                    }),
                            PROVIDERS * PER_PROVIDER)
                    .blockLast(Duration.ofSeconds(60));
            long ms = (System.nanoTime() - start) / 1_000_000;
            System.out.printf(
                    "1250 concurrent clients through %d slots: %d answered, %d failed, %d ms%n",
                    SLOTS, answered.get(), failures.size(), ms);
            assertThat(failures)
                    .as("clients whose request was not answered correctly")
                    .isEmpty();
            assertThat(answered.get()).isEqualTo(PROVIDERS * PER_PROVIDER);
            for (SandboxSession s : sessions) {
                s.destroy().block(Duration.ofSeconds(30));
            }
        } finally {
            for (RemoteSandboxProvider p : providers) {
                p.close();
            }
        }
    }

    private static boolean check(ExecResult r, int i) {
        return r.exitCode() == 0 && r.stdout().equals("client-" + i + "\n");
    }
}
