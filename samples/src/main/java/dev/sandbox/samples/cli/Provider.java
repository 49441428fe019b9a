package dev.sandbox.samples.cli;

import java.nio.file.Path;

/**
 * Where a subcommand's sessions come from, as its command line chose.
 *
 * @param name the provider's name: local, docker or remote
 * @param url the server's base URL (remote only), or {@code null}
 * @param tokenFile the file holding the bearer token (remote only), or {@code null}
 * @param caCert the PEM file of the certificates an {@code https} client trusts (remote only), or {@code null} for the
 *     JVM's trust store
 * @param docker the Docker settings (docker only), or {@code null}
 */
record Provider(String name, String url, Path tokenFile, Path caCert, Docker docker) {
    /** The local provider. */
    static final Provider LOCAL = new Provider("local", null, null, null, null);

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
        /** The image sessions use when {@code --image} is not given. */
        static final String DEFAULT_IMAGE = "sandbox-test:busybox";
    }
}
