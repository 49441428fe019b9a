package dev.sandbox.samples.webflux;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sandbox.SandboxProvider;
import dev.sandbox.samples.webflux.ExecController.ExecRequest;
import io.netty.buffer.PooledByteBufAllocator;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;
import org.reactivestreams.Publisher;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.core.ResolvableType;
import org.springframework.core.codec.Hints;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DataBufferUtils;
import org.springframework.core.io.buffer.NettyDataBuffer;
import org.springframework.core.io.buffer.NettyDataBufferFactory;
import org.springframework.http.HttpHeaders;
import org.springframework.http.MediaType;
import org.springframework.http.ReactiveHttpOutputMessage;
import org.springframework.http.codec.HttpMessageWriter;
import org.springframework.http.codec.ServerCodecConfigurer;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * The buffers the server allocates to write an exec event, when the client goes away in the middle of the stream.
 *
 * <p>Over a real socket, whether the server's demand ends inside an event when the client disconnects is a race (it
 * made {@link ExecEndpointTest} fail its leak check about one run in five). Here the demand is set: the application's
 * own SSE writer (from its codecs) writes the controller's real stream, of a real process, to a client that takes the
 * first buffer the server writes and disconnects, as a client whose connection drops after one write. Every buffer
 * taken from the pooled allocator must be released by then.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class ExecEventBuffersTest {
    private static final Duration WAIT = Duration.ofSeconds(20);

    @Autowired
    ExecController controller;

    @Autowired
    ServerCodecConfigurer codecs;

    @Autowired
    SandboxProvider provider;

    @Test
    void a_client_that_disconnects_after_the_first_write_leaves_no_pooled_buffer_unreleased() throws Exception {
        // the element type as Spring's result handler sees it: the declared return type's element
        ResolvableType elementType = ResolvableType.forMethodReturnType(
                        ExecController.class.getMethod("exec", ExecRequest.class))
                .getGeneric();
        HttpMessageWriter<Object> writer = sseWriter(elementType);
        OneWriteClient client = new OneWriteClient();

        writer.write(
                        controller.exec(new ExecRequest(List.of("sh", "-c", "echo one; sleep 60"))),
                        elementType,
                        MediaType.TEXT_EVENT_STREAM,
                        client,
                        Hints.none())
                .block(WAIT);

        assertThat(client.buffers.unreleased())
                .as("buffers the SSE writer took from the pool and never released")
                .isEmpty();
        assertThat(client.firstWrite)
                .as("the first write is the whole first event")
                .isEqualTo("event:stdout\ndata:{\"text\":\"one\",\"offset\":0,\"partial\":false}\n\n");
        assertNoSessionsWithin(Duration.ofSeconds(2));
    }

    @SuppressWarnings("unchecked")
    private HttpMessageWriter<Object> sseWriter(ResolvableType elementType) {
        return (HttpMessageWriter<Object>) codecs.getWriters().stream()
                .filter(w -> w.canWrite(elementType, MediaType.TEXT_EVENT_STREAM))
                .findFirst()
                .orElseThrow();
    }

    private void assertNoSessionsWithin(Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        List<?> sessions = provider.list(Map.of()).collectList().block(WAIT);
        while (!sessions.isEmpty() && System.nanoTime() - deadline < 0) {
            Thread.sleep(20);
            sessions = provider.list(Map.of()).collectList().block(WAIT);
        }
        assertThat(sessions).as("sessions left after the client went away").isEmpty();
    }

    /** Netty's pooled allocator, as the server's, remembering what it handed out through the factory. */
    static final class RecordingBufferFactory extends NettyDataBufferFactory {
        private final Queue<NettyDataBuffer> allocated = new ConcurrentLinkedQueue<>();

        RecordingBufferFactory() {
            super(PooledByteBufAllocator.DEFAULT);
        }

        @Override
        public NettyDataBuffer allocateBuffer(int initialCapacity) {
            NettyDataBuffer buffer = super.allocateBuffer(initialCapacity);
            allocated.add(buffer);
            return buffer;
        }

        List<NettyDataBuffer> unreleased() {
            return allocated.stream()
                    .filter(b -> b.getNativeBuffer().refCnt() > 0)
                    .toList();
        }
    }

    /**
     * The response of a client that reads what the server writes first and then disconnects: demand for one buffer,
     * then cancel, as reactor-netty does when the connection closes. It releases what it received, as the channel
     * does once written.
     */
    static final class OneWriteClient implements ReactiveHttpOutputMessage {
        final RecordingBufferFactory buffers = new RecordingBufferFactory();
        final HttpHeaders headers = new HttpHeaders();
        volatile String firstWrite;

        @Override
        public HttpHeaders getHeaders() {
            return headers;
        }

        @Override
        public RecordingBufferFactory bufferFactory() {
            return buffers;
        }

        @Override
        public void beforeCommit(Supplier<? extends Mono<Void>> action) {}

        @Override
        public boolean isCommitted() {
            return false;
        }

        @Override
        public Mono<Void> writeWith(Publisher<? extends DataBuffer> body) {
            return writeAndFlushWith(Mono.just(body));
        }

        @Override
        public Mono<Void> writeAndFlushWith(Publisher<? extends Publisher<? extends DataBuffer>> body) {
            // take(1) asks for exactly one buffer, then cancels the writer's stream
            return Flux.from(body)
                    .concatMap(event -> event, 1)
                    .take(1)
                    .doOnNext(buffer -> {
                        firstWrite = buffer.toString(StandardCharsets.UTF_8);
                        DataBufferUtils.release(buffer);
                    })
                    .then();
        }

        @Override
        public Mono<Void> setComplete() {
            return Mono.empty();
        }
    }
}
