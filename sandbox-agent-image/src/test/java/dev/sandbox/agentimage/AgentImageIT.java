package dev.sandbox.agentimage;

import static dev.sandbox.agentimage.DockerCli.docker;
import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The agent image as a user gets it: the archive {@code target/sandbox-agent-image.tar} that {@code package} built,
 * loaded into Docker, holds only {@code /sandbox-agent}, and run as a Kubernetes init container would run it (its
 * default command, a volume at {@code /.dev-sandbox}) installs an agent that another image runs from the same volume
 * mounted read-only. Everything it makes (the loaded image, containers, volumes) is removed, also on failure.
 */
@RequiresDocker
class AgentImageIT {
    private static final Duration TIMEOUT = Duration.ofSeconds(120);
    private static final String IMAGE = System.getProperty("agent.image", "dev.sandbox/sandbox-agent:0.1.0-SNAPSHOT");
    private static final Path ARCHIVE =
            Path.of(System.getProperty("agent.image.tar", "target/sandbox-agent-image.tar"));
    /** The agent's own version (agent.h) is the build's without -SNAPSHOT. */
    private static final String VERSION_LINE = "sandbox-agent "
            + System.getProperty("agent.version", "0.1.0-SNAPSHOT").replace("-SNAPSHOT", "")
            + " protocol 1..1";

    /**
     * The loaded image under a tag of this run only, so that two runs on one daemon (two clones) do not remove each
     * other's image: tests use this tag; the archive's own tag is removed as soon as this one exists.
     */
    private static final String UNDER_TEST =
            "dev.sandbox/sandbox-agent-it:" + UUID.randomUUID().toString().substring(0, 8);

    private static boolean loaded;

    @BeforeAll
    static void load() throws IOException {
        assertThat(ARCHIVE).as("the image archive built in package").isRegularFile();
        String builtId =
                Files.readString(ARCHIVE.resolveSibling("jib-image.id")).strip();
        loaded = true; // from here on the tags may exist: removed after all, whatever happens below
        String out = docker(TIMEOUT, "load", "-i", ARCHIVE.toString()).ok().out();
        assertThat(out).contains("Loaded image: " + IMAGE);
        docker(TIMEOUT, "tag", builtId, UNDER_TEST).ok();
        docker(TIMEOUT, "image", "rm", IMAGE);
    }

    @AfterAll
    static void removeImage() {
        if (loaded) {
            docker(TIMEOUT, "image", "rm", IMAGE);
            docker(TIMEOUT, "image", "rm", UNDER_TEST);
        }
    }

    private static String inspect(String format) {
        return docker(TIMEOUT, "image", "inspect", "--format", format, UNDER_TEST)
                .ok()
                .out()
                .strip();
    }

    @Test
    void the_loaded_image_is_the_one_jib_built_with_the_entrypoint_and_command_of_an_init_container()
            throws IOException {
        Path builtId = ARCHIVE.resolveSibling("jib-image.id");
        assertThat(inspect("{{.Id}}")).isEqualTo(Files.readString(builtId).strip());
        assertThat(inspect("{{json .Config.Entrypoint}}")).isEqualTo("[\"/sandbox-agent\"]");
        assertThat(inspect("{{json .Config.Cmd}}")).isEqualTo("[\"install\",\"/.dev-sandbox\"]");
        assertThat(inspect("{{.Os}}/{{.Architecture}}")).isEqualTo("linux/amd64");
        assertThat(inspect("{{len .RootFS.Layers}}")).isEqualTo("1");
    }

    @Test
    void the_image_holds_exactly_one_file_the_agent_mode_755(@TempDir Path dir) throws IOException {
        Path saved = dir.resolve("saved.tar");
        docker(TIMEOUT, "save", "-o", saved.toString(), UNDER_TEST).ok();
        tar("-xf", saved.toString(), "-C", dir.toString(), "manifest.json");
        String manifest = Files.readString(dir.resolve("manifest.json"));
        Matcher layers =
                Pattern.compile("\"Layers\"\\s*:\\s*\\[\\s*\"([^\"]+)\"\\s*]").matcher(manifest);
        assertThat(layers.find()).as("one layer in %s", manifest).isTrue();
        String layer = layers.group(1);
        tar("-xf", saved.toString(), "-C", dir.toString(), layer);
        List<String> entries =
                tar("-tvf", dir.resolve(layer).toString()).out().strip().lines().toList();
        assertThat(entries).hasSize(1);
        assertThat(entries.get(0)).matches("-rwxr-xr-x +0/0 +\\d+ .* sandbox-agent");
    }

    @Test
    void its_default_command_installs_the_agent_that_a_second_container_runs_from_the_volume_read_only() {
        String id = UUID.randomUUID().toString().substring(0, 8);
        String volume = "sandbox-agent-image-it-" + id;
        String installer = "sandbox-agent-image-it-install-" + id;
        String user = "sandbox-agent-image-it-run-" + id;
        try {
            docker(TIMEOUT, "volume", "create", volume).ok();
            DockerCli.Result install = docker(
                            TIMEOUT, "run", "--name", installer, "-v", volume + ":/.dev-sandbox", UNDER_TEST)
                    .ok();
            assertThat(install.out() + install.err()).isEmpty();

            String listing = docker(
                            TIMEOUT,
                            "run",
                            "--rm",
                            "--name",
                            user + "-ls",
                            "-v",
                            volume + ":/.dev-sandbox:ro",
                            DockerCondition.BUSYBOX,
                            "ls",
                            "-An",
                            "/.dev-sandbox")
                    .ok()
                    .out();
            assertThat(listing.lines().filter(line -> !line.startsWith("total ")))
                    .singleElement()
                    .asString()
                    .matches("-r-xr-xr-x +1 +0 +0 +\\d+ .* sandbox-agent");

            String version = docker(
                            TIMEOUT,
                            "run",
                            "--rm",
                            "--name",
                            user,
                            "-v",
                            volume + ":/.dev-sandbox:ro",
                            "--entrypoint",
                            "/.dev-sandbox/sandbox-agent",
                            DockerCondition.BUSYBOX,
                            "--version")
                    .ok()
                    .out();
            assertThat(version).isEqualTo(VERSION_LINE + "\n");
        } finally {
            docker(TIMEOUT, "rm", "-f", installer, user, user + "-ls");
            docker(TIMEOUT, "volume", "rm", "-f", volume);
        }
    }

    @Test
    void install_into_a_path_that_is_not_a_directory_fails_naming_it() {
        String name =
                "sandbox-agent-image-it-bad-" + UUID.randomUUID().toString().substring(0, 8);
        try {
            DockerCli.Result r = docker(TIMEOUT, "run", "--name", name, UNDER_TEST, "install", "/sandbox-agent");
            assertThat(r.exit()).isEqualTo(1);
            assertThat(r.err()).contains("'/sandbox-agent' is not a directory");
        } finally {
            docker(TIMEOUT, "rm", "-f", name);
        }
    }

    private static DockerCli.Result tar(String... args) {
        return DockerCli.run(TIMEOUT, List.of(concat("tar", args))).ok();
    }

    private static String[] concat(String first, String[] rest) {
        String[] all = new String[rest.length + 1];
        all[0] = first;
        System.arraycopy(rest, 0, all, 1, rest.length);
        return all;
    }
}
