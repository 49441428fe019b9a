package dev.sandbox.kubernetes;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sandbox.BackendException;
import dev.sandbox.ExecOptions;
import dev.sandbox.ExecResult;
import dev.sandbox.SandboxSession;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

/**
 * Code in a Kubernetes sandbox that attacks its agent, seen from the host: it signals the agent (process 1) and kills
 * every process it can, speaks garbage to the agent, writes garbage into this client's own relay, and tries to replace
 * the agent's read-only directory. The host gets typed errors within bounded waits and never hangs; the session
 * works afterwards over a new connection. The Docker provider's equivalents are DockerAgentTest's hostile cases.
 */
@RequiresKubernetes
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class KubernetesHostileSandboxTest {
    private static final Duration WAIT = Duration.ofSeconds(60);

    private KubernetesTestSupport support;
    private KubernetesSandboxProvider provider;
    private SandboxSession session;

    @BeforeAll
    void start() {
        KubernetesTestSupport.loadAgentImage();
        support = new KubernetesTestSupport();
        provider = KubernetesTestSupport.provider();
        session = provider.create(support.sessionOptions()).block(WAIT);
    }

    @AfterAll
    void stop() {
        try {
            if (session != null) {
                session.destroy().block(WAIT);
            }
        } finally {
            support.finish(provider);
        }
    }

    /** The session still runs commands (over a new connection when the last one was cut). */
    private void assertAlive() {
        assertThat(session.run(ExecOptions.shell("echo still; cat /proc/1/cmdline | tr '\\0' ' '"))
                        .block(WAIT)
                        .stdout())
                .startsWith("still\n/.dev-sandbox/sandbox-agent init");
    }

    @Test
    void codeInTheSandboxCannotKillItsAgentAndGarbageEndsOnlyItsOwnConnection() {
        // SIGKILL and SIGSTOP to process 1 (the agent), SIGTERM to everything else (the relay of this connection
        // included), and random bytes spoken to the agent on a connection of its own
        Object outcome = session.run(ExecOptions.shell("kill -9 1; kill -STOP 1; kill -TERM -1;"
                        + " head -c 100000 /dev/urandom | timeout 5 /.dev-sandbox/sandbox-agent relay | wc -c;"
                        + " echo done"))
                .map(Object.class::cast)
                .onErrorResume(Mono::just)
                .block(WAIT);
        // the TERM may reach this connection's relay before the command ends: then the command fails typed, retryable
        if (outcome instanceof ExecResult r) {
            assertThat(r.stdout()).endsWith("done\n");
        } else {
            assertThat(outcome)
                    .isInstanceOfSatisfying(
                            BackendException.class,
                            e -> assertThat(e.isRetryable()).isTrue());
        }
        assertAlive();
    }

    @Test
    void codeThatKillsEveryProcessCutsTheConnectionTypedAndTheNextCommandMakesANewOne() {
        // kill -9 -1 reaches every process but the agent (process 1) and the caller: the relay of this client's
        // exec included, so what runs on that connection fails with a retryable error naming the connection
        StepVerifier.create(session.run(ExecOptions.shell("sleep 0.2; kill -9 -1; sleep 20")))
                .expectErrorSatisfies(e -> assertThat(e)
                        .isInstanceOfSatisfying(
                                BackendException.class,
                                x -> assertThat(x.isRetryable()).isTrue())
                        .hasMessageContaining("connection to the agent"))
                .verify(WAIT);
        assertThat(session.run(ExecOptions.shell("echo again")).block(WAIT).stdout())
                .isEqualTo("again\n");
    }

    @Test
    void garbageWrittenIntoThisClientsRelayFailsTheConnectionTypedNotTheJvm() {
        // the relay's standard output is this client's stream from the API server: code in the sandbox opens it
        // through /proc and writes random frames into it, then waits
        Object outcome = session.run(ExecOptions.shell("for p in $(pidof sandbox-agent); do [ $p = 1 ] && continue;"
                                + " head -c 65536 /dev/urandom > /proc/$p/fd/1; done; sleep 20")
                        .withTimeout(Duration.ofSeconds(30)))
                .map(Object.class::cast)
                .onErrorResume(Mono::just)
                .block(WAIT);
        System.out.println("measured: garbage into the relay gave: " + outcome);
        assertThat(outcome).isInstanceOf(BackendException.class);
        assertAlive();
    }

    @Test
    void theAgentsDirectoryIsReadOnlyForCodeInTheSandbox() {
        ExecResult r = session.run(ExecOptions.shell("echo evil > /.dev-sandbox/sandbox-agent; echo w=$?;"
                        + " rm -f /.dev-sandbox/sandbox-agent; echo r=$?;"
                        + " mv /.dev-sandbox/sandbox-agent /.dev-sandbox/x; echo m=$?;"
                        + " echo evil > /.dev-sandbox/new; echo n=$?;"
                        + " mount -o remount,rw /.dev-sandbox; echo o=$?"))
                .block(WAIT);
        assertThat(r.stdout()).doesNotContain("=0\n");
        assertThat(r.stderr()).contains("Read-only file system");
        // a new connection starts the agent's relay from the untouched directory
        session.run(ExecOptions.shell("kill -9 -1; sleep 5"))
                .onErrorResume(e -> Mono.empty())
                .block(WAIT);
        assertAlive();
        assertThat(session.files()
                        .stat("/.dev-sandbox/new")
                        .map(Object.class::cast)
                        .onErrorResume(Mono::just)
                        .block(WAIT))
                .isInstanceOf(dev.sandbox.FileOperationException.class);
    }
}
