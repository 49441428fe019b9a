package dev.sandbox.samples.cli;

import dev.sandbox.SandboxProvider;
import dev.sandbox.local.LocalSandboxProvider;
import dev.sandbox.server.SandboxServer;
import java.io.PrintStream;
import java.time.Duration;
import java.util.Arrays;

/**
 * {@code sandbox serve}: the local (or Docker) provider's sessions behind a {@link SandboxServer}. Prints the URL, then runs until
 * the JVM is asked to stop (SIGINT, SIGTERM): a shutdown hook stops the server gracefully (running requests get a few
 * seconds, its sessions are destroyed) and closes the provider.
 */
final class ServeCommand {
    /** How long running requests get to end when the server stops. */
    private static final Duration STOP_TIMEOUT = Duration.ofSeconds(10);

    private ServeCommand() {}

    static int run(CommandLine.Serve cl, PrintStream out, PrintStream err) throws UsageException {
        char[] token = TokenFile.read(cl.tokenFile());
        SandboxProvider provider = cl.provider().name().equals("docker")
                ? DockerSessionSource.serving(cl.provider())
                : LocalSandboxProvider.create();
        SandboxServer server;
        try {
            server = SandboxServer.builder(provider)
                    .host(cl.host())
                    .port(cl.port())
                    .token(token)
                    .start();
        } catch (RuntimeException e) {
            provider.close();
            throw e;
        } finally {
            Arrays.fill(token, '\0');
        }
        Thread hook = new Thread(
                () -> {
                    try {
                        server.stop(STOP_TIMEOUT);
                    } finally {
                        provider.close();
                        err.println("sandbox: server stopped");
                        err.flush();
                    }
                },
                "sandbox-serve-shutdown");
        Runtime.getRuntime().addShutdownHook(hook);
        out.println("sandbox: serving " + provider.name() + " sessions on " + server.baseUrl());
        out.flush();
        server.awaitStop();
        return 0;
    }
}
