package dev.sandbox.samples.cli;

/** The command line is wrong; the message says how, and the CLI prints it with the usage and exits 2. */
final class UsageException extends Exception {
    private static final long serialVersionUID = 1L;

    UsageException(String message) {
        super(message);
    }
}
