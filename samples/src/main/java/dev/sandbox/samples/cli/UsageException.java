package dev.sandbox.samples.cli;

/**
 * The command line is wrong, or asks for something the chosen provider cannot do; the message says why, and the CLI
 * prints it (with the usage, when the command line itself is wrong) and exits 2.
 */
final class UsageException extends Exception {
    private static final long serialVersionUID = 1L;

    private final boolean showUsage;

    /** A malformed command line: the CLI prints the usage after the message. */
    UsageException(String message) {
        this(message, true);
    }

    /**
     * @param message what is wrong
     * @param showUsage whether the usage helps: not when the command line is fine but the provider cannot do it
     */
    UsageException(String message, boolean showUsage) {
        super(message);
        this.showUsage = showUsage;
    }

    boolean showUsage() {
        return showUsage;
    }
}
