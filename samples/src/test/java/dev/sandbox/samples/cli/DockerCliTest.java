package dev.sandbox.samples.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.github.dockerjava.api.DockerClient;
import com.github.dockerjava.core.DefaultDockerClientConfig;
import com.github.dockerjava.core.DockerClientImpl;
import com.github.dockerjava.zerodep.ZerodepDockerHttpClient;
import dev.sandbox.docker.RequiresDocker;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** The CLI's Docker commands, in-process through {@link SandboxCli#run}, against the real daemon and test image. */
@RequiresDocker
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class DockerCliTest {
    private static final String SESSION_LABEL = "dev.sandbox.session";
    private final String run = UUID.randomUUID().toString();
    private final List<String> snapshots = new ArrayList<>();
    private DockerClient docker;

    @TempDir
    Path tmp;

    record Outcome(int code, String out, String err) {}

    private static Outcome cli(String... args) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int code;
        try (PrintStream o = new PrintStream(out, false, StandardCharsets.UTF_8);
                PrintStream e = new PrintStream(err, false, StandardCharsets.UTF_8)) {
            code = SandboxCli.run(args, o, e);
        }
        return new Outcome(code, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }

    /** The image the test script builds; the CLI's default is a public image, and no test may pull. */
    static final String TEST_IMAGE = "sandbox-test:busybox";

    /** A docker command line: the subcommand, the provider options, then the rest. */
    private static Outcome docker(String subcommand, String... rest) {
        List<String> args =
                new ArrayList<>(List.of(subcommand, "--provider", "docker", "--image", TEST_IMAGE, "--pull", "never"));
        if (subcommand.equals("destroy") || subcommand.equals("snapshot") || subcommand.equals("ls")) {
            args = new ArrayList<>(List.of(subcommand, "--provider", "docker"));
        }
        args.addAll(List.of(rest));
        return cli(args.toArray(String[]::new));
    }

    @BeforeAll
    void connect() {
        DefaultDockerClientConfig config =
                DefaultDockerClientConfig.createDefaultConfigBuilder().build();
        docker = DockerClientImpl.getInstance(
                config,
                new ZerodepDockerHttpClient.Builder()
                        .dockerHost(config.getDockerHost())
                        .build());
    }

    @AfterAll
    void cleanUp() throws IOException {
        try {
            // whatever a failed test left: sessions by this run's label, snapshots it made
            for (var c : docker.listContainersCmd()
                    .withShowAll(true)
                    .withLabelFilter(Map.of("cli-test", run))
                    .exec()) {
                docker.removeContainerCmd(c.getId()).withForce(true).exec();
            }
            for (String ref : snapshots) {
                try {
                    docker.removeImageCmd(ref).withForce(true).exec();
                } catch (RuntimeException ignored) {
                    // removed by the test
                }
            }
            assertThat(docker.listContainersCmd()
                            .withShowAll(true)
                            .withLabelFilter(Map.of("cli-test", run))
                            .exec())
                    .as("containers left by the CLI tests")
                    .isEmpty();
        } finally {
            docker.close();
        }
    }

    /**
     * Session containers with no label but the provider's own: what a one-shot {@code exec} makes (the sessions of
     * other tests, in this JVM or another on the same daemon, carry their run labels and do not count).
     */
    private int sessionContainers() {
        return (int)
                docker.listContainersCmd().withShowAll(true).withLabelFilter(List.of(SESSION_LABEL)).exec().stream()
                        .filter(c -> c.getLabels().keySet().stream().allMatch(k -> k.startsWith("dev.sandbox.")))
                        .count();
    }

    @Test
    void aNamedSessionIsCreatedOnceAndItsNameIsFreeAfterDestroy() {
        String name = "cli-" + run.substring(0, 8);
        Outcome first = docker("create", "--label", "cli-test=" + run, "--lifetime", "3m", "--name", name);
        assertThat(first.code()).as(first.err()).isZero();
        String id = first.out().strip();
        Outcome second = docker("create", "--label", "cli-test=" + run, "--lifetime", "3m", "--name", name);
        assertThat(second.code()).isNotZero();
        assertThat(second.err()).contains("name '" + name + "' is in use");
        Outcome bad = docker("create", "--label", "cli-test=" + run, "--name", "Bad_Name");
        assertThat(bad.code()).isNotZero();
        assertThat(bad.err()).contains("name must be").contains("Bad_Name");
        assertThat(docker("destroy", id).code()).isZero();
        Outcome again = docker("create", "--label", "cli-test=" + run, "--lifetime", "3m", "--name", name);
        assertThat(again.code()).as(again.err()).isZero();
        assertThat(again.out().strip()).isNotEqualTo(id);
        assertThat(docker("destroy", again.out().strip()).code()).isZero();
    }

    @Test
    void sessionsOutliveEachCommandFromCreateToDestroy() throws IOException {
        Outcome created = docker("create", "--label", "cli-test=" + run, "--memory", "64m", "--lifetime", "3m");
        assertThat(created.code()).as(created.err()).isZero();
        String id = created.out().strip();
        assertThat(id).startsWith("docker-");

        Outcome exec = docker("exec", "--session", id, "--", "sh", "-c", "echo hi; echo oops >&2; echo kept > /tmp/f");
        assertThat(exec.code()).as(exec.err()).isZero();
        assertThat(exec.out()).isEqualTo("hi\n");
        assertThat(exec.err()).isEqualTo("oops\n");
        // the container really has the limit asked for
        var inspect = docker.inspectContainerCmd(docker.listContainersCmd()
                        .withLabelFilter(Map.of(SESSION_LABEL, id))
                        .exec()
                        .get(0)
                        .getId())
                .exec();
        assertThat(inspect.getHostConfig().getMemory()).isEqualTo(64L << 20);

        Outcome exit = docker("run", "--session", id, "--", "sh", "-c", "exit 3");
        assertThat(exit.code()).isEqualTo(3);
        assertThat(exit.out()).contains("\"exitCode\":3");

        Outcome listed = docker("ls", "--label", "cli-test=" + run);
        assertThat(listed.code()).as(listed.err()).isZero();
        assertThat(listed.out()).startsWith(id + " docker ").contains("cli-test=" + run);

        Path local = tmp.resolve("in.txt");
        Files.writeString(local, "from the host\n");
        Outcome up = docker("cp", local.toString(), id + ":/tmp/in.txt");
        assertThat(up.code()).as(up.err()).isZero();
        Outcome down = docker("cp", id + ":/tmp/in.txt", tmp.resolve("back.txt").toString());
        assertThat(down.code()).as(down.err()).isZero();
        assertThat(Files.readString(tmp.resolve("back.txt"))).isEqualTo("from the host\n");

        Outcome snapshot = docker("snapshot", id);
        assertThat(snapshot.code()).as(snapshot.err()).isZero();
        String ref = snapshot.out().strip();
        snapshots.add(ref);
        assertThat(ref).startsWith("sandbox-snapshot:" + id + "-");
        Outcome restored = docker("create", "--label", "cli-test=" + run, "--from-snapshot", ref);
        assertThat(restored.code()).as(restored.err()).isZero();
        String copy = restored.out().strip();
        assertThat(docker("exec", "--session", copy, "--", "cat", "/tmp/f").out())
                .isEqualTo("kept\n");

        Outcome destroyed = docker("destroy", id, copy);
        assertThat(destroyed.code()).as(destroyed.err()).isZero();
        assertThat(docker("ls", "--label", "cli-test=" + run).out()).isEmpty();
        Outcome gone = docker("exec", "--session", id, "--", "true");
        assertThat(gone.code()).isEqualTo(SandboxCli.EXIT_ERROR);
        assertThat(gone.err()).contains(id);

        // the snapshot outlives its sessions until snapshot rm deletes it; deleting it again is no error
        assertThat(docker.inspectImageCmd(ref).exec().getId()).isNotBlank();
        Outcome removed = docker("snapshot", "rm", ref);
        assertThat(removed.code()).as(removed.err()).isZero();
        assertThat(removed.out()).isEmpty();
        assertThatThrownBy(() -> docker.inspectImageCmd(ref).exec())
                .as("the image is gone")
                .isInstanceOf(com.github.dockerjava.api.exception.NotFoundException.class);
        assertThat(docker("snapshot", "rm", ref).code()).isZero();
        Outcome notASnapshot = docker("snapshot", "rm", "sandbox-test:busybox");
        assertThat(notASnapshot.code()).isEqualTo(SandboxCli.EXIT_USAGE);
        assertThat(notASnapshot.err())
                .startsWith("sandbox: 'sandbox-test:busybox' is not a snapshot reference (sandbox-snapshot:...)");
        assertThat(docker.inspectImageCmd("sandbox-test:busybox").exec().getId())
                .as("other images are left alone")
                .isNotBlank();
    }

    @Test
    void backgroundTakesLabelsAndASessionCommandItsOwnEnvWorkdirAndLogOffsets() {
        Outcome started = docker(
                "exec",
                "--background",
                "--label",
                "cli-test=" + run,
                "--label",
                "job=bg",
                "--lifetime",
                "3m",
                "--",
                "sh",
                "-c",
                "echo out-1; echo err-1 >&2; echo out-2; echo err-2 >&2");
        assertThat(started.code()).as(started.err()).isZero();
        String[] ids = started.out().strip().split(" ");
        assertThat(ids).hasSize(2);

        // the labels are the new session's: ls finds it by them
        Outcome listed = docker("ls", "--label", "cli-test=" + run, "--label", "job=bg");
        assertThat(listed.code()).as(listed.err()).isZero();
        assertThat(listed.out()).startsWith(ids[0] + " docker ").contains("job=bg");

        // each stream from its own offset: "out-1\n" and "err-1\n" are 6 bytes each
        Outcome followed = docker("logs", "--follow", "--from", "stdout=6,stderr=0", ids[0], ids[1]);
        assertThat(followed.code()).as(followed.err()).isZero();
        assertThat(followed.out()).isEqualTo("out-2\n");
        assertThat(followed.err()).isEqualTo("err-1\nerr-2\n");
        Outcome split = docker("logs", "--from-stderr", "6", ids[0], ids[1]);
        assertThat(split.out()).isEqualTo("out-1\nout-2\n");
        assertThat(split.err()).isEqualTo("err-2\n");

        // --env and --workdir are the command's own in an existing session
        Outcome inSession = docker(
                "exec",
                "--session",
                ids[0],
                "--env",
                "GREETING=hi there",
                "--workdir",
                "/tmp",
                "--",
                "sh",
                "-c",
                "echo \"$GREETING\"; pwd");
        assertThat(inSession.code()).as(inSession.err()).isZero();
        assertThat(inSession.out()).isEqualTo("hi there\n/tmp\n");
        Outcome without = docker("exec", "--session", ids[0], "--", "sh", "-c", "echo \"[$GREETING]\"");
        assertThat(without.out())
                .as("the variable was the command's, not the session's")
                .isEqualTo("[]\n");

        // a timeout says so
        Outcome timedOut = docker("exec", "--session", ids[0], "--timeout", "300ms", "--", "sleep", "5");
        assertThat(timedOut.code()).isEqualTo(124);
        assertThat(timedOut.err()).isEqualTo("sandbox: timed out after 300ms; killed\n");

        // another background process in the same session, with its own --env
        Outcome second = docker(
                "exec",
                "--session",
                ids[0],
                "--background",
                "--env",
                "N=2",
                "--",
                "sh",
                "-c",
                "echo second-$N; exit 3");
        assertThat(second.code()).as(second.err()).isZero();
        String[] secondIds = second.out().strip().split(" ");
        assertThat(secondIds[0]).isEqualTo(ids[0]);
        assertThat(secondIds[1]).isNotEqualTo(ids[1]);
        Outcome secondLogs = docker("logs", "--follow", ids[0], secondIds[1]);
        assertThat(secondLogs.code()).as(secondLogs.err()).isEqualTo(3);
        assertThat(secondLogs.out()).isEqualTo("second-2\n");

        assertThat(docker("destroy", ids[0]).code()).isZero();
    }

    @Test
    void aOneShotExecMakesAndRemovesItsOwnContainer() {
        int before = sessionContainers();
        Outcome o = docker("exec", "--", "sh", "-c", "echo one-shot; exit 4");
        assertThat(o.code()).as(o.err()).isEqualTo(4);
        assertThat(o.out()).isEqualTo("one-shot\n");
        assertThat(sessionContainers())
                .as(() -> "session containers: "
                        + docker
                                .listContainersCmd()
                                .withShowAll(true)
                                .withLabelFilter(List.of(SESSION_LABEL))
                                .exec()
                                .stream()
                                .map(c -> c.getLabels().get(SESSION_LABEL) + " " + c.getState() + " " + c.getLabels())
                                .toList())
                .isEqualTo(before);
    }

    @Test
    void theDefaultImageIsAPublicOneAndAFailedPullSaysWhichAndHowToChooseAnother() {
        String image = Provider.Docker.DEFAULT_IMAGE;
        assertThat(image).isEqualTo("python:3.12-slim");
        assertThat(cli("exec", "--help").out()).contains("[" + image + "]");
        boolean present;
        try {
            docker.inspectImageCmd(image).exec();
            present = true;
        } catch (com.github.dockerjava.api.exception.NotFoundException e) {
            present = false;
        }
        // no registry answers on the test machines: the pull of the default image fails for real
        Outcome run = cli("exec", "--provider", "docker", "--", "true");
        if (present) {
            assertThat(run.code()).as(run.err()).isZero();
            return;
        }
        assertThat(run.code()).isEqualTo(SandboxCli.EXIT_ERROR);
        assertThat(run.err())
                .startsWith("sandbox: docker: image '" + image + "' is not present and could not be pulled (")
                .contains("--image IMAGE")
                .contains("--pull")
                .doesNotContain("Exception");
        assertThat(run.err().lines()).hasSize(1);
    }

    @Test
    void badSettingsAndUnknownSessionsAreClearErrors() {
        Outcome image =
                cli("exec", "--provider", "docker", "--image", "no-such-image:1", "--pull", "never", "--", "true");
        assertThat(image.code()).isEqualTo(SandboxCli.EXIT_ERROR);
        assertThat(image.err()).contains("no-such-image:1");

        Outcome memory = docker("create", "--memory", "12q");
        assertThat(memory.code()).isEqualTo(SandboxCli.EXIT_USAGE);
        assertThat(memory.err()).contains("--memory").contains("12q");

        Outcome unknown = docker("destroy", "docker-0000000000000000");
        assertThat(unknown.code()).isEqualTo(SandboxCli.EXIT_ERROR);
        assertThat(unknown.err()).contains("docker-0000000000000000");

        Outcome local = cli("create", "--label", "a=b");
        assertThat(local.code()).isEqualTo(SandboxCli.EXIT_USAGE);
        assertThat(local.err()).contains("local sessions live only as long as");

        Outcome remoteSnapshot = cli("snapshot", "some-session");
        assertThat(remoteSnapshot.code()).isEqualTo(SandboxCli.EXIT_USAGE);
        assertThat(remoteSnapshot.err()).contains("--provider docker");
    }
}
