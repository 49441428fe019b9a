package dev.sandbox.implementation.files;

import dev.sandbox.FileOperationException;
import reactor.core.publisher.Mono;

/**
 * The removal every provider does: a path that is not there is removed already ({@code SandboxFiles.remove} is
 * idempotent, like {@code rm -f}).
 */
public final class Removal {
    private Removal() {}

    /**
     * A removal that completes when the path was not there.
     *
     * @param removal the provider's removal, which fails with {@link FileOperationException.Reason#NOT_FOUND} (or
     *     {@link FileOperationException.Reason#NOT_A_DIRECTORY}, for a path beneath a regular file) when it is not
     * @return the removal, idempotent
     */
    public static Mono<Void> idempotent(Mono<Void> removal) {
        return removal.onErrorResume(Removal::notThere, e -> Mono.empty());
    }

    /**
     * Whether a failure says the path is not there, as {@code SandboxFiles.exists} reads it.
     *
     * @param e the failure
     * @return whether the path is missing or beneath a regular file
     */
    public static boolean notThere(Throwable e) {
        return e instanceof FileOperationException f
                && (f.reason() == FileOperationException.Reason.NOT_FOUND
                        || f.reason() == FileOperationException.Reason.NOT_A_DIRECTORY);
    }
}
