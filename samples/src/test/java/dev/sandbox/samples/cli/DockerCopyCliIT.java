package dev.sandbox.samples.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sandbox.docker.RequiresDocker;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code sandbox cp --provider docker -r ID:out ./out}, the README's example, and the other relative targets, each
 * as its own {@code java -jar} process in a working directory of the test's choosing, against a real container.
 */
@RequiresDocker
@Timeout(value = 300, unit = TimeUnit.SECONDS)
class DockerCopyCliIT {

    private static String[] docker(String subcommand, String... rest) {
        List<String> args = new ArrayList<>(List.of(subcommand, "--provider", "docker"));
        if (!subcommand.equals("destroy")) {
            args.addAll(List.of("--pull", "never", "--image", "sandbox-test:busybox"));
        }
        args.addAll(List.of(rest));
        return args.toArray(String[]::new);
    }

    @Test
    void cpIntoRelativeTargetsWithDotSegmentsWorksAndAHostileTreeIsStillRefused(@TempDir Path work) throws Exception {
        JarCli.Result created = JarCli.run(work, docker("create", "--lifetime", "3m"));
        assertThat(created.code()).as(created.err()).isZero();
        String id = created.out().strip();
        try {
            CopyTargets.check(work, id, DockerCopyCliIT::docker);
        } finally {
            assertThat(JarCli.run(work, docker("destroy", id)).code()).isZero();
        }
    }
}
