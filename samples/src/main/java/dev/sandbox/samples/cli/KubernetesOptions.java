package dev.sandbox.samples.cli;

import java.nio.file.Path;
import java.util.List;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.ParseResult;

/**
 * The Kubernetes provider's options, a mixin: {@code --kubeconfig}, {@code --context}, {@code --namespace} and {@code
 * --agent-image}, on top of the Docker options that mean the same for pods ({@code --image}, {@code --pull}, {@code
 * --cpus}, {@code --memory}, {@code --container-lease}). They apply to {@code --provider kubernetes} only.
 */
class KubernetesOptions extends DockerOptions {
    private static final List<String> NAMES = List.of("--kubeconfig", "--context", "--namespace", "--agent-image");

    @Option(
            names = "--kubeconfig",
            paramLabel = "FILE",
            converter = Values.FilePath.class,
            description = "kubernetes only: the kubeconfig file [KUBECONFIG, else ~/.kube/config]")
    Path kubeconfig;

    @Option(
            names = "--context",
            paramLabel = "NAME",
            converter = Values.NonBlank.class,
            description = "kubernetes only: the kubeconfig's context [its current context]")
    String context;

    @Option(
            names = "--namespace",
            paramLabel = "NAME",
            converter = Values.DnsLabel.class,
            description = "kubernetes only: the namespace of the session pods [the context's, else default]")
    String namespace;

    @Option(
            names = "--agent-image",
            paramLabel = "IMAGE",
            converter = Values.NonBlank.class,
            description = "kubernetes only: the image the sandbox agent is copied from [dev.sandbox/sandbox-agent:"
                    + "VERSION]")
    String agentImage;

    /**
     * The Kubernetes settings for the given provider.
     *
     * @param provider the provider's name
     * @return the settings for kubernetes, {@code null} for another provider
     * @throws ParameterException when a Kubernetes option is given for another provider, or no kubeconfig is found
     */
    Provider.Kubernetes kubernetes(String provider) {
        if (provider.equals("kubernetes")) {
            if (kubeconfig != null) {
                Kubeconfigs.checkGiven(mixee.commandLine(), kubeconfig);
            } else {
                Kubeconfigs.checkFound(mixee.commandLine());
            }
            return new Provider.Kubernetes(
                    kubeconfig, context, namespace, image, agentImage, pull, cpus, memory, lease);
        }
        ParseResult given = mixee.commandLine().getParseResult();
        for (String name : NAMES) {
            if (given.hasMatchedOption(name)) {
                throw new ParameterException(mixee.commandLine(), name + " applies to --provider kubernetes only");
            }
        }
        return null;
    }
}
