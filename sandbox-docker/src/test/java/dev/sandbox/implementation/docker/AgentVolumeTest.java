package dev.sandbox.implementation.docker;

import static org.assertj.core.api.Assertions.assertThat;

import com.github.dockerjava.api.DockerClient;
import com.github.dockerjava.api.model.HostConfig;
import com.github.dockerjava.api.model.Mount;
import com.github.dockerjava.api.model.MountType;
import dev.sandbox.ExecOptions;
import dev.sandbox.ExecResult;
import dev.sandbox.SandboxSession;
import dev.sandbox.SessionOptions;
import dev.sandbox.docker.DockerSettings;
import dev.sandbox.docker.RequiresDocker;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The agent's volume on a daemon that several programs share, on the real daemon. Each test's provider names its
 * volumes with a prefix of its own, so the other programs on this daemon (and their cleanup) never meet them: another
 * agent build's volume that is old and unused goes, a fresh one (another program may be between two containers)
 * stays; a volume removed, or replaced by an empty one, under a live provider is installed again before the next
 * session.
 */
@RequiresDocker
class AgentVolumeTest {
    private static final Duration WAIT = Duration.ofSeconds(60);
    private static final String IMAGE = "sandbox-test:busybox";
    private static final String RUN_LABEL = "sandbox-test-run";

    private final String prefix = "dev-sandbox-test-agent-"
            + HexFormat.of().toHexDigits(ThreadLocalRandom.current().nextInt()) + "-";
    private final List<String> containers = new ArrayList<>();
    private DockerControl control;
    private AgentInstaller installer;
    private DockerSessions sessions;
    private DockerClient docker;

    @BeforeEach
    void start() {
        control = DockerControl.connect(null);
        DockerDataPlane data = new DockerDataPlane(control.dockerHost(), 2);
        installer = new AgentInstaller(control, data, prefix);
        sessions = new DockerSessions(
                control,
                data,
                null,
                Duration.ofMinutes(1),
                installer,
                AgentChannels.forDaemon(data.dockerHost(), true));
        // the provider's own docker-java client, to look and act from outside the provider; closed with it
        docker = control.client();
    }

    @AfterEach
    void stop() {
        try {
            for (String c : containers) {
                docker.removeContainerCmd(c).withForce(true).exec();
            }
            for (var v : volumes()) {
                docker.removeVolumeCmd(v).exec();
            }
            assertThat(volumes()).isEmpty();
        } finally {
            sessions.close(Duration.ofSeconds(30));
        }
    }

    @Test
    void anotherBuildsVolumeGoesOnlyWhenOldAndUnusedAFreshOneStays() {
        Instant now = Instant.now();
        String old = prefix + "0000000000000000";
        String oldInUse = prefix + "1111111111111111";
        String fresh = prefix + "2222222222222222";
        volume(old, now.minus(Duration.ofDays(2)));
        volume(oldInUse, now.minus(Duration.ofDays(2)));
        // another program installed this a minute ago and is between two of its containers: nothing mounts it
        volume(fresh, now.minus(Duration.ofMinutes(1)));
        containers.add(docker.createContainerCmd(IMAGE)
                .withEntrypoint("/bin/true")
                .withLabels(Map.of(RUN_LABEL, prefix))
                .withHostConfig(HostConfig.newHostConfig()
                        .withNetworkMode("none")
                        .withMounts(List.of(new Mount()
                                .withType(MountType.VOLUME)
                                .withSource(oldInUse)
                                .withTarget("/x"))))
                .exec()
                .getId());

        runsAndEnds(create());

        assertThat(volumes()).containsExactlyInAnyOrder(installer.volume(), fresh, oldInUse);
        assertThat(docker.inspectVolumeCmd(installer.volume()).exec().getLabels())
                .containsEntry(AgentInstaller.VOLUME_LABEL, installer.volume())
                .containsKey(AgentVolumes.INSTALLED_LABEL);
    }

    @Test
    void aVolumeRemovedUnderALiveProviderIsInstalledAgainBeforeTheNextSession() {
        runsAndEnds(create());
        docker.removeVolumeCmd(installer.volume()).exec(); // as another program's cleanup did, between two sessions

        runsAndEnds(create());

        assertThat(docker.inspectVolumeCmd(installer.volume()).exec().getLabels())
                .containsEntry(AgentInstaller.VOLUME_LABEL, installer.volume());
    }

    @Test
    void anEmptyVolumeDockerMadeInItsPlaceIsInstalledAgain() {
        runsAndEnds(create());
        docker.removeVolumeCmd(installer.volume()).exec();
        // what Docker does when a container mounts a volume name that does not exist: an empty, unlabelled volume
        docker.createVolumeCmd().withName(installer.volume()).exec();

        runsAndEnds(create());

        assertThat(docker.inspectVolumeCmd(installer.volume()).exec().getLabels())
                .containsEntry(AgentInstaller.VOLUME_LABEL, installer.volume());
    }

    @Test
    void aStartThatFindsNoAgentIsRetriedOnceAfterAnInstall() {
        runsAndEnds(create());
        // replaced between the provider's look at the volume and the container's start: the look cannot tell
        Map<String, String> labels =
                new HashMap<>(docker.inspectVolumeCmd(installer.volume()).exec().getLabels());
        docker.removeVolumeCmd(installer.volume()).exec();
        docker.createVolumeCmd().withName(installer.volume()).withLabels(labels).exec();

        runsAndEnds(create());
    }

    @Test
    void underGvisorAStartThatFindsNoAgentIsRetriedOnceAfterAnInstallToo() {
        // the failure seen for real: gVisor says "failed to load /.dev-sandbox/agent: no such file or directory"
        DockerSettings gvisor = settings().withRuntime(DockerSettings.Runtime.RUNSC);
        runsAndEnds(create(gvisor));
        Map<String, String> labels =
                new HashMap<>(docker.inspectVolumeCmd(installer.volume()).exec().getLabels());
        docker.removeVolumeCmd(installer.volume()).exec();
        docker.createVolumeCmd().withName(installer.volume()).withLabels(labels).exec();

        runsAndEnds(create(gvisor));
    }

    private SandboxSession create() {
        return create(settings());
    }

    private SandboxSession create(DockerSettings settings) {
        return sessions.create(
                        SessionOptions.defaults().withLabel(RUN_LABEL, prefix).withLifetime(Duration.ofMinutes(2)),
                        settings)
                .block(WAIT);
    }

    private static DockerSettings settings() {
        return DockerSettings.of(IMAGE).withPullPolicy(DockerSettings.PullPolicy.NEVER);
    }

    /** Runs a command in the session as a user would, then destroys it: nothing mounts the volume afterwards. */
    private static void runsAndEnds(SandboxSession s) {
        try {
            ExecResult r = s.run(ExecOptions.of("echo", "hi")).block(WAIT);
            assertThat(r.exitCode()).isZero();
            assertThat(r.stdout()).isEqualTo("hi\n");
        } finally {
            s.destroy().block(WAIT);
        }
    }

    private void volume(String name, Instant installed) {
        docker.createVolumeCmd()
                .withName(name)
                .withLabels(Map.of(
                        AgentInstaller.VOLUME_LABEL,
                        name,
                        AgentVolumes.INSTALLED_LABEL,
                        Long.toString(installed.getEpochSecond())))
                .exec();
    }

    /** This test's volumes on the daemon. */
    private List<String> volumes() {
        List<String> names = new ArrayList<>();
        var found = docker.listVolumesCmd().exec().getVolumes();
        for (var v : found == null ? List.<com.github.dockerjava.api.command.InspectVolumeResponse>of() : found) {
            if (v.getName().startsWith(prefix)) {
                names.add(v.getName());
            }
        }
        return names;
    }
}
