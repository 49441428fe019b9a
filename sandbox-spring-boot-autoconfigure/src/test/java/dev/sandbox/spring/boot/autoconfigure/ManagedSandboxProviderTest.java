package dev.sandbox.spring.boot.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sandbox.ProviderClosedException;
import dev.sandbox.SandboxProvider;
import dev.sandbox.SandboxSession;
import dev.sandbox.SessionOptions;
import dev.sandbox.local.LocalSandboxProvider;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

/** The managed provider's shutdown with creates under way: no session made through it outlives its close. */
class ManagedSandboxProviderTest {
    private static final Duration WAIT = Duration.ofSeconds(20);

    /** The local provider behind a gate: its creates wait for the test, and closing it leaves its sessions. */
    private static final class Gated extends ForwardingProvider {
        final Sinks.Empty<Void> gate = Sinks.empty();

        Gated(SandboxProvider delegate) {
            super(delegate);
        }

        @Override
        public Mono<SandboxSession> create(SessionOptions options) {
            return gate.asMono().then(delegate.create(options));
        }

        @Override
        public void close() {}

        @Override
        public Mono<Void> closeAsync() {
            return Mono.empty();
        }
    }

    @Test
    void aCreateUnderWayWhenClosingBeginsIsWaitedForAndItsSessionDestroyed() throws Exception {
        try (LocalSandboxProvider local = LocalSandboxProvider.create()) {
            Gated gated = new Gated(local);
            ManagedSandboxProvider managed =
                    ManagedSandboxProvider.builder(gated).build();
            CompletableFuture<SandboxSession> created =
                    managed.create(SessionOptions.defaults()).toFuture();
            CompletableFuture<Void> closed = managed.closeAsync().toFuture();

            // the close waits for the create: a listing now would miss the session about to exist
            Thread.sleep(300);
            assertThat(closed).as("close while a create is under way").isNotDone();
            gated.gate.tryEmitEmpty();

            closed.get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
            assertThatThrownBy(() -> created.get(WAIT.toMillis(), TimeUnit.MILLISECONDS))
                    .isInstanceOf(ExecutionException.class)
                    .cause()
                    .isInstanceOf(ProviderClosedException.class);
            assertThat(local.list(Map.of()).collectList().block(WAIT))
                    .as("sessions left on the wrapped provider")
                    .isEmpty();
            // and nothing new starts once closing began
            assertThatThrownBy(() -> managed.create(SessionOptions.defaults()).block(WAIT))
                    .isInstanceOf(ProviderClosedException.class);
        }
    }

    @Test
    void aSessionCreatedBeforeClosingIsDestroyedByIt() {
        try (LocalSandboxProvider local = LocalSandboxProvider.create()) {
            Gated gated = new Gated(local);
            gated.gate.tryEmitEmpty();
            ManagedSandboxProvider managed =
                    ManagedSandboxProvider.builder(gated).build();
            SandboxSession session = managed.create(SessionOptions.defaults()).block(WAIT);
            assertThat(local.list(Map.of()).collectList().block(WAIT))
                    .extracting(info -> info.id())
                    .containsExactly(session.id());
            managed.closeAsync().block(WAIT);
            assertThat(local.list(Map.of()).collectList().block(WAIT)).isEmpty();
        }
    }
}
