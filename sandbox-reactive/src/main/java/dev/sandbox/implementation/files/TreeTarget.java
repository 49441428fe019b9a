package dev.sandbox.implementation.files;

import reactor.core.publisher.Mono;

/**
 * What a provider's files API offers beyond {@link dev.sandbox.SandboxFiles} so that a directory upload can copy
 * symbolic links and permission bits. Internal: providers implement it on their {@code SandboxFiles}.
 */
public interface TreeTarget {
    /**
     * Creates a symbolic link; fails if the path exists.
     *
     * @param path the link, as the files API takes paths
     * @param target its target, written as given
     * @return completes when made
     */
    Mono<Void> symlink(String path, String target);

    /**
     * Sets the permission bits of a file or directory (not following a final link).
     *
     * @param path the path
     * @param mode the bits, {@code 07777}
     * @return completes when set
     */
    Mono<Void> chmod(String path, int mode);
}
