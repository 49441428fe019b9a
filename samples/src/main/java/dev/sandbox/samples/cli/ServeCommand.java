package dev.sandbox.samples.cli;

import dev.sandbox.SandboxProvider;
import dev.sandbox.local.LocalSandboxProvider;
import dev.sandbox.server.SandboxServer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code sandbox serve}: the local (or Docker) provider's sessions behind a {@link SandboxServer}. Prints the URL, then
 * runs until the JVM is asked to stop (SIGINT, SIGTERM): a shutdown hook stops the server gracefully (running requests
 * get a few seconds, its sessions are destroyed) and closes the provider.
 */
@Command(
        name = "serve",
        customSynopsis = {
            "sandbox serve [--provider local|docker [DOCKER]] [--host HOST] [--port PORT]",
            "                     --token-file FILE"
        },
        description = {
            "Serves local (or docker) sessions over HTTP (the remote provider's protocol) to clients that send the"
                    + " token in FILE; prints \"serving on URL\" and runs until SIGINT or SIGTERM, then stops"
                    + " gracefully (its sessions are destroyed)."
        })
final class ServeCommand extends Subcommand {
    /** How long running requests get to end when the server stops. */
    private static final Duration STOP_TIMEOUT = Duration.ofSeconds(10);

    @Option(
            names = "--provider",
            paramLabel = "NAME",
            completionCandidates = ServedProviders.class,
            order = -2,
            description = "whose sessions to serve: local or docker [local]")
    String provider = "local";

    @Option(
            names = "--token-file",
            paramLabel = "FILE",
            required = true,
            converter = Values.FilePath.class,
            order = -2,
            description = "the file holding the bearer token clients must send")
    Path tokenFile;

    @Option(names = "--host", paramLabel = "HOST", order = -2, description = "the address to listen on [127.0.0.1]")
    String host = "127.0.0.1";

    @Option(
            names = "--port",
            paramLabel = "PORT",
            converter = Values.Port.class,
            order = -2,
            description = "the port; 0 for any free one [7070]")
    int port = 7070;

    @Mixin
    DockerOptions dockerOptions;

    /** The served provider's settings, known after {@link #validate()}. */
    Provider served;

    /** The providers {@code serve} can serve. */
    static final class ServedProviders extends Values.OneOf {
        ServedProviders() {
            super("local", "docker");
        }
    }

    @Override
    void validate() {
        if (!provider.equals("local") && !provider.equals("docker")) {
            throw usageError(
                    "sandbox serve serves the local or the docker provider, got --provider '" + provider + "'");
        }
        Provider.Docker docker = dockerOptions.docker(provider);
        served = docker == null ? Provider.LOCAL : new Provider(provider, null, null, docker);
    }

    @Override
    int execute() throws UsageException {
        char[] token = TokenFile.read(tokenFile);
        SandboxProvider sessions =
                served.docker() != null ? DockerSessionSource.serving(served) : LocalSandboxProvider.create();
        SandboxServer server;
        try {
            server = SandboxServer.builder(sessions)
                    .host(host)
                    .port(port)
                    .token(token)
                    .start();
        } catch (RuntimeException e) {
            sessions.close();
            throw e;
        } finally {
            Arrays.fill(token, '\0');
        }
        Thread hook = new Thread(
                () -> {
                    try {
                        server.stop(STOP_TIMEOUT);
                    } finally {
                        sessions.close();
                        cli.err.println("sandbox: server stopped");
                        cli.err.flush();
                    }
                },
                "sandbox-serve-shutdown");
        Runtime.getRuntime().addShutdownHook(hook);
        cli.out.println("sandbox: serving " + sessions.name() + " sessions on " + server.baseUrl());
        cli.out.flush();
        server.awaitStop();
        return 0;
    }
}
