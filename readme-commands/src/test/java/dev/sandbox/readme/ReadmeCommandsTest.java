package dev.sandbox.readme;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * Runs README.md's commands as written, the way a new user types them: each shell block is marked on the line before
 * it with {@code <!-- readme-commands: NAME -->} (run by the method of that name below) or {@code <!-- readme-commands:
 * not run (WHY) -->} (an output, a synopsis, a machine's setup). A block without a marker fails the build, and so
 * does a command that fails: the README cannot drift from what works.
 *
 * <p>The blocks run in a working directory of their own ({@code samples} and {@code scripts} linked into it, so the
 * README's relative paths work and what they write stays out of the repository), with a home directory of their own
 * (the {@code sandbox} wrapper goes to its {@code ~/.local/bin}) and this JVM's JDK first on the {@code PATH}. Shell
 * state a line sets ({@code X=...}, {@code umask}) is carried into the lines after it in the block. Placeholders the
 * README shows for what an earlier command printed (a session id, a snapshot reference, {@code SESSION PROCESS}) are
 * replaced by what that command printed.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ReadmeCommandsTest {
    private static final Duration COMMAND = Duration.ofMinutes(2);
    private static final Duration BUILD = Duration.ofMinutes(20);
    /** What ends the shell state carried into a command ({@link #commandsWithState}). */
    private static final String STATE_END = "\n";

    private static final Pattern STATE_LINE = Pattern.compile("^(umask \\S+|[A-Z_][A-Z0-9_]*=.*)$");
    /** The Docker session id and snapshot reference the README shows in its examples. */
    private static final String README_SESSION = "docker-1f2e3d4c5b6a7988";

    private static final String README_SECOND_SESSION = "docker-9f8e7d6c5b4a3921";

    private static final String README_SNAPSHOT = "sandbox-snapshot:docker-1f2e3d4c5b6a7988-1764700000000";

    private final Path root = Path.of("").toAbsolutePath().getParent();
    private final Map<String, Readme.Block> byName = new LinkedHashMap<>();
    private final List<Shell.Background> servers = new ArrayList<>();
    private final List<String> dockerSessions = new ArrayList<>();
    private final List<String> snapshots = new ArrayList<>();
    private Path temp;
    private Path work;
    private Path home;
    private Shell shell;
    private Shell.Background serve;

    @BeforeAll
    void setUp() throws IOException {
        for (Readme.Block block : Readme.blocks(root.resolve("README.md"))) {
            if (block.marker() != null && !block.marker().startsWith("not run")) {
                Readme.Block previous = byName.put(block.marker(), block);
                assertThat(previous)
                        .as("a second block marked '%s' at %s", block.marker(), block.where())
                        .isNull();
            }
        }
        temp = Files.createTempDirectory("readme-commands-");
        work = Files.createDirectories(temp.resolve("work"));
        home = Files.createDirectories(temp.resolve("home"));
        Files.createSymbolicLink(work.resolve("samples"), root.resolve("samples"));
        Files.createSymbolicLink(work.resolve("scripts"), root.resolve("scripts"));
        Path javaBin = Path.of(System.getProperty("java.home"), "bin");
        Map<String, String> env = new HashMap<>();
        env.put("HOME", home.toString());
        env.put("JAVA_HOME", System.getProperty("java.home"));
        env.put("PATH", javaBin + ":" + home.resolve(".local/bin") + ":" + System.getenv("PATH"));
        shell = new Shell(work, env);
    }

    @AfterAll
    void tearDown() throws Exception {
        for (Shell.Background server : servers) {
            server.close();
        }
        for (String id : dockerSessions) {
            shell.run(
                    "docker rm -f $(docker ps -aq --filter label=dev.sandbox.session=" + id + ") 2>/dev/null", COMMAND);
        }
        for (String ref : snapshots) {
            shell.run("docker rmi -f " + ref + " 2>/dev/null", COMMAND);
        }
        if (temp != null) {
            deleteTree(temp);
        }
    }

    @Test
    @Order(0)
    void every_shell_block_of_the_readme_is_marked_and_every_mark_is_run() throws IOException {
        Set<String> unmarked = new TreeSet<>();
        for (Readme.Block block : Readme.blocks(root.resolve("README.md"))) {
            if (block.marker() == null) {
                unmarked.add(
                        block.where() + ": " + block.text().lines().findFirst().orElse(""));
            }
        }
        assertThat(unmarked)
                .as("README blocks without <!-- readme-commands: NAME --> or <!-- readme-commands: not run (WHY) -->")
                .isEmpty();
        Set<String> runnable = new TreeSet<>();
        for (var m : ReadmeCommandsTest.class.getDeclaredMethods()) {
            if (m.getName().startsWith("block_")) {
                runnable.add(m.getName().substring("block_".length()).replace('_', '-'));
            }
        }
        Set<String> marked = new TreeSet<>();
        for (String name : byName.keySet()) {
            marked.add(name.startsWith("file ") ? "consumer-file" : name);
        }
        assertThat(marked).as("README block names this test runs").containsExactlyInAnyOrderElementsOf(runnable);
    }

    /** The README's first command, in a copy of the sources, as after a fresh clone. */
    @Test
    @Order(1)
    void block_first_build() throws Exception {
        Path clone = temp.resolve("clone");
        copySources(root, clone);
        String command = single("first-build");
        Shell.Result r = shell.in(clone).run(command, BUILD);
        assertThat(r.code()).as("%s", r).isZero();
        assertThat(r.out().strip()).as("%s", r).endsWith("hello");
    }

    @Test
    @Order(2)
    void block_quick_starts() throws Exception {
        Map<String, String> expected = Map.of(
                "BlockingQuickStart", "exit 0: Linux",
                "LogSubscribersSample", "late subscriber:  [log line 4, log line 5, log line 6]",
                "ReadmeExamples retry", "session local-",
                "ReactiveQuickStart", "exit 3");
        List<String> commands = block("quick-starts").commands();
        assertThat(commands).hasSize(expected.size());
        for (String command : commands) {
            Shell.Result r = shell.run(command, COMMAND);
            assertThat(r.code()).as("%s", r).isZero();
            String key = expected.keySet().stream()
                    .filter(command::contains)
                    .findFirst()
                    .orElseThrow(() -> new AssertionError("a quick start this test does not know: " + command));
            assertThat(r.out()).as("%s", r).contains(expected.get(key));
        }
    }

    /** The wrapper comes first: the Docker and server blocks call {@code sandbox} through it. */
    @Test
    @Order(3)
    void block_wrapper() throws Exception {
        runAll("wrapper", Map.of());
        Shell.Result help = shell.run("sandbox --version", COMMAND);
        assertThat(help.code()).as("%s", help).isZero();
        Shell.Result completion = shell.run("source ~/.sandbox-completion.bash && complete -p sandbox", COMMAND);
        assertThat(completion.code()).as("%s", completion).isZero();
        assertThat(Files.readString(home.resolve(".bashrc"))).contains("source ~/.sandbox-completion.bash");
    }

    @Test
    @Order(4)
    void block_docker_cli() throws Exception {
        Files.writeString(work.resolve("data.csv"), "id,name\n1,ada\n");
        Map<String, String> values = new LinkedHashMap<>();
        for (String command : commandsWithState("docker-cli")) {
            String line = substitute(command, values);
            Shell.Result r = shell.run(line, COMMAND);
            assertThat(r.code()).as("%s", r).isZero();
            if (command.contains("# prints the id") && !values.containsKey(README_SESSION)) {
                String id = r.out().strip();
                dockerSessions.add(id);
                values.put(README_SESSION, id);
            } else if (command.contains("--from-snapshot")) {
                String id = r.out().strip();
                dockerSessions.add(id);
                values.put(README_SECOND_SESSION, id);
            } else if (command.contains("# prints the reference")) {
                String ref = r.out().strip();
                snapshots.add(ref);
                values.put(README_SNAPSHOT, ref);
            } else if (command.startsWith("sandbox ls ")) {
                assertThat(r.out()).as("%s", r).contains(values.get(README_SESSION));
            } else if (command.contains("uname -a")) {
                assertThat(r.out()).as("%s", r).contains("Linux");
            }
        }
        assertThat(values).containsKeys(README_SESSION, README_SNAPSHOT, README_SECOND_SESSION);
        Shell.Result images = shell.run("docker images -q " + values.get(README_SNAPSHOT), COMMAND);
        assertThat(images.out())
                .as("the snapshot image after 'sandbox snapshot rm'")
                .isBlank();
        assertThat(work.resolve("out")).as("cp -r into ./out").isDirectory();
        try (Stream<Path> files = Files.walk(work.resolve("out"))) {
            assertThat(files.filter(Files::isRegularFile).count())
                    .as("files copied into ./out")
                    .isPositive();
        }
    }

    @Test
    @Order(5)
    void block_token() throws Exception {
        List<String> commands = commandsWithState("token");
        for (String command : commands.subList(0, commands.size() - 1)) {
            Shell.Result r = shell.run(command, COMMAND);
            assertThat(r.code()).as("%s", r).isZero();
        }
        Path token = work.resolve("token");
        assertThat(Files.readString(token).strip()).hasSizeGreaterThanOrEqualTo(32);
        assertThat(Files.getPosixFilePermissions(token, LinkOption.NOFOLLOW_LINKS)
                        .toString())
                .isEqualTo("[OWNER_READ, OWNER_WRITE]");
        serve = started(commands.get(commands.size() - 1), "serving .* on http");
    }

    @Test
    @Order(6)
    void block_tls() throws Exception {
        List<String> commands = commandsWithState("tls");
        assertThat(commands).hasSize(3);
        Shell.Result cert = shell.run(commands.get(0), COMMAND);
        assertThat(cert.code()).as("%s", cert).isZero();
        try (Shell.Background tls = started(commands.get(1), "serving .* on https://")) {
            Shell.Result r = shell.run(commands.get(2), COMMAND);
            assertThat(r.code()).as("%s", r).isZero();
            assertThat(r.out()).as("%s", r).contains("Linux");
            assertThat(tls.stop()).as("serve stopped by SIGTERM").isIn(0, 130, 143);
        }
    }

    @Test
    @Order(7)
    void block_remote_cli() throws Exception {
        List<String> commands = commandsWithState("remote-cli");
        // the block starts the server again as its first line: stop the one the token block started
        if (serve != null) {
            assertThat(serve.stop()).as("serve stopped by SIGTERM").isIn(0, 130, 143);
        }
        serve = started(commands.get(0), "serving .* on http");
        Map<String, String> values = new LinkedHashMap<>();
        for (String command : commands.subList(1, commands.size())) {
            String line = substitute(command, values);
            Shell.Result r = line.contains(" shell")
                    ? shell.run("script -qefc " + quote(line) + " /dev/null", "echo shell-$((40+2)); exit 3\n", COMMAND)
                    : shell.run(line, COMMAND);
            if (command.contains(" shell")) {
                assertThat(r.out()).as("%s", r).contains("shell-42");
                assertThat(r.code()).as("%s", r).isEqualTo(3);
                continue;
            }
            assertThat(r.code()).as("%s", r).isZero();
            if (command.contains("# prints: SESSION PROCESS")) {
                String[] ids = r.out().strip().split("\\s+");
                assertThat(ids).as("%s", r).hasSize(2);
                values.put("SESSION", ids[0]);
                values.put("PROCESS", ids[1]);
            } else if (command.contains(" ls $R")) {
                assertThat(r.out()).as("%s", r).contains(values.get("SESSION"));
            } else if (command.contains(" logs $R --follow")) {
                assertThat(r.out()).as("%s", r).isNotBlank();
            } else if (command.contains("echo $CI")) {
                assertThat(r.out().lines().toList()).as("%s", r).containsExactly("1", "/tmp");
            }
        }
        assertThat(values).containsKeys("SESSION", "PROCESS");
    }

    /**
     * On the cluster of {@code KUBECONFIG} (from this JVM's environment, which the shell inherits): required under
     * {@code CI=true}, where the cluster runs; elsewhere the block is skipped without one.
     */
    @Test
    @Order(7)
    void block_kubernetes_cli() throws Exception {
        String kubeconfig = System.getenv("KUBECONFIG");
        boolean ci = "true".equalsIgnoreCase(System.getenv("CI"));
        assertThat(ci && (kubeconfig == null || kubeconfig.isBlank()))
                .as("CI=true needs KUBECONFIG for the kubernetes-cli block (scripts/kube-up.sh prints it)")
                .isFalse();
        Assumptions.assumeTrue(
                kubeconfig != null && !kubeconfig.isBlank(), "KUBECONFIG is not set: no cluster to run the block on");
        Shell.Result r = shell.run(single("kubernetes-cli"), COMMAND);
        assertThat(r.code()).as("%s", r).isZero();
        assertThat(r.out()).as("%s", r).isEqualTo("hi\n");
    }

    @Test
    @Order(8)
    void block_webflux() throws Exception {
        try (Shell.Background demo = started(single("webflux"), "Started \\w+ in")) {
            Shell.Result r = shell.run(single("webflux-curl"), COMMAND);
            assertThat(r.code()).as("%s", r).isZero();
            assertThat(r.out()).as("%s", r).contains("event:stdout", "hi", "event:stderr", "oops", "event:exit");
            demo.stop();
        }
    }

    @Test
    @Order(9)
    void block_webflux_curl() {
        // run by block_webflux, against the demo that block starts
        assertThat(byName).containsKey("webflux-curl");
    }

    @Test
    @Order(10)
    void block_webflux_providers() throws Exception {
        for (String command : block("webflux-providers").commands()) {
            try (Shell.Background demo = started(command, "Started \\w+ in")) {
                Shell.Result r = shell.run("curl -s http://127.0.0.1:8080/api/isolation", COMMAND);
                assertThat(r.code()).as("%s", r).isZero();
                assertThat(r.out())
                        .as("%s", r)
                        .contains(command.contains("runsc") ? "gVisor" : "http://127.0.0.1:7070");
                demo.stop();
            }
        }
    }

    /** The consumer project the README shows, built against the artifacts the first command installed. */
    @Test
    @Order(11)
    void block_consumer() throws Exception {
        Path project = Files.createDirectories(temp.resolve("consumer"));
        for (var e : byName.entrySet()) {
            if (e.getKey().startsWith("file ")) {
                Path file = project.resolve(e.getKey().substring("file ".length()));
                Files.createDirectories(file.getParent());
                Files.writeString(file, e.getValue().text(), StandardCharsets.UTF_8);
            }
        }
        Shell in = shell.in(project);
        List<String> commands = block("consumer").commands();
        Shell.Result last = null;
        for (String command : commands) {
            last = in.run(command, BUILD);
            assertThat(last.code()).as("%s", last).isZero();
        }
        assertThat(last).isNotNull();
        assertThat(last.out()).as("%s", last).contains("hello from a sandbox");
        assertThat(last.err()).as("%s", last).doesNotContain("SLF4J", "WARNING");
    }

    @Test
    @Order(12)
    void block_consumer_file() {
        assertThat(byName.keySet()).anyMatch(k -> k.startsWith("file ") && k.endsWith("pom.xml"));
        assertThat(byName.keySet()).anyMatch(k -> k.startsWith("file ") && k.endsWith(".java"));
    }

    /**
     * Starts a command that serves until stopped; {@code exec} makes it the shell's own process, so stopping it stops
     * the server (after the shell state carried from earlier lines of its block, if any).
     */
    private Shell.Background started(String command, String ready) throws IOException, InterruptedException {
        int state = command.lastIndexOf(STATE_END);
        String script = state < 0
                ? "exec " + command
                : command.substring(0, state + STATE_END.length()) + "exec "
                        + command.substring(state + STATE_END.length());
        Shell.Background b = shell.start(script, Pattern.compile(ready), COMMAND);
        servers.add(b);
        return b;
    }

    private Readme.Block block(String name) {
        Readme.Block block = byName.get(name);
        assertThat(block)
                .as("README.md has a block marked <!-- readme-commands: %s -->", name)
                .isNotNull();
        return block;
    }

    private String single(String name) {
        List<String> commands = block(name).commands();
        assertThat(commands).as("commands of %s", block(name).where()).hasSize(1);
        return commands.get(0);
    }

    /** The block's commands, each preceded by the shell state the lines before it set (umask, variables). */
    private List<String> commandsWithState(String name) {
        List<String> out = new ArrayList<>();
        StringBuilder state = new StringBuilder();
        for (String command : block(name).commands()) {
            String bare = command.replaceAll("\\s+#.*$", "");
            if (STATE_LINE.matcher(bare).matches()) {
                state.append(bare).append(STATE_END);
                continue;
            }
            out.add(state + command);
        }
        return out;
    }

    private void runAll(String name, Map<String, String> values) throws Exception {
        for (String command : commandsWithState(name)) {
            Shell.Result r = shell.run(substitute(command, values), COMMAND);
            assertThat(r.code()).as("%s", r).isZero();
        }
    }

    private static String substitute(String command, Map<String, String> values) {
        String s = command;
        // the longest placeholder first: the snapshot reference contains the session id
        List<String> keys = new ArrayList<>(values.keySet());
        keys.sort(Comparator.comparingInt(String::length).reversed());
        for (String key : keys) {
            s = key.matches("[A-Z]+")
                    ? s.replaceAll("\\b" + key + "\\b", values.get(key))
                    : s.replace(key, values.get(key));
        }
        return s;
    }

    private static String quote(String s) {
        return "'" + s.replace("'", "'\\''") + "'";
    }

    /** Copies the sources as a clone has them: no build output, no Git metadata. */
    private static void copySources(Path from, Path to) throws IOException {
        Files.walkFileTree(from, new SimpleFileVisitor<>() {
            @Override
            public FileVisitResult preVisitDirectory(Path dir, BasicFileAttributes attrs) throws IOException {
                String name = dir.getFileName() == null ? "" : dir.getFileName().toString();
                if (!dir.equals(from)
                        && (name.equals("target") || name.equals(".git") || name.equals("node_modules"))) {
                    return FileVisitResult.SKIP_SUBTREE;
                }
                Files.createDirectories(to.resolve(from.relativize(dir).toString()));
                return FileVisitResult.CONTINUE;
            }

            @Override
            public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) throws IOException {
                Files.copy(
                        file,
                        to.resolve(from.relativize(file).toString()),
                        StandardCopyOption.COPY_ATTRIBUTES,
                        LinkOption.NOFOLLOW_LINKS);
                return FileVisitResult.CONTINUE;
            }
        });
    }

    private static void deleteTree(Path dir) throws IOException {
        try (Stream<Path> paths = Files.walk(dir)) {
            for (Path p : paths.sorted(Comparator.reverseOrder()).toList()) {
                p.toFile().setWritable(true);
                Files.deleteIfExists(p);
            }
        }
    }
}
