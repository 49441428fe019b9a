package dev.sandbox.samples.cli;

import dev.sandbox.InvalidArgumentException;
import dev.sandbox.SandboxProvider;
import dev.sandbox.SessionOptions;
import dev.sandbox.local.LocalSandboxProvider;
import dev.sandbox.mcp.SandboxMcpServer;
import dev.sandbox.pool.SandboxPool;
import dev.sandbox.server.SandboxServer;
import dev.sandbox.tools.ToolLimits;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code sandbox serve}: the local (or Docker, or Kubernetes) provider's sessions behind a {@link SandboxServer}. Prints the URL, then
 * runs until the JVM is asked to stop (SIGINT, SIGTERM): a shutdown hook stops the server gracefully (running requests
 * get a few seconds, its sessions are destroyed) and closes the provider.
 */
@Command(
        name = "serve",
        customSynopsis = {
            "sandbox serve [--provider local|docker|kubernetes [DOCKER|KUBERNETES]] [--host HOST] [--port PORT]",
            "                     [--max-connections N] [--max-queued N] [--queue-timeout D] [--lease D] [--root DIR]",
            "                     [--max-upload-bytes SIZE] [--mcp-max-sessions N] [--mcp-timeout D] [--pool N]",
            "                     [--tls-cert FILE --tls-key FILE] --token-file FILE"
        },
        description = {
            "Serves local (or docker, or kubernetes) sessions over HTTP (the remote provider's protocol) to clients that send a"
                    + " token in FILE (one per line, each token a tenant that sees only its own sessions); prints"
                    + " \"serving on URL\" and runs until SIGINT or SIGTERM, then stops gracefully (its sessions"
                    + " are destroyed). The same port serves MCP (streamable HTTP) under /mcp with the same tokens:"
                    + " its tools create and use sessions of their own, each token's apart. With --tls-cert and"
                    + " --tls-key it serves https; clients that do not trust the certificate through the JVM's trust"
                    + " store give it with --ca-cert."
        })
final class ServeCommand extends Subcommand {
    /** How long running requests get to end when the server stops. */
    private static final Duration STOP_TIMEOUT = Duration.ofSeconds(10);

    /** The most sessions the server holds for its clients at once (the library's default, set here for the pool). */
    private static final int SERVER_MAX_SESSIONS = 64;

    @Option(
            names = "--provider",
            paramLabel = "NAME",
            completionCandidates = ServedProviders.class,
            order = -2,
            description = "whose sessions to serve: local, docker or kubernetes [local]")
    String provider = "local";

    @Option(
            names = "--token-file",
            paramLabel = "FILE",
            required = true,
            converter = Values.FilePath.class,
            order = -2,
            description = "the file holding the bearer tokens clients may send, one per line; each token's sessions"
                    + " are its own")
    Path tokenFile;

    @Option(
            names = "--max-connections",
            paramLabel = "N",
            converter = Values.WholeNumber.class,
            order = -2,
            description = "the most connections served at once; one more waits for a slot (see --max-queued) or is"
                    + " answered 503 with Retry-After, and one that has sent no token for a second may be closed to"
                    + " make room [512]")
    long maxConnections = 512;

    @Option(
            names = "--max-queued",
            paramLabel = "N",
            converter = Values.WholeNumber.class,
            order = -2,
            description = "the most connections over --max-connections whose first request waits for a slot; past"
                    + " them a request is answered 503 with Retry-After [256]")
    long maxQueued = 256;

    @Option(
            names = "--queue-timeout",
            paramLabel = "D",
            order = -2,
            description = "how long a request waits for a slot before it is answered 503 with Retry-After [5s]")
    Duration queueTimeout = Duration.ofSeconds(5);

    @Option(
            names = "--lease",
            paramLabel = "D",
            order = -2,
            description =
                    "how long a session created without a chosen lifetime outlives its client's last renewal [1m]")
    Duration lease = Duration.ofMinutes(1);

    @Option(
            names = "--root",
            paramLabel = "DIR",
            converter = Values.FilePath.class,
            order = -2,
            description = "local provider: the directory workdirs clients choose must be under [a new temporary one]")
    Path root;

    @Option(
            names = "--max-upload-bytes",
            paramLabel = "SIZE",
            converter = Values.Size.class,
            order = -2,
            description = "the largest file upload, with an optional k, m or g suffix [1g]")
    Long maxUploadBytes;

    @Option(
            names = "--mcp-max-sessions",
            paramLabel = "N",
            converter = Values.WholeNumber.class,
            order = -2,
            description = "the most sessions the MCP tools under /mcp keep at once, all tokens together; 0 serves no"
                    + " /mcp [8]")
    long mcpMaxSessions = 8;

    @Option(
            names = "--mcp-timeout",
            paramLabel = "D",
            order = -2,
            description =
                    "kill a command the MCP tools run after D; a call's timeout_seconds may only shorten it [60s]")
    Duration mcpTimeout;

    @Option(
            names = "--pool",
            paramLabel = "N",
            converter = Values.WholeNumber.class,
            order = -2,
            description = "keep N sessions created ahead: a create without secrets or a workdir (here and by the"
                    + " tools under /mcp) takes one at once, its environment, labels and lifetime set then, and a"
                    + " fresh one takes its place; GET /pool shows the counts; 0 for none [0]")
    long pool;

    @Option(
            names = "--tls-cert",
            paramLabel = "FILE",
            converter = Values.FilePath.class,
            order = -2,
            description = "serve https with this PEM certificate (chain), which must name the host clients use in"
                    + " the URL; needs --tls-key")
    Path tlsCert;

    @Option(
            names = "--tls-key",
            paramLabel = "FILE",
            converter = Values.FilePath.class,
            order = -2,
            description = "the certificate's private key, unencrypted PKCS#8 PEM (BEGIN PRIVATE KEY)")
    Path tlsKey;

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
    KubernetesOptions providerOptions;

    /** The served provider's settings, known after {@link #validate()}. */
    Provider served;

    /** The providers {@code serve} can serve. */
    static final class ServedProviders extends Values.OneOf {
        ServedProviders() {
            super("local", "docker", "kubernetes");
        }
    }

    @Override
    void validate() {
        if (!List.of("local", "docker", "kubernetes").contains(provider)) {
            throw usageError("sandbox serve serves the local, the docker or the kubernetes provider, got --provider '"
                    + provider + "'");
        }
        String badPool = WarmPool.check(pool);
        if (badPool != null) {
            throw usageError(badPool);
        }
        if ((tlsCert == null) != (tlsKey == null)) {
            throw usageError(tlsCert == null ? "--tls-key needs --tls-cert FILE" : "--tls-cert needs --tls-key FILE");
        }
        Provider.Docker docker = providerOptions.docker(provider);
        Provider.Kubernetes kubernetes = providerOptions.kubernetes(provider);
        served = provider.equals("local")
                ? Provider.LOCAL
                : new Provider(provider, null, null, null, docker, kubernetes);
    }

    /** The tools under /mcp, their creates served from the pool when there is one. */
    private SandboxMcpServer mcpServer(SandboxProvider sessions, ToolLimits limits, SandboxPool warm) {
        SandboxMcpServer.Builder b = SandboxMcpServer.builder(sessions)
                .maxSessions((int) mcpMaxSessions)
                .limits(limits);
        if (warm != null) {
            b.pool(warm);
        }
        return b.build();
    }

    /** The tokens of the token file: one per non-blank line, surrounding whitespace ignored. */
    static List<char[]> tokens(char[] file) {
        List<char[]> tokens = new ArrayList<>();
        int start = 0;
        for (int i = 0; i <= file.length; i++) {
            if (i == file.length || file[i] == '\n' || file[i] == '\r') {
                int a = start;
                int b = i;
                while (a < b && Character.isWhitespace(file[a])) {
                    a++;
                }
                while (b > a && Character.isWhitespace(file[b - 1])) {
                    b--;
                }
                if (b > a) {
                    tokens.add(Arrays.copyOfRange(file, a, b));
                }
                start = i + 1;
            }
        }
        return tokens;
    }

    @Override
    int execute() throws UsageException {
        if (maxConnections < 2 || maxConnections > Integer.MAX_VALUE) {
            throw usageError("--max-connections must be from 2 to " + Integer.MAX_VALUE + ", got " + maxConnections);
        }
        if (maxQueued < 1 || maxQueued > Integer.MAX_VALUE) {
            throw usageError("--max-queued must be from 1 to " + Integer.MAX_VALUE + ", got " + maxQueued);
        }
        if (queueTimeout.isZero() || queueTimeout.isNegative()) {
            throw usageError("--queue-timeout must be positive, got " + queueTimeout);
        }
        if (mcpMaxSessions > 1024) {
            throw usageError("--mcp-max-sessions must be from 0 to 1024, got " + mcpMaxSessions);
        }
        ToolLimits mcpLimits = ToolLimits.defaults();
        if (mcpTimeout != null) {
            try {
                mcpLimits = mcpLimits.withTimeout(mcpTimeout);
            } catch (dev.sandbox.InvalidArgumentException e) {
                throw usageError("--mcp-timeout: " + e.getMessage());
            }
        }
        if (maxUploadBytes != null && maxUploadBytes < 1) {
            throw usageError("--max-upload-bytes must be at least 1, got " + maxUploadBytes);
        }
        TokenFile.checkAccess(tokenFile, true, warning -> {
            cli.err.println("sandbox: " + warning);
            cli.err.flush();
        });
        char[] file = TokenFile.read(tokenFile);
        List<char[]> tokens = tokens(file);
        Arrays.fill(file, '\0');
        SandboxProvider sessions;
        try {
            sessions = served.docker() != null
                    ? DockerSessionSource.serving(served)
                    : served.kubernetes() != null
                            ? KubernetesSessionSource.serving(served)
                            : LocalSandboxProvider.create();
        } catch (UsageException | RuntimeException e) {
            tokens.forEach(t -> Arrays.fill(t, '\0'));
            throw e;
        }
        // warm sessions of the options a create with an empty body asks for, for the server and the tools under /mcp
        SandboxPool warm = pool == 0
                ? null
                : WarmPool.start(
                        sessions, SessionOptions.defaults(), (int) pool, SERVER_MAX_SESSIONS + (int) mcpMaxSessions);
        SandboxServer server;
        // MCP (streamable HTTP) on the same port under /mcp, behind the same tokens; each token sees its own sessions
        SandboxMcpServer mcp = mcpMaxSessions == 0 ? null : mcpServer(sessions, mcpLimits, warm);
        try {
            SandboxServer.Builder builder = SandboxServer.builder(sessions).maxSessions(SERVER_MAX_SESSIONS);
            if (mcp != null) {
                builder.endpoint("/mcp", mcp.httpEndpoint());
            }
            if (warm != null) {
                builder.pool(warm).endpoint("/pool", WarmPool.statsEndpoint(warm));
            }
            builder.host(host)
                    .port(port)
                    .maxConnections((int) maxConnections)
                    .maxQueuedRequests((int) maxQueued)
                    .queueTimeout(queueTimeout)
                    .lease(lease);
            for (int i = 0; i < tokens.size(); i++) {
                builder.token(i == 0 ? "default" : "line" + (i + 1), tokens.get(i));
            }
            if (root != null) {
                builder.workdirRoot(root);
            }
            if (maxUploadBytes != null) {
                builder.maxUploadBytes(maxUploadBytes);
            }
            if (tlsCert != null) {
                builder.tls(tlsCert, tlsKey);
            }
            server = builder.start();
        } catch (RuntimeException e) {
            if (mcp != null) {
                mcp.close();
            }
            if (warm != null) {
                WarmPool.close(warm);
            }
            sessions.close();
            if (e instanceof InvalidArgumentException bad
                    && (bad.field().equals("tlsCertificate") || bad.field().equals("tlsKey"))) {
                // the library names its settings; the user gave flags
                throw new UsageException(
                        bad.getMessage().replace("tlsCertificate", "--tls-cert").replace("tlsKey", "--tls-key"));
            }
            throw e;
        } finally {
            tokens.forEach(t -> Arrays.fill(t, '\0'));
        }
        Thread hook = new Thread(
                () -> {
                    try {
                        server.stop(STOP_TIMEOUT);
                    } finally {
                        if (mcp != null) {
                            mcp.close();
                        }
                        if (warm != null) {
                            WarmPool.close(warm); // after the server and the tools gave their sessions back
                        }
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
