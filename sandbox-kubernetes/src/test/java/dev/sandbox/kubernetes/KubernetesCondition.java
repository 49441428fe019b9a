package dev.sandbox.kubernetes;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import org.junit.jupiter.api.extension.ConditionEvaluationResult;
import org.junit.jupiter.api.extension.ExecutionCondition;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Runs the Kubernetes tests where {@code KUBECONFIG} names a cluster that answers, whose nodes run pods on the local
 * Docker daemon (the test images are loaded there). Without it they are skipped with a message saying how to enable
 * them, except under {@code CI=true}, where that is a failure: CI must not pass by skipping the cluster.
 */
public final class KubernetesCondition implements ExecutionCondition {
    private static final String HOW = "start the test cluster with scripts/kube-up.sh and export the KUBECONFIG it "
            + "prints (after scripts/test-image.sh and a build of sandbox-agent-image); .ci/run does all of it";

    private static volatile boolean checked;
    private static volatile String problem;

    /** Made by JUnit through {@link RequiresKubernetes}. */
    public KubernetesCondition() {}

    @Override
    public ConditionEvaluationResult evaluateExecutionCondition(ExtensionContext context) {
        String p = problem();
        if (p == null) {
            return ConditionEvaluationResult.enabled("a Kubernetes cluster answers");
        }
        if ("true".equalsIgnoreCase(System.getenv("CI"))) {
            throw new IllegalStateException("CI=true but the Kubernetes tests cannot run: " + p + "; " + HOW);
        }
        return ConditionEvaluationResult.disabled("Kubernetes tests skipped: " + p + ". To run them, " + HOW + ".");
    }

    private static synchronized String problem() {
        if (!checked) {
            problem = check();
            checked = true;
        }
        return problem;
    }

    private static String check() {
        String kubeconfig = System.getenv("KUBECONFIG");
        if (kubeconfig == null || kubeconfig.isBlank()) {
            return "KUBECONFIG is not set";
        }
        try (KubernetesClient client = new KubernetesClientBuilder().build()) {
            client.pods().inNamespace(client.getNamespace()).list();
        } catch (RuntimeException e) {
            return "the cluster of " + kubeconfig + " does not answer (" + e.getMessage() + ")";
        }
        try {
            KubernetesTestSupport.loadAgentImage();
        } catch (RuntimeException e) {
            return e.getMessage();
        }
        return null;
    }
}
