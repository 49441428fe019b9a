package dev.sandbox.implementation.process;

import java.nio.ByteBuffer;
import java.util.List;
import java.util.Map;
import org.reactivestreams.Publisher;

/**
 * A fully resolved command for a {@link ProcessLauncher}: the program's path, its argument vector, an existing
 * working directory and the complete environment.
 *
 * @param program the absolute path of the executable
 * @param argv the argument vector, {@code argv[0]} included
 * @param cwd the working directory
 * @param env the complete environment
 * @param stdin bytes for standard input, or {@code null} for {@code /dev/null}
 */
public record ProcessSpec(
        String program, List<String> argv, String cwd, Map<String, String> env, Publisher<ByteBuffer> stdin) {}
