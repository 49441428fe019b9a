package dev.sandbox;

import java.nio.ByteBuffer;
import java.util.OptionalLong;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * A command running on a pseudo-terminal, from {@link SandboxSession#pty(PtyOptions)}. Its output is raw terminal
 * bytes (escape sequences included), kept in a ring so a client attaching later first gets the recent screen's
 * bytes. Any number of clients may read it at once; each counts as attached while subscribed.
 *
 * <pre>{@code
 * PtySession pty = session.pty(PtyOptions.shell()).block(timeout);
 * pty.output().subscribe(bytes -> terminal.write(bytes));
 * pty.write(ByteBuffer.wrap("ls -l\n".getBytes(UTF_8))).block(timeout);
 * pty.resize(120, 40).block(timeout);
 * }</pre>
 */
public interface PtySession {

    /**
     * The PTY's id within its session.
     *
     * @return the id
     */
    String id();

    /**
     * The pid of the command inside the sandbox, where known.
     *
     * @return the pid or empty
     */
    OptionalLong pid();

    /**
     * Streams the terminal's output: first the bytes still held for replay, then live output; completes when the
     * command has ended.
     *
     * @return output bytes
     */
    Flux<ByteBuffer> output();

    /**
     * Streams the terminal's output from a byte offset, for a client resuming after a dropped connection; an
     * offset already dropped fails with {@link OffsetUnavailableException}.
     *
     * @param offset the first byte wanted
     * @return output bytes
     */
    Flux<ByteBuffer> output(long offset);

    /**
     * Types bytes into the terminal. Writes reach the terminal in the order they are subscribed, also when a caller
     * does not wait for one before the next; at most 16 may wait at once, beyond that a write fails with {@link
     * SandboxStateException}.
     *
     * @param input the bytes, as a keyboard would send them
     * @return completes when written
     */
    Mono<Void> write(ByteBuffer input);

    /**
     * Changes the terminal size; the command receives SIGWINCH.
     *
     * @param cols columns, 1 to 1000
     * @param rows rows, 1 to 1000
     * @return completes when resized
     */
    Mono<Void> resize(int cols, int rows);

    /**
     * Sends a signal to the command's process group.
     *
     * @param signal a signal number from 1 to 64
     * @return completes when sent
     */
    Mono<Void> signal(int signal);

    /**
     * Kills the command and its process group.
     *
     * @return completes when the kill was sent
     */
    Mono<Void> kill();

    /**
     * Emits the exit when the command ends.
     *
     * @return the exit
     */
    Mono<ExecEvent.Exit> exit();
}
