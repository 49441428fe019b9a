package dev.sandbox.spring.boot.autoconfigure;

import dev.sandbox.InvalidArgumentException;
import dev.sandbox.SandboxProvider;
import dev.sandbox.docker.DockerSandboxProvider;
import dev.sandbox.docker.DockerSettings;
import java.util.LinkedHashSet;

/**
 * {@code sandbox.provider=docker}: a container per session, with the default profile from {@code sandbox.docker.*}.
 * Loaded only when {@code sandbox-docker} is on the class path.
 */
final class DockerProviderFactory implements SandboxProviderFactory {
    private static final String PREFIX = "sandbox.docker.";

    @Override
    public String name() {
        return DockerSandboxProvider.NAME;
    }

    @Override
    public SandboxProvider create(SandboxProperties properties) {
        SandboxProperties.Docker docker = properties.docker();
        DockerSettings settings = settings(docker);
        DockerSandboxProvider.Builder builder = DockerSandboxProvider.builder()
                .settings(settings)
                .reaper(docker.reaper())
                .directChannel(docker.directChannel())
                .sweepInterval(Settings.positive(PREFIX + "sweep-interval", docker.sweepInterval()));
        if (docker.host() != null && !docker.host().isBlank()) {
            builder.dockerHost(docker.host().trim());
        }
        try {
            builder.lease(Settings.positive(PREFIX + "lease", docker.lease()));
            return builder.build();
        } catch (InvalidArgumentException e) {
            throw e.field().startsWith(PREFIX) ? e : Settings.renamed(PREFIX, e);
        }
    }

    /** The default profile of the sessions' containers, checked as the provider checks it. */
    static DockerSettings settings(SandboxProperties.Docker docker) {
        String image = Settings.required(
                PREFIX + "image",
                docker.image(),
                "sandbox.provider=docker needs sandbox.docker.image, the image every session's container starts from,"
                        + " such as python:3.12-slim");
        DockerSettings settings = DockerSettings.of(image)
                .withPullPolicy(Settings.word(DockerSettings.PullPolicy.class, PREFIX + "pull", docker.pull()))
                .withRuntime(Settings.word(DockerSettings.Runtime.class, PREFIX + "runtime", docker.runtime()))
                .withNetwork(Settings.word(DockerSettings.Network.class, PREFIX + "network", docker.network()))
                .withReadOnlyRootFilesystem(docker.readOnlyRootFilesystem());
        if (docker.workdir() != null) {
            settings = settings.withWorkdir(docker.workdir());
        }
        if (docker.user() != null) {
            settings = settings.withUser(docker.user());
        }
        if (docker.memoryLimit() != null) {
            settings = docker.memoryLimit().toBytes() == 0
                    ? settings.withoutMemoryLimit()
                    : settings.withMemoryLimit(docker.memoryLimit().toBytes());
        }
        if (docker.cpuLimit() != null) {
            settings = docker.cpuLimit() == 0 ? settings.withoutCpuLimit() : settings.withCpuLimit(docker.cpuLimit());
        }
        if (docker.pidsLimit() != null) {
            settings =
                    docker.pidsLimit() == 0 ? settings.withoutPidsLimit() : settings.withPidsLimit(docker.pidsLimit());
        }
        if (docker.diskLimit() != null) {
            settings = settings.withDiskLimit(docker.diskLimit().toBytes());
        }
        if (docker.capabilities() != null) {
            settings = settings.withCapabilities(new LinkedHashSet<>(docker.capabilities()));
        }
        try {
            return settings.validate();
        } catch (InvalidArgumentException e) {
            throw Settings.renamed(PREFIX, e);
        }
    }
}
