package dev.sandbox.samples.cli;

import dev.sandbox.SandboxSession;
import dev.sandbox.SessionInfo;
import dev.sandbox.SessionOptions;
import dev.sandbox.blocking.SandboxClient;
import dev.sandbox.docker.DockerSandboxProvider;
import dev.sandbox.docker.DockerSettings;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Sessions in containers on a Docker daemon ({@code DOCKER_HOST}, else {@code /var/run/docker.sock}): they outlive
 * the CLI, so every command can use them, and a later command reaches a session by its id. The provider's periodic
 * sweeper is off: a CLI run is short, and expired sessions end by themselves in their containers.
 */
final class DockerSessionSource implements SessionSource {
    private final DockerSandboxProvider provider;

    private DockerSessionSource(DockerSandboxProvider provider) {
        this.provider = provider;
    }

    static DockerSessionSource open(CommandLine.Provider settings) {
        return new DockerSessionSource(DockerSandboxProvider.builder()
                .settings(settings(settings.docker()))
                .sweepInterval(null)
                .build());
    }

    /** The provider for {@code sandbox serve --provider docker}, with its periodic sweeper. */
    static DockerSandboxProvider serving(CommandLine.Provider settings) {
        return DockerSandboxProvider.create(settings(settings.docker()));
    }

    private static DockerSettings settings(CommandLine.Docker d) {
        DockerSettings s = DockerSettings.of(d.image());
        if (d.pull() != null) {
            s = s.withPullPolicy(DockerSettings.PullPolicy.valueOf(
                    d.pull().toUpperCase(Locale.ROOT).replace('-', '_')));
        }
        if (d.runtime() != null) {
            s = s.withRuntime(DockerSettings.Runtime.valueOf(d.runtime().toUpperCase(Locale.ROOT)));
        }
        if (d.network() != null) {
            s = s.withNetwork(DockerSettings.Network.valueOf(d.network().toUpperCase(Locale.ROOT)));
        }
        if (d.cpus() != null) {
            s = s.withCpuLimit(d.cpus());
        }
        if (d.memory() != null) {
            s = s.withMemoryLimit(d.memory());
        }
        if (d.pidsLimit() != null) {
            s = s.withPidsLimit(d.pidsLimit());
        }
        return s.validate();
    }

    @Override
    public SandboxClient create(SessionOptions options, Duration wait) {
        return SandboxClient.builder().defaultTimeout(wait).create(provider, options);
    }

    @Override
    public SandboxClient createDetached(SessionOptions options, Duration wait) {
        SandboxSession session = provider.create(options).block(wait);
        return SandboxClient.builder().defaultTimeout(wait).attach(session);
    }

    @Override
    public SandboxClient attach(String sessionId, Duration wait) {
        return SandboxClient.builder().defaultTimeout(wait).attach(provider, sessionId);
    }

    @Override
    public Lease session(String sessionId, Duration wait) {
        if (sessionId != null) {
            SandboxSession session = provider.attach(sessionId).block(wait);
            return new Lease(session, () -> session.close().block(wait));
        }
        SandboxSession session = provider.create(SessionOptions.defaults().withUnlimitedLifetime())
                .block(wait);
        return new Lease(session, () -> session.destroy().block(wait));
    }

    @Override
    public String createSession(SessionOptions options, String fromSnapshot, Duration wait) {
        SandboxSession session = fromSnapshot == null
                ? provider.create(options).block(wait)
                : provider.restore(fromSnapshot, options).block(wait);
        session.close().block(wait);
        return session.id();
    }

    @Override
    public List<SessionInfo> list(Map<String, String> labels, Duration wait) {
        return provider.list(labels).collectList().block(wait);
    }

    @Override
    public void destroy(String sessionId, Duration wait) {
        provider.attach(sessionId).flatMap(SandboxSession::destroy).block(wait);
    }

    @Override
    public String snapshot(String sessionId, Duration wait) {
        return provider.snapshot(sessionId).block(wait);
    }

    @Override
    public void close() {
        provider.close();
    }
}
