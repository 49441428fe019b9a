package dev.sandbox.samples.cli;

import java.util.List;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.ParseResult;
import picocli.CommandLine.Spec;

/**
 * The Docker provider's options, a mixin: {@code --image}, {@code --pull}, {@code --runtime}, {@code --network},
 * {@code --cpus}, {@code --memory}, {@code --pids-limit}, {@code --container-lease}. They apply to {@code --provider
 * docker}; those that mean the same for pods ({@link #SHARED}) to {@code --provider kubernetes} too.
 */
class DockerOptions {
    /** The options of both the docker and the kubernetes provider. */
    static final List<String> SHARED = List.of("--image", "--pull", "--cpus", "--memory", "--container-lease");

    private static final List<String> DOCKER_ONLY = List.of("--runtime", "--network", "--pids-limit");

    @Spec(Spec.Target.MIXEE)
    CommandSpec mixee;

    @Option(
            names = "--image",
            paramLabel = "IMAGE",
            converter = Values.NonBlank.class,
            description = "docker, kubernetes: the image [" + Provider.Docker.DEFAULT_IMAGE + "]")
    String image = Provider.Docker.DEFAULT_IMAGE;

    @Option(
            names = {"--pull", "--pull-policy"},
            paramLabel = "POLICY",
            converter = Values.PullPolicies.class,
            completionCandidates = Values.PullPolicies.class,
            description = "docker, kubernetes: always, if-not-present or never [if-not-present]")
    String pull;

    @Option(
            names = "--runtime",
            paramLabel = "NAME",
            converter = Values.Runtimes.class,
            completionCandidates = Values.Runtimes.class,
            description = "docker only: runc, or runsc for gVisor [runc]")
    String runtime;

    @Option(
            names = "--network",
            paramLabel = "NAME",
            converter = Values.Networks.class,
            completionCandidates = Values.Networks.class,
            description = "docker only: none or bridge [none]")
    String network;

    @Option(
            names = "--cpus",
            paramLabel = "N",
            converter = Values.Cpus.class,
            description = "docker, kubernetes: CPU limit, such as 0.5")
    Double cpus;

    @Option(
            names = "--memory",
            paramLabel = "BYTES",
            converter = Values.Memory.class,
            description = "docker, kubernetes: memory limit, a number with an optional k, m or g suffix; at least 6m")
    Long memory;

    @Option(
            names = "--pids-limit",
            paramLabel = "N",
            converter = Values.WholeNumber.class,
            description = "docker only: the most processes at once")
    Long pidsLimit;

    @Option(
            names = "--container-lease",
            paramLabel = "D",
            converter = Durations.class,
            description = "docker, kubernetes: how long a session without a lifetime outlives this process when it dies"
                    + " without ending it [1m]")
    java.time.Duration lease;

    /**
     * The Docker settings for the given provider.
     *
     * @param provider the provider's name
     * @return the settings for docker, {@code null} for another provider
     * @throws ParameterException when a Docker option is given for another provider
     */
    Provider.Docker docker(String provider) {
        if (provider.equals("docker")) {
            return new Provider.Docker(image, pull, runtime, network, cpus, memory, pidsLimit, lease);
        }
        ParseResult given = mixee.commandLine().getParseResult();
        for (String name : DOCKER_ONLY) {
            if (given.hasMatchedOption(name)) {
                throw new ParameterException(mixee.commandLine(), name + " applies to --provider docker only");
            }
        }
        if (!provider.equals("kubernetes")) {
            for (String name : SHARED) {
                if (given.hasMatchedOption(name)) {
                    throw new ParameterException(
                            mixee.commandLine(), name + " applies to --provider docker or kubernetes only");
                }
            }
        }
        return null;
    }
}
