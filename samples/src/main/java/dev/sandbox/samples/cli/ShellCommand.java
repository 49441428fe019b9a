package dev.sandbox.samples.cli;

import dev.sandbox.ExecEvent;
import dev.sandbox.PtyOptions;
import dev.sandbox.PtySession;
import dev.sandbox.SandboxSession;
import dev.sandbox.blocking.SandboxClient;
import java.io.FileDescriptor;
import java.io.FileInputStream;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code sandbox shell}: a command on a terminal in a session, wired to this terminal. The terminal is put in raw
 * mode (and restored on the way out, also when the JVM is stopped), keys are passed on as typed, the command's output
 * is written as it comes, and the terminal's size is checked a few times a second and passed on when it changes.
 */
@Command(
        name = "shell",
        customSynopsis = "sandbox shell [PROVIDER] [--session SESSION] [-- CMD [ARG...]]",
        description = {
            "Runs CMD [/bin/sh] on a terminal in a new session (or, with --session, in an existing one), with this"
                    + " terminal in raw mode and its size passed on as it changes; exits with CMD's exit code."
        })
final class ShellCommand extends SessionSubcommand {
    /** How long a single step (start, one write, a resize, the exit) may take. */
    private static final Duration STEP = Duration.ofSeconds(30);
    /** How often the terminal's size is checked. */
    private static final long SIZE_POLL_MS = 250;

    @Option(
            names = "--session",
            paramLabel = "SESSION",
            converter = Values.NonBlank.class,
            description = "use this existing session, which stays (docker, remote) [a new one]")
    String session;

    @Parameters(paramLabel = "CMD", arity = "0..*", description = "the command and its arguments, after -- [/bin/sh]")
    List<String> args = List.of();

    /** CMD and its arguments, known after {@link #validate()}. */
    List<String> command;

    @Override
    void validate() {
        super.validate();
        List<String> given = afterDashes(args);
        command = given == null ? List.of("/bin/sh") : given;
    }

    @Override
    int execute() throws UsageException {
        Tty tty = Tty.open();
        try (SessionSource sessions = sessions();
                SessionSource.Lease lease = sessions.session(session, SandboxClient.DEFAULT_TIMEOUT)) {
            return run(lease.session(), command, tty);
        }
    }

    private static int run(SandboxSession session, List<String> command, Tty tty) {
        int[] size = tty.size();
        PtyOptions options = PtyOptions.of(command.toArray(String[]::new));
        if (size != null) {
            options = options.withSize(size[0], size[1]);
        }
        PtySession pty = session.pty(options).block(STEP);
        Thread restore = new Thread(tty::restore, "sandbox-shell-restore-tty");
        Runtime.getRuntime().addShutdownHook(restore);
        tty.raw();
        OutputStream out = new FileOutputStream(FileDescriptor.out);
        Thread keys = daemon("sandbox-shell-keys", () -> pumpKeys(new FileInputStream(FileDescriptor.in), pty));
        Thread resizer = daemon("sandbox-shell-size", () -> followSize(tty, pty, size));
        try {
            for (ByteBuffer chunk : pty.output().toIterable(4)) {
                byte[] bytes = new byte[chunk.remaining()];
                chunk.duplicate().get(bytes);
                out.write(bytes);
                out.flush();
            }
            ExecEvent.Exit exit = pty.exit().block(STEP);
            return exit == null ? SandboxCli.EXIT_ERROR : exit.code();
        } catch (IOException e) {
            pty.kill().block(STEP);
            return SandboxCli.EXIT_ERROR;
        } finally {
            resizer.interrupt();
            keys.interrupt();
            tty.restore();
            try {
                Runtime.getRuntime().removeShutdownHook(restore);
            } catch (IllegalStateException shuttingDown) {
                // the hook restores the terminal
            }
        }
    }

    private static Thread daemon(String name, Runnable body) {
        Thread t = new Thread(body, name);
        t.setDaemon(true);
        t.start();
        return t;
    }

    /** Copies keys to the terminal until this terminal's input ends; the thread is left blocked in a read otherwise. */
    private static void pumpKeys(InputStream in, PtySession pty) {
        byte[] buf = new byte[4096];
        try {
            for (int n; (n = in.read(buf)) > 0; ) {
                pty.write(ByteBuffer.wrap(Arrays.copyOf(buf, n))).block(STEP);
            }
        } catch (IOException | RuntimeException e) {
            // the shell ended, or its session did: the output loop reports it
        }
    }

    private static void followSize(Tty tty, PtySession pty, int[] initial) {
        int[] last = initial;
        try {
            while (!Thread.currentThread().isInterrupted()) {
                TimeUnit.MILLISECONDS.sleep(SIZE_POLL_MS);
                int[] now = tty.size();
                if (now != null && (last == null || now[0] != last[0] || now[1] != last[1])) {
                    pty.resize(now[0], now[1]).block(STEP);
                    last = now;
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (RuntimeException e) {
            // the shell ended
        }
    }
}
