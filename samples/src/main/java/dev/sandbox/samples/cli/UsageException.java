package dev.sandbox.samples.cli;

/**
 * The command line is right but asks for something that cannot be done here: a local session from another command,
 * a snapshot from a provider without them, a shell without a terminal, an unreadable token file. The CLI prints the
 * message and exits 2.
 */
final class UsageException extends Exception {
    private static final long serialVersionUID = 1L;

    /** @param message what cannot be done, and why */
    UsageException(String message) {
        super(message);
    }
}
