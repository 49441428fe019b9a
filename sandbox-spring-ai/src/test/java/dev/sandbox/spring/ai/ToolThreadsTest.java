package dev.sandbox.spring.ai;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sandbox.ExecOptions;
import dev.sandbox.SandboxSession;
import dev.sandbox.SessionOptions;
import dev.sandbox.local.LocalSandboxProvider;
import dev.sandbox.tools.SandboxTools;
import dev.sandbox.tools.ToolLimits;
import java.time.Duration;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.CancellationException;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.ai.chat.client.ChatClient;
import org.springframework.ai.tool.ToolCallback;
import org.springframework.ai.tool.definition.ToolDefinition;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/** Where Spring AI runs the sandbox tools, and what they do on a thread that must not block. */
class ToolThreadsTest {

    private static final Duration WAIT = Duration.ofSeconds(30);
    private static LocalSandboxProvider provider;

    private SandboxSession session;
    private SandboxTools tools;

    @BeforeAll
    static void provider() {
        provider = LocalSandboxProvider.create();
    }

    @AfterAll
    static void closeProvider() {
        provider.close();
    }

    @BeforeEach
    void session() {
        session = provider.create(SessionOptions.defaults()).block(WAIT);
        tools = SandboxTools.of(session, ToolLimits.defaults().withTimeout(Duration.ofSeconds(20)));
    }

    @AfterEach
    void destroy() {
        session.destroy().onErrorComplete().block(WAIT);
    }

    @Test
    void callOnANonBlockingThreadFailsNamingTheToolAndTheThreadAndRunsNothing() {
        ScriptedChatModel model =
                ScriptedChatModel.calling(SandboxToolCallbacks.RUN_COMMAND, "{\"command\": \"touch ran\"}");

        Mono<String> reply = Mono.fromCallable(() -> ChatClient.create(model)
                        .prompt("use the sandbox")
                        .tools(SandboxToolCallbacks.of(tools))
                        .call()
                        .content())
                .subscribeOn(Schedulers.parallel());

        assertThatThrownBy(() -> reply.block(WAIT))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("'run_command'")
                .hasMessageContaining("non-blocking thread 'parallel-")
                .hasMessageContaining("stream()");
        assertThat(model.toolAnswers()).isEmpty();
        assertThat(session.files().exists("ran").block(WAIT)).isFalse();
    }

    @Test
    void aCallbackCalledDirectlyOnANonBlockingThreadFailsToo() {
        ToolCallback readFile = SandboxToolCallbacks.of(tools).get(2);

        Mono<String> answer =
                Mono.fromCallable(() -> readFile.call("{\"path\": \"x\"}")).subscribeOn(Schedulers.parallel());

        assertThatThrownBy(() -> answer.block(WAIT))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("'read_file'");
    }

    @Test
    void streamRunsTheToolsOnBoundedElasticThoughTheModelStreamsOnANonBlockingThread() {
        ScriptedChatModel model =
                ScriptedChatModel.calling(SandboxToolCallbacks.RUN_COMMAND, "{\"command\": \"echo streamed\"}");
        Queue<String> threads = new ConcurrentLinkedQueue<>();
        List<ToolCallback> recording = SandboxToolCallbacks.of(tools).stream()
                .map(callback -> recordingThread(callback, threads))
                .toList();

        List<String> chunks = ChatClient.create(model).prompt("use the sandbox").tools(recording).stream()
                .content()
                .subscribeOn(Schedulers.parallel())
                .collectList()
                .block(WAIT);

        assertThat(model.streamThreads()).hasSize(2).allMatch(name -> name.startsWith("parallel-"));
        assertThat(threads).singleElement().asString().startsWith("boundedElastic-");
        assertThat(model.toolAnswers())
                .singleElement()
                .asString()
                .contains("exit code: 0")
                .contains("streamed");
        assertThat(String.join("", chunks)).contains("streamed");
    }

    @Test
    void interruptingTheCallingThreadCancelsTheCallAndKillsTheCommand() throws Exception {
        ToolCallback runCommand = SandboxToolCallbacks.of(tools).get(0);
        assertThat(session.run(ExecOptions.shell("mkfifo started")).block(WAIT).exitCode())
                .isZero();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        AtomicBoolean stillInterrupted = new AtomicBoolean();
        Thread caller = Thread.ofPlatform().start(() -> {
            try {
                runCommand.call("{\"command\": \"sleep 60 & echo $! > started; wait\"}");
            } catch (Throwable e) {
                failure.set(e);
                stillInterrupted.set(Thread.currentThread().isInterrupted());
            }
        });

        // the command blocks writing the FIFO until this reads it: then its sleep runs
        String pid = session.run(ExecOptions.shell("cat started").withTimeout(WAIT))
                .block(WAIT)
                .stdout()
                .strip();
        caller.interrupt();
        caller.join(WAIT.toMillis());

        assertThat(caller.isAlive()).isFalse();
        assertThat(failure.get()).isInstanceOf(CancellationException.class).hasMessageContaining("'run_command'");
        assertThat(stillInterrupted).isTrue();
        assertThat(pid).containsOnlyDigits();
        int gone = session.run(ExecOptions.shell("while kill -0 " + pid + " 2>/dev/null; do sleep 0.05; done")
                        .withTimeout(Duration.ofSeconds(10)))
                .block(WAIT)
                .exitCode();
        assertThat(gone)
                .as("the sleep started by the cancelled command is killed")
                .isZero();
    }

    private static ToolCallback recordingThread(ToolCallback delegate, Queue<String> threads) {
        return new ToolCallback() {
            @Override
            public ToolDefinition getToolDefinition() {
                return delegate.getToolDefinition();
            }

            @Override
            public String call(String toolInput) {
                threads.add(Thread.currentThread().getName());
                return delegate.call(toolInput);
            }
        };
    }
}
