package dev.sandbox.samples.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.function.BiFunction;
import java.util.stream.Stream;

/**
 * {@code sandbox cp -r} downloads into targets written as a user writes them ({@code ./out}, {@code a/../out},
 * {@code .}), each a real {@code java -jar} process whose working directory is set, so the relative target resolves
 * as it would in a shell; and a hostile tree is refused under such a target, leaving nothing behind.
 */
final class CopyTargets {
    private CopyTargets() {}

    /**
     * Runs the checks.
     *
     * @param work an empty local directory to work in
     * @param session the session's id
     * @param cli the full argument list for a subcommand and its own arguments, the provider's options added
     */
    static void check(Path work, String session, BiFunction<String, String[], String[]> cli) throws Exception {
        JarCli.Result made = JarCli.run(work, cli.apply("exec", new String[] {
            "--session",
            session,
            "--",
            "sh",
            "-c",
            "mkdir -p out/d evil/sub && printf 1 > out/a && printf 2 > out/d/b"
                    + " && ln -s ../.. evil/sub/up && printf x > evil/z"
        }));
        assertThat(made.code()).as(made.err()).isZero();
        Path here = Files.createDirectories(work.resolve("here"));
        Files.createDirectories(here.resolve("a"));
        Path canary = Files.writeString(work.resolve("canary"), "untouched");

        // the README's own example, then the forms with . and .. segments, each resolved against here (or here/a)
        copies(here, cli, session, "./out", here.resolve("out"));
        copies(here, cli, session, "a/../out2", here.resolve("out2"));
        copies(here, cli, session, "./a/./../out3", here.resolve("out3"));
        copies(here.resolve("a"), cli, session, ".", here.resolve("a/out")); // a directory: gets the source's name
        copies(here.resolve("a"), cli, session, "../out4", here.resolve("out4"));

        JarCli.Result refused = JarCli.run(here, cli.apply("cp", new String[] {"-r", session + ":evil", "./evil"}));
        assertThat(refused.code()).as(refused.err()).isEqualTo(SandboxCli.EXIT_ERROR);
        assertThat(refused.err()).contains("sub/up").contains("refused").doesNotContain("outside the target");
        assertThat(Files.exists(here.resolve("evil"), LinkOption.NOFOLLOW_LINKS))
                .isFalse();
        assertThat(canary).hasContent("untouched");
        try (Stream<Path> left = Files.list(here)) {
            assertThat(left.map(p -> p.getFileName().toString()))
                    .containsExactlyInAnyOrder("a", "out", "out2", "out3", "out4");
        }
    }

    private static void copies(
            Path cwd, BiFunction<String, String[], String[]> cli, String session, String target, Path lands)
            throws Exception {
        JarCli.Result copied = JarCli.run(cwd, cli.apply("cp", new String[] {"-r", session + ":out", target}));
        assertThat(copied.code()).as("cp -r " + target + ": " + copied.err()).isZero();
        assertThat(lands.resolve("a")).as(target).hasContent("1");
        assertThat(lands.resolve("d/b")).as(target).hasContent("2");
    }
}
