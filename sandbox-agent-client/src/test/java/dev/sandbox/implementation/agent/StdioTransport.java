package dev.sandbox.implementation.agent;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.scheduler.Schedulers;

/**
 * The real agent as a local child in {@code stdio} mode: its stdin and stdout are the pipe, pumped on
 * boundedElastic (blocking reads and writes, never on a non-blocking thread). Reads reuse one 64 KiB buffer: the
 * client reads each buffer during {@code onNext} only. Cancelling, or the end of the pipe, kills the child.
 */
final class StdioTransport implements AgentTransport {
    private final Path binary;
    private volatile Process process;

    StdioTransport(Path binary) {
        this.binary = binary;
    }

    /** The agent binary: {@code -Dsandbox.agent.binary}, else what the sandbox-agent module built; null if absent. */
    static Path findBinary() {
        String prop = System.getProperty("sandbox.agent.binary");
        Path p = prop != null
                ? Path.of(prop)
                : Path.of(
                        "..",
                        "sandbox-agent",
                        "target",
                        "classes",
                        "dev",
                        "sandbox",
                        "agent",
                        "linux-x86_64",
                        "sandbox-agent");
        return Files.isExecutable(p) ? p.toAbsolutePath().normalize() : null;
    }

    @Override
    public Flux<ByteBuffer> open(Flux<ByteBuffer> outbound) {
        return Flux.defer(() -> {
            Process p;
            try {
                p = new ProcessBuilder(binary.toString(), "stdio")
                        .redirectError(ProcessBuilder.Redirect.INHERIT)
                        .start();
            } catch (IOException e) {
                return Flux.error(e);
            }
            process = p;
            OutputStream in = p.getOutputStream();
            InputStream out = p.getInputStream();
            Disposable writer = outbound.publishOn(Schedulers.boundedElastic(), 8)
                    .subscribe(buf -> write(in, buf), e -> closeQuietly(in), () -> closeQuietly(in));
            byte[] chunk = new byte[64 * 1024];
            return Flux.<ByteBuffer>generate(sink -> {
                        try {
                            int n = out.read(chunk);
                            if (n < 0) {
                                sink.complete();
                            } else {
                                sink.next(ByteBuffer.wrap(chunk, 0, n));
                            }
                        } catch (IOException e) {
                            sink.error(e);
                        }
                    })
                    .subscribeOn(Schedulers.boundedElastic())
                    .doFinally(s -> {
                        writer.dispose();
                        p.destroyForcibly();
                    });
        });
    }

    private static void write(OutputStream in, ByteBuffer buf) {
        try {
            if (buf.hasArray()) {
                in.write(buf.array(), buf.arrayOffset() + buf.position(), buf.remaining());
            } else {
                byte[] b = new byte[buf.remaining()];
                buf.get(b);
                in.write(b);
            }
            in.flush();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static void closeQuietly(OutputStream in) {
        try {
            in.close();
        } catch (IOException e) {
            // the agent is gone: its stdout ends too
        }
    }

    /** Kills the child, if started, and waits for it (bounded). */
    void kill() throws InterruptedException {
        Process p = process;
        if (p != null) {
            p.destroyForcibly();
            p.waitFor(5, TimeUnit.SECONDS);
        }
    }
}
