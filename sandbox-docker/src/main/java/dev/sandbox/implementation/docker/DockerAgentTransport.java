package dev.sandbox.implementation.docker;

import dev.sandbox.BackendException;
import dev.sandbox.implementation.agent.AgentTransport;
import dev.sandbox.implementation.process.RawEvent;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.core.scheduler.Schedulers;

/**
 * One connection to a session's agent: one daemon exec of {@code sandbox-agent relay} inside the container, whose
 * stdin and stdout are joined to the agent's socket. The container's own attach stream is not used: every attached
 * client shares its one stdin, so two clients would interleave their bytes. One exec per connection costs one daemon
 * round (about as much as one command used to); every operation after it is frames.
 *
 * <p>The relay's stderr (at most 4 KiB kept) only explains a relay that could not connect.
 */
final class DockerAgentTransport implements AgentTransport {
    private static final Logger LOG = LoggerFactory.getLogger(DockerAgentTransport.class);
    private static final int MAX_STDERR = 4096;

    private final DockerControl control;
    private final DockerDataPlane data;
    private final String sessionId;
    private final String containerId;

    DockerAgentTransport(DockerControl control, DockerDataPlane data, String sessionId, String containerId) {
        this.control = control;
        this.data = data;
        this.sessionId = sessionId;
        this.containerId = containerId;
    }

    @Override
    public Flux<ByteBuffer> open(Flux<ByteBuffer> outbound) {
        return Mono.fromCallable(() -> control.execCreate(
                        sessionId,
                        containerId,
                        List.of(AgentInstaller.PATH, "relay"),
                        List.of(),
                        null,
                        null,
                        true,
                        false))
                .subscribeOn(Schedulers.boundedElastic())
                .flatMapMany(execId -> {
                    // stdin is written once the daemon said the stream is up
                    Sinks.Empty<Void> streaming = Sinks.empty();
                    ExecStreamDecoder decoder = new ExecStreamDecoder(
                            (status, message) -> DockerErrors.execStart(sessionId, status, message),
                            streaming::tryEmitEmpty);
                    StringBuilder stderr = new StringBuilder();
                    AtomicInteger seen = new AtomicInteger();
                    return data.exec(execId, outbound, decoder, streaming)
                            .<ByteBuffer>handle((event, sink) -> {
                                if (event instanceof RawEvent.Chunk chunk) {
                                    if (chunk.stream() == RawEvent.STDOUT) {
                                        seen.addAndGet(chunk.bytes().length);
                                        sink.next(ByteBuffer.wrap(chunk.bytes()));
                                    } else if (stderr.length() < MAX_STDERR) {
                                        String text = new String(chunk.bytes(), StandardCharsets.UTF_8);
                                        stderr.append(text, 0, Math.min(text.length(), MAX_STDERR - stderr.length()));
                                    }
                                }
                            })
                            .concatWith(Mono.defer(() -> {
                                byte[] held = decoder.heldLaunchError();
                                if (held != null || (seen.get() == 0 && !stderr.isEmpty())) {
                                    String why =
                                            held != null ? new String(held, StandardCharsets.UTF_8) : stderr.toString();
                                    return Mono.error(new BackendException(
                                            "cannot reach the sandbox agent of session " + sessionId + ": "
                                                    + why.strip(),
                                            null,
                                            false));
                                }
                                if (!stderr.isEmpty()) {
                                    LOG.debug("agent relay of session {} said: {}", sessionId, stderr);
                                }
                                return Mono.empty();
                            }));
                });
    }
}
