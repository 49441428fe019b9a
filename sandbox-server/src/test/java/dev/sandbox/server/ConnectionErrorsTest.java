package dev.sandbox.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sandbox.BackendException;
import dev.sandbox.SandboxException;
import dev.sandbox.SessionOptions;
import dev.sandbox.local.LocalSandboxProvider;
import dev.sandbox.remote.RemoteSandboxProvider;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** Failures to connect and to listen, told in a user's words: the host and port, and what to check or do. */
class ConnectionErrorsTest {
    private static final char[] TOKEN = "errors-test-token-0123456789".toCharArray();
    private static final Duration WAIT = Duration.ofSeconds(30);

    @Test
    void aRefusedConnectionNamesTheHostAndPortAndWhatToCheck() throws Exception {
        // a bound socket that does not listen: connections to its port are refused, and no one else can take it
        try (Socket reserved = new Socket()) {
            reserved.bind(new InetSocketAddress("127.0.0.1", 0));
            int port = reserved.getLocalPort();
            try (RemoteSandboxProvider remote = RemoteSandboxProvider.builder()
                    .baseUrl("http://127.0.0.1:" + port)
                    .token(TOKEN)
                    .build()) {
                assertThatThrownBy(
                                () -> remote.create(SessionOptions.defaults()).block(WAIT))
                        .isInstanceOf(BackendException.class)
                        .satisfies(e ->
                                assertThat(((SandboxException) e).isRetryable()).isTrue())
                        .hasMessage("could not connect to the sandbox server at http://127.0.0.1:" + port
                                + ": the connection was refused (nothing listens on that port); check that the server"
                                + " runs (sandbox serve) and that the URL's host and port are its own");
            }
        }
    }

    @Test
    void aPortInUseIsNamedWithWhatToDo() {
        try (LocalSandboxProvider local = LocalSandboxProvider.create();
                SandboxServer first =
                        SandboxServer.builder(local).port(0).token(TOKEN).start()) {
            assertThatThrownBy(() -> SandboxServer.builder(local)
                            .port(first.port())
                            .token(TOKEN)
                            .start())
                    .isInstanceOf(BackendException.class)
                    .hasMessage("cannot listen on 127.0.0.1:" + first.port() + ": port " + first.port()
                            + " is already in use by another program (perhaps another sandbox serve); stop it, or"
                            + " choose another port (0 picks a free one)");
        }
    }
}
