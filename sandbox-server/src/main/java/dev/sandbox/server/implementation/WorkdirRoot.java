package dev.sandbox.server.implementation;

import dev.sandbox.InvalidArgumentException;
import dev.sandbox.SessionOptions;
import java.io.IOException;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * Confines the workdirs clients choose for sessions of a provider whose workdir is a host path (the local provider):
 * it must be an existing directory under the server's root once normalised, with no {@code ..} segment and no
 * symbolic link leading out. The session then gets the resolved directory, so a link swapped in later does not
 * matter. Other providers' workdirs are paths inside their sandboxes and are left alone.
 */
public final class WorkdirRoot {
    private static final Logger LOG = LoggerFactory.getLogger(WorkdirRoot.class);

    private final Path root;
    private final boolean hostPaths;

    /**
     * Creates the check.
     *
     * @param root the root, an existing directory (resolved)
     * @param providerName the served provider's name: only {@code local} has host workdirs
     */
    public WorkdirRoot(Path root, String providerName) {
        this.root = root;
        this.hostPaths = "local".equals(providerName);
    }

    /**
     * The root, resolved.
     *
     * @return the root
     */
    public Path root() {
        return root;
    }

    /**
     * Checks the workdir of session options, off the event loop (it reads the file system).
     *
     * @param options the options
     * @return the options with the resolved workdir, or an {@link InvalidArgumentException} naming {@code workdir}
     */
    public Mono<SessionOptions> check(SessionOptions options) {
        if (!hostPaths || options.workdir().isEmpty()) {
            return Mono.just(options);
        }
        String asked = options.workdir().get();
        return Mono.fromCallable(() -> options.withWorkdir(resolve(asked).toString()))
                .subscribeOn(Schedulers.boundedElastic());
    }

    private Path resolve(String asked) {
        Path p;
        try {
            p = Path.of(asked);
        } catch (InvalidPathException e) {
            throw refused(asked);
        }
        for (Path part : p) {
            if (part.toString().equals("..")) {
                throw refused(asked);
            }
        }
        Path abs = p.isAbsolute() ? p : root.resolve(p);
        Path real;
        try {
            real = abs.toRealPath();
        } catch (IOException e) {
            throw refused(asked);
        }
        if (!real.startsWith(root) || !Files.isDirectory(real, LinkOption.NOFOLLOW_LINKS)) {
            throw refused(asked);
        }
        return real;
    }

    /**
     * Removes a root the server made itself (when it was given none), with whatever the sessions left in it; links in
     * it are removed, never followed. A part that cannot be removed is logged and left.
     *
     * @param made the directory the server made
     */
    public static void removeMade(Path made) {
        try {
            Files.walkFileTree(made, new SimpleFileVisitor<>() {
                @Override
                public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) throws IOException {
                    Files.deleteIfExists(file);
                    return FileVisitResult.CONTINUE;
                }

                @Override
                public FileVisitResult visitFileFailed(Path file, IOException e) throws IOException {
                    Files.deleteIfExists(file);
                    return FileVisitResult.CONTINUE;
                }

                @Override
                public FileVisitResult postVisitDirectory(Path dir, IOException e) throws IOException {
                    Files.deleteIfExists(dir);
                    return FileVisitResult.CONTINUE;
                }
            });
        } catch (NoSuchFileException e) {
            // removed already
        } catch (IOException e) {
            LOG.warn("could not remove the server's workdir root {}: {}", made, e.toString());
        }
    }

    private static InvalidArgumentException refused(String asked) {
        return new InvalidArgumentException(
                "workdir",
                "workdir must be an existing directory under the server's workdir root, got '" + asked + "'");
    }
}
