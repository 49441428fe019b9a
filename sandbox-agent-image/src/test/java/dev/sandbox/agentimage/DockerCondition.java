package dev.sandbox.agentimage;

import java.time.Duration;
import org.junit.jupiter.api.extension.ConditionEvaluationResult;
import org.junit.jupiter.api.extension.ExecutionCondition;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Runs the image tests only where the {@code docker} CLI reaches a daemon and the test image exists. Without them
 * the tests are skipped with a message saying how to enable them, except under {@code CI=true}, where that is a
 * failure: CI must not pass by skipping them. (The same rule as sandbox-docker's tests, over the CLI, which is what
 * these tests drive.)
 */
public final class DockerCondition implements ExecutionCondition {
    static final String BUSYBOX = "sandbox-test:busybox";
    private static final String HOW =
            "start a Docker daemon (dockerd) and run scripts/test-image.sh to build " + BUSYBOX + "; .ci/run does both";
    private static final Duration CHECK_TIMEOUT = Duration.ofSeconds(30);

    private static String problem;
    private static boolean checked;

    /** Made by JUnit through {@link RequiresDocker}. */
    public DockerCondition() {}

    @Override
    public ConditionEvaluationResult evaluateExecutionCondition(ExtensionContext context) {
        String p = problem();
        if (p == null) {
            return ConditionEvaluationResult.enabled("Docker daemon and " + BUSYBOX + " are there");
        }
        if ("true".equalsIgnoreCase(System.getenv("CI"))) {
            throw new IllegalStateException("CI=true but the Docker tests cannot run: " + p + "; " + HOW);
        }
        return ConditionEvaluationResult.disabled("Docker tests skipped: " + p + ". To run them, " + HOW + ".");
    }

    private static synchronized String problem() {
        if (!checked) {
            problem = check();
            checked = true;
        }
        return problem;
    }

    private static String check() {
        try {
            DockerCli.Result version = DockerCli.docker(CHECK_TIMEOUT, "version", "--format", "{{.Server.Version}}");
            if (version.exit() != 0) {
                return "no Docker daemon answers the docker CLI ("
                        + version.err().strip() + ")";
            }
            if (DockerCli.docker(CHECK_TIMEOUT, "image", "inspect", BUSYBOX).exit() != 0) {
                return "the image " + BUSYBOX + " is missing";
            }
            return null;
        } catch (AssertionError e) {
            return "cannot run the docker CLI: " + e.getMessage();
        }
    }
}
