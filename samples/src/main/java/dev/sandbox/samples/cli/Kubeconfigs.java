package dev.sandbox.samples.cli;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import picocli.CommandLine;
import picocli.CommandLine.ParameterException;

/**
 * Where {@code --provider kubernetes} finds its cluster, checked before connecting so that a missing file is a usage
 * error that says where the CLI looked: {@code --kubeconfig FILE}, else {@code KUBECONFIG} (a list of files, as for
 * {@code kubectl}), else {@code ~/.kube/config}, else the service account of the pod the CLI runs in.
 */
final class Kubeconfigs {
    private Kubeconfigs() {}

    /** A {@code --kubeconfig} file must be a readable file. */
    static void checkGiven(CommandLine commandLine, Path file) {
        if (!Files.isRegularFile(file) || !Files.isReadable(file)) {
            throw new ParameterException(commandLine, "--kubeconfig: no readable kubeconfig file at '" + file + "'");
        }
    }

    /** Without {@code --kubeconfig}: {@code KUBECONFIG} must name a file, else one of the defaults must be there. */
    static void checkFound(CommandLine commandLine) {
        String variable = System.getenv("KUBECONFIG");
        if (variable != null && !variable.isBlank()) {
            for (String entry : variable.split(File.pathSeparator)) {
                if (!entry.isBlank() && readable(entry)) {
                    return;
                }
            }
            throw new ParameterException(
                    commandLine,
                    "--provider kubernetes: KUBECONFIG is '" + variable + "', and no readable kubeconfig file is"
                            + " there; set KUBECONFIG to your cluster's kubeconfig or pass --kubeconfig FILE");
        }
        Path home = Path.of(System.getProperty("user.home"), ".kube", "config");
        if (Files.isReadable(home) || System.getenv("KUBERNETES_SERVICE_HOST") != null) {
            return;
        }
        throw new ParameterException(
                commandLine,
                "--provider kubernetes needs a kubeconfig: KUBECONFIG is not set and there is no " + home
                        + "; set KUBECONFIG or pass --kubeconfig FILE");
    }

    private static boolean readable(String entry) {
        try {
            Path p = Path.of(entry);
            return Files.isRegularFile(p) && Files.isReadable(p);
        } catch (InvalidPathException e) {
            return false;
        }
    }
}
