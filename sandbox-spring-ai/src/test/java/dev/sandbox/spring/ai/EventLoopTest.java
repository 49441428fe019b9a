package dev.sandbox.spring.ai;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sandbox.SandboxSession;
import dev.sandbox.SessionOptions;
import dev.sandbox.local.LocalSandboxProvider;
import dev.sandbox.tools.SandboxTools;
import dev.sandbox.tools.ToolLimits;
import java.time.Duration;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.ai.chat.client.ChatClient;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import reactor.netty.DisposableServer;
import reactor.netty.http.client.HttpClient;
import reactor.netty.http.server.HttpServer;

/**
 * The sandbox tools behind a real HTTP server on loopback, whose handlers run on Netty event loops as a WebFlux
 * application's do: a blocking {@code call()} made on the event loop is refused by the tool (the loop is never
 * blocked), the same call moved to {@code boundedElastic} works, and {@code stream()} works as it is.
 */
class EventLoopTest {

    private static final Duration WAIT = Duration.ofSeconds(30);
    private static final String RUN = "{\"command\": \"echo served by the sandbox\"}";

    private static LocalSandboxProvider provider;
    private static SandboxSession session;
    private static SandboxTools tools;
    private static DisposableServer server;
    private static final Queue<String> handlerThreads = new ConcurrentLinkedQueue<>();

    @BeforeAll
    static void serve() {
        provider = LocalSandboxProvider.create();
        session = provider.create(SessionOptions.defaults()).block(WAIT);
        tools = SandboxTools.of(session, ToolLimits.defaults().withTimeout(Duration.ofSeconds(20)));
        server = HttpServer.create()
                .host("127.0.0.1")
                .port(0)
                .route(routes -> routes.get(
                                "/call",
                                (request, response) -> response.sendString(answer(Mono.fromCallable(() -> {
                                    handlerThreads.add(Thread.currentThread().getName());
                                    return chat().call().content();
                                }))))
                        .get(
                                "/call-offloaded",
                                (request, response) -> response.sendString(answer(
                                        Mono.fromCallable(() -> chat().call().content())
                                                .subscribeOn(Schedulers.boundedElastic()))))
                        .get(
                                "/stream",
                                (request, response) -> response.sendString(chat().stream()
                                        .content()
                                        .onErrorResume(e -> Mono.just("failed: " + e.getMessage())))))
                .bindNow(WAIT);
    }

    @AfterAll
    static void stop() {
        server.disposeNow(WAIT);
        session.destroy().block(WAIT);
        provider.close();
    }

    private static ChatClient.ChatClientRequestSpec chat() {
        return ChatClient.create(ScriptedChatModel.calling(SandboxToolCallbacks.RUN_COMMAND, RUN))
                .prompt("use the sandbox")
                .tools(SandboxToolCallbacks.of(tools));
    }

    private static Mono<String> answer(Mono<String> reply) {
        return reply.onErrorResume(e -> Mono.just("failed: " + e.getMessage()));
    }

    private static String get(String path) {
        return HttpClient.create()
                .baseUrl("http://127.0.0.1:" + server.port())
                .get()
                .uri(path)
                .responseContent()
                .aggregate()
                .asString()
                .block(WAIT);
    }

    @Test
    void aBlockingCallOnTheEventLoopIsRefusedByTheToolNamingTheThread() {
        String body = get("/call");

        assertThat(handlerThreads).isNotEmpty().allMatch(name -> name.startsWith("reactor-http-"));
        assertThat(body)
                .startsWith("failed: the sandbox tool 'run_command' blocks")
                .contains("non-blocking thread 'reactor-http-")
                .contains("stream()");
    }

    @Test
    void theSameCallMovedToBoundedElasticRunsTheTool() {
        assertThat(get("/call-offloaded")).contains("exit code: 0").contains("served by the sandbox");
    }

    @Test
    void streamRunsTheToolFromTheEventLoopAsItIs() {
        assertThat(get("/stream")).contains("exit code: 0").contains("served by the sandbox");
    }
}
