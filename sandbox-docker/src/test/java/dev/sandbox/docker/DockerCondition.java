package dev.sandbox.docker;

import com.github.dockerjava.api.DockerClient;
import com.github.dockerjava.api.exception.NotFoundException;
import com.github.dockerjava.core.DefaultDockerClientConfig;
import com.github.dockerjava.core.DockerClientImpl;
import com.github.dockerjava.zerodep.ZerodepDockerHttpClient;
import java.time.Duration;
import org.junit.jupiter.api.extension.ConditionEvaluationResult;
import org.junit.jupiter.api.extension.ExecutionCondition;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Runs Docker tests only where a daemon answers and the test image exists. Without them the tests are skipped with
 * a message saying how to enable them, except under {@code CI=true}, where a missing daemon is a failure: CI must
 * not pass by skipping the Docker suite.
 */
public final class DockerCondition implements ExecutionCondition {
    private static final String HOW = "start a Docker daemon (dockerd) and run scripts/test-image.sh to build "
            + DockerTestSupport.IMAGE + "; .ci/run does both";

    private static volatile String problem;

    /** Made by JUnit through {@link RequiresDocker}. */
    public DockerCondition() {}

    private static volatile boolean checked;

    @Override
    public ConditionEvaluationResult evaluateExecutionCondition(ExtensionContext context) {
        String p = problem();
        if (p == null) {
            return ConditionEvaluationResult.enabled("Docker daemon and " + DockerTestSupport.IMAGE + " are there");
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
        DefaultDockerClientConfig config =
                DefaultDockerClientConfig.createDefaultConfigBuilder().build();
        try (DockerClient client = DockerClientImpl.getInstance(
                config,
                new ZerodepDockerHttpClient.Builder()
                        .dockerHost(config.getDockerHost())
                        .connectionTimeout(Duration.ofSeconds(5))
                        .responseTimeout(Duration.ofSeconds(10))
                        .build())) {
            try {
                client.pingCmd().exec();
            } catch (RuntimeException e) {
                return "no Docker daemon answers at " + config.getDockerHost() + " (" + e.getMessage() + ")";
            }
            try {
                client.inspectImageCmd(DockerTestSupport.IMAGE).exec();
            } catch (NotFoundException e) {
                return "the image " + DockerTestSupport.IMAGE + " is missing";
            }
            return null;
        } catch (Exception e) {
            return "cannot talk to Docker: " + e;
        }
    }
}
