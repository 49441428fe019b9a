package dev.sandbox.samples.cli;

import dev.sandbox.docker.DockerSandboxProvider;
import dev.sandbox.docker.DockerSettings;
import java.time.Duration;
import java.util.Locale;

/**
 * Sessions in containers on a Docker daemon ({@code DOCKER_HOST}, else {@code /var/run/docker.sock}); they also take
 * snapshots. The provider's periodic
 * sweeper is off: a CLI run is short, and expired sessions end by themselves in their containers.
 */
final class DockerSessionSource extends ProviderSessionSource {
    private final DockerSandboxProvider provider;

    private DockerSessionSource(DockerSandboxProvider provider) {
        super(provider);
        this.provider = provider;
    }

    static DockerSessionSource open(Provider settings) {
        return new DockerSessionSource(
                builder(settings.docker()).sweepInterval(null).build());
    }

    /** The provider for {@code sandbox serve --provider docker}, with its periodic sweeper. */
    static DockerSandboxProvider serving(Provider settings) {
        return builder(settings.docker()).build();
    }

    private static DockerSandboxProvider.Builder builder(Provider.Docker d) {
        DockerSandboxProvider.Builder b = DockerSandboxProvider.builder().settings(settings(d));
        if (d.lease() != null) {
            b.lease(d.lease());
        }
        return b;
    }

    private static DockerSettings settings(Provider.Docker d) {
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
    public String snapshot(String sessionId, Duration wait) {
        return provider.snapshot(sessionId).block(wait);
    }

    @Override
    public void deleteSnapshot(String snapshotRef, Duration wait) {
        provider.deleteSnapshot(snapshotRef).block(wait);
    }
}
