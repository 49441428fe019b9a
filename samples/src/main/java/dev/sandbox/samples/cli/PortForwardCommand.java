package dev.sandbox.samples.cli;

import dev.sandbox.PortForwardOptions;
import dev.sandbox.SandboxTimeoutException;
import dev.sandbox.SessionClosedException;
import dev.sandbox.UnsupportedFeatureException;
import dev.sandbox.blocking.PortClient;
import dev.sandbox.blocking.SandboxClient;
import java.net.InetAddress;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code sandbox port-forward}: forwards a host port to a TCP port on the loopback of an existing session's sandbox,
 * and keeps it open until SIGINT or SIGTERM (then closes it and exits 0) or until the session ends (then says so in
 * one line and exits 1). It prints one line once the forward listens: {@value #FORWARDING} {@code HOST:PORT -> sandbox
 * port P of SESSION}.
 */
@Command(
        name = "port-forward",
        customSynopsis = "sandbox port-forward [PROVIDER] [--local-port N] [--address A] SESSION PORT",
        description = {
            "Forwards a port on this machine to TCP port PORT on the loopback of session SESSION (nothing is published"
                    + " on the sandbox's network), prints \"Forwarding HOST:PORT -> sandbox port PORT of SESSION\", and"
                    + " runs until Ctrl-C (SIGINT) or SIGTERM, then closes the forward and exits 0; when the session"
                    + " ends first it says so and exits 1."
        })
final class PortForwardCommand extends SessionSubcommand {
    /** The start of the line printed once the forward listens. */
    static final String FORWARDING = "Forwarding";

    /** How long attaching, opening and closing may take each. */
    private static final Duration STEP = Duration.ofMinutes(2);
    /** How often the forward is checked: it closes when the session ends. */
    private static final Duration POLL = Duration.ofMillis(200);
    /** How often the session is asked whether it still runs, in case its end reached no forward. */
    private static final Duration PING_EVERY = Duration.ofSeconds(10);
    /** How long a signal waits for the forward and the session's handle to close before the JVM exits anyway. */
    private static final Duration STOP_WAIT = Duration.ofSeconds(20);

    @Option(
            names = "--local-port",
            paramLabel = "N",
            converter = Values.Port.class,
            description = "the port on this machine [0: a free one, printed]")
    int localPort;

    @Option(
            names = "--address",
            paramLabel = "A",
            converter = Values.IpAddress.class,
            description = "the address on this machine to listen on; anyone who can reach it reaches the sandbox's"
                    + " server, so another than loopback gets a warning [127.0.0.1]")
    InetAddress address = InetAddress.getLoopbackAddress();

    @Parameters(index = "0", paramLabel = "SESSION", converter = Values.NonBlank.class, description = "the session")
    String session;

    @Parameters(
            index = "1",
            paramLabel = "PORT",
            converter = Values.ServerPort.class,
            description = "the TCP port inside the sandbox, 1 to 65535, where a server listens on its loopback or on"
                    + " every address")
    int port;

    @Override
    int execute() throws UsageException {
        PortForwardOptions options =
                PortForwardOptions.to(port).withHostAddress(address).withHostPort(localPort);
        CountDownLatch stop = new CountDownLatch(1);
        CountDownLatch released = new CountDownLatch(1);
        Thread hook = null;
        try (SessionSource source = sessions();
                SandboxClient client = source.attach(session, STEP)) {
            PortClient.Forward forward;
            try {
                forward = client.ports().forward(options);
            } catch (UnsupportedFeatureException e) {
                throw new UsageException(e.getMessage());
            }
            // SIGINT or SIGTERM: this thread closes the forward and the handle, then the JVM exits 0 (a stop asked
            // for is how a forward ends); a close stuck longer than STOP_WAIT is cut short by the exit
            hook = new Thread(
                    () -> {
                        stop.countDown();
                        try {
                            released.await(STOP_WAIT.toMillis(), TimeUnit.MILLISECONDS);
                        } catch (InterruptedException e) {
                            // the JVM is going down; nothing else can be done
                        }
                        cli.out.flush();
                        cli.err.flush();
                        Runtime.getRuntime().halt(0);
                    },
                    "sandbox-port-forward-stop");
            Runtime.getRuntime().addShutdownHook(hook);
            if (!address.isLoopbackAddress()) {
                cli.err.println("sandbox: warning: listening on " + address.getHostAddress()
                        + ", not loopback: anyone who can reach this address reaches port " + port + " of session "
                        + session + ", with no authentication");
                cli.err.flush();
            }
            cli.out.println(FORWARDING + " " + forward.hostString() + " -> sandbox port " + port + " of " + session);
            cli.out.flush();
            String ended = await(client, forward, stop);
            forward.close();
            if (ended != null) {
                return SandboxCli.fail(cli.err, ended, SandboxCli.EXIT_ERROR);
            }
            cli.err.println("sandbox: forward to port " + port + " of session " + session + " closed");
            cli.err.flush();
            return 0;
        } finally {
            released.countDown();
            if (hook != null) {
                try {
                    Runtime.getRuntime().removeShutdownHook(hook);
                } catch (IllegalStateException shuttingDown) {
                    // the hook is running: it exits once this released it
                }
            }
        }
    }

    /**
     * Waits until a stop is asked for or the forward closes by itself (the session's end closes it).
     *
     * @return {@code null} for a stop, else the one line that says why the forward ended
     */
    private String await(SandboxClient client, PortClient.Forward forward, CountDownLatch stop) {
        long nextPing = System.nanoTime() + PING_EVERY.toNanos();
        try {
            while (!stop.await(POLL.toMillis(), TimeUnit.MILLISECONDS)) {
                boolean closed = !forward.isOpen();
                if (closed || System.nanoTime() - nextPing > 0) {
                    nextPing = System.nanoTime() + PING_EVERY.toNanos();
                    String ended = ended(client);
                    if (ended != null) {
                        return ended;
                    }
                    if (closed) {
                        return "the forward to port " + port + " of session " + session + " closed";
                    }
                }
            }
            return null;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return null;
        }
    }

    /** Why the session ended, or {@code null} while it runs (or does not answer in time: the forward still stands). */
    private String ended(SandboxClient client) {
        try {
            client.ping(STEP);
            return null;
        } catch (SessionClosedException e) {
            return e.getMessage() + "; the forward to its port " + port + " is closed"; // names the session
        } catch (SandboxTimeoutException e) {
            return null;
        }
    }
}
