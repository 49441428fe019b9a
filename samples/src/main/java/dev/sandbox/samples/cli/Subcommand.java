package dev.sandbox.samples.cli;

import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

/**
 * What the {@code sandbox} subcommands share: the CLI's streams, and checking the command line as a whole ({@link
 * #validate()}) before running it ({@link #execute()}). A {@link ParameterException} from either is a usage error.
 */
abstract class Subcommand implements Callable<Integer> {
    @ParentCommand
    SandboxCommand cli;

    @Spec
    CommandSpec spec;

    @Option(
            names = {"-h", "--help"},
            usageHelp = true,
            order = 1000, // last
            description = "print this help (sandbox --help: every subcommand's)")
    boolean help;

    /** Checks what picocli cannot check value by value: options that do not go together, arguments out of place. */
    void validate() {}

    /**
     * Runs the subcommand.
     *
     * @return the exit code
     * @throws UsageException when the provider cannot do what the command line asks
     */
    abstract int execute() throws UsageException;

    @Override
    public final Integer call() throws UsageException {
        validate();
        return execute();
    }

    /** A usage error: the CLI prints the message, this subcommand's synopsis and where its help is, and exits 2. */
    ParameterException usageError(String message) {
        return new ParameterException(spec.commandLine(), message);
    }

    /**
     * The program and its arguments given after {@code --}. Picocli collects positional arguments before and after
     * {@code --} alike, so this checks this subcommand's own arguments for where {@code --} was.
     *
     * @param positional the positional arguments picocli collected
     * @return the arguments after {@code --}, or {@code null} when there is no {@code --}
     * @throws ParameterException when an argument came before {@code --}, or none after it
     */
    List<String> afterDashes(List<String> positional) {
        List<String> own = spec.commandLine().getParseResult().expandedArgs();
        int dashes = own.indexOf("--");
        int after = dashes < 0 ? 0 : own.size() - dashes - 1;
        if (positional.size() > after) {
            throw usageError("unexpected argument '" + positional.get(0) + "'; put the command after --");
        }
        if (dashes >= 0 && positional.isEmpty()) {
            throw usageError("missing command after --");
        }
        return dashes < 0 ? null : List.copyOf(positional);
    }
}
