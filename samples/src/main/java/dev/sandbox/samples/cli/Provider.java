package dev.sandbox.samples.cli;

import java.nio.file.Path;

/**
 * Where a subcommand's sessions come from, as its command line chose.
 *
 * @param name the provider's name: local, docker, kubernetes or remote
 * @param url the server's base URL (remote only), or {@code null}
 * @param tokenFile the file holding the bearer token (remote only), or {@code null}
 * @param caCert the PEM file of the certificates an {@code https} client trusts (remote only), or {@code null} for the
 *     JVM's trust store
 * @param docker the Docker settings (docker only), or {@code null}
 * @param kubernetes the Kubernetes settings (kubernetes only), or {@code null}
 */
record Provider(String name, String url, Path tokenFile, Path caCert, Docker docker, Kubernetes kubernetes) {
    /** The local provider. */
    static final Provider LOCAL = new Provider("local", null, null, null, null);

    /**
     * A provider other than kubernetes.
     *
     * @param name the provider's name
     * @param url the server's base URL (remote only), or {@code null}
     * @param tokenFile the token file (remote only), or {@code null}
     * @param caCert the trusted certificates (remote only), or {@code null}
     * @param docker the Docker settings (docker only), or {@code null}
     */
    Provider(String name, String url, Path tokenFile, Path caCert, Docker docker) {
        this(name, url, tokenFile, caCert, docker, null);
    }

    /**
     * The Kubernetes provider's settings. Every field but the image may be {@code null} for the SDK's default (the
     * kubeconfig and context as {@code kubectl} finds them, the context's namespace).
     *
     * @param kubeconfig the kubeconfig file, instead of {@code KUBECONFIG} or {@code ~/.kube/config}
     * @param context the kubeconfig's context, instead of its current one
     * @param namespace the namespace of the session pods
     * @param image the session image, such as {@code python:3.12-slim}
     * @param agentImage the image the agent is copied from
     * @param pull always, if-not-present or never (for both images)
     * @param cpus the CPU limit, in CPUs
     * @param memory the memory limit, in bytes
     * @param lease how long a session without a lifetime outlives this process when it dies
     */
    record Kubernetes(
            Path kubeconfig,
            String context,
            String namespace,
            String image,
            String agentImage,
            String pull,
            Double cpus,
            Long memory,
            java.time.Duration lease) {}

    /**
     * The Docker provider's settings. Every field but the image may be {@code null} for Docker's or the SDK's default.
     *
     * @param image the image, such as {@code python:3.12-slim}
     * @param pull always, if-not-present or never
     * @param runtime runc or runsc
     * @param network none or bridge
     * @param cpus the CPU limit, in CPUs
     * @param memory the memory limit, in bytes
     * @param pidsLimit the most processes at once
     */
    record Docker(
            String image,
            String pull,
            String runtime,
            String network,
            Double cpus,
            Long memory,
            Long pidsLimit,
            java.time.Duration lease) {
        /**
         * The image sessions use when {@code --image} is not given: a small public image a user's daemon pulls on
         * first use (pull policy if-not-present). Any image works (the agent is a static program copied in); a Python
         * one because code that AI agents write and run is most often Python, and {@code run_code} offers it.
         */
        static final String DEFAULT_IMAGE = "python:3.12-slim";
    }
}
