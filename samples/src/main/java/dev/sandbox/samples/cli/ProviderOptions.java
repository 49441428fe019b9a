package dev.sandbox.samples.cli;

import java.io.PrintWriter;
import java.nio.file.Path;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;

/**
 * The options that choose where a subcommand's sessions are, a mixin: {@code --provider
 * local|docker|kubernetes|remote}, the remote provider's {@code --url}, {@code --token-file} and {@code --ca-cert}, and
 * the Docker and Kubernetes providers' settings.
 */
final class ProviderOptions extends KubernetesOptions {
    // help lists these first (picocli's default order is -1, and it sorts stably)
    @Option(
            names = "--provider",
            paramLabel = "NAME",
            converter = Values.Providers.class,
            completionCandidates = Values.Providers.class,
            order = -4,
            description = "where to run: local (host processes, no isolation), docker (containers on the Docker"
                    + " daemon of DOCKER_HOST), kubernetes (pods in a cluster, from KUBECONFIG) or remote (a sandbox"
                    + " serve) [local; sandbox mcp: docker]")
    String name = "local";

    @Option(
            names = "--url",
            paramLabel = "URL",
            converter = Values.HttpUrl.class,
            order = -3,
            description = "remote only: the server, such as http://127.0.0.1:7070")
    String url;

    @Option(
            names = "--token-file",
            paramLabel = "FILE",
            converter = Values.FilePath.class,
            order = -2,
            description = "remote only: the file holding the server's token")
    Path tokenFile;

    @Option(
            names = "--ca-cert",
            paramLabel = "FILE",
            converter = Values.FilePath.class,
            order = -2,
            description = "remote only, https: trust the certificates in this PEM file (the server's own, or its CA's)"
                    + " [the JVM's trust store]")
    Path caCert;

    /**
     * The provider the options choose.
     *
     * @return the provider
     * @throws ParameterException when the options do not go together
     */
    Provider provider() {
        Provider.Docker docker = docker(name);
        Provider.Kubernetes kubernetes = kubernetes(name);
        boolean remote = name.equals("remote");
        if (remote && (url == null || tokenFile == null)) {
            throw usageError("--provider remote needs --url URL and --token-file FILE");
        }
        if (!remote && (url != null || tokenFile != null || caCert != null)) {
            throw usageError((url != null ? "--url" : tokenFile != null ? "--token-file" : "--ca-cert")
                    + " applies to --provider remote only");
        }
        if (caCert != null && !url.startsWith("https:")) {
            throw usageError("--ca-cert applies to an https:// --url only, got '" + url + "'");
        }
        if (remote) {
            try {
                PrintWriter err = mixee.commandLine().getErr();
                TokenFile.checkAccess(tokenFile, false, warning -> {
                    err.println("sandbox: " + warning);
                    err.flush();
                });
            } catch (UsageException e) {
                throw usageError(e.getMessage());
            }
        }
        return name.equals("local") ? Provider.LOCAL : new Provider(name, url, tokenFile, caCert, docker, kubernetes);
    }

    private ParameterException usageError(String message) {
        return new ParameterException(mixee.commandLine(), message);
    }
}
