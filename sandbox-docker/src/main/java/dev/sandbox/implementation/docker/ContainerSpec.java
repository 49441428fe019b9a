package dev.sandbox.implementation.docker;

import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * What a session's container is made of.
 *
 * @param name the container name
 * @param image the image reference
 * @param entrypoint the main process (the agent)
 * @param cmd its arguments
 * @param env {@code NAME=value} entries
 * @param labels every label, internal ones included
 * @param workdir the working directory or {@code null}
 * @param user the user or {@code null}
 * @param nanoCpus CPU limit in billionths of a CPU, or {@code null}
 * @param memory memory limit in bytes, or {@code null}
 * @param pids process limit, or {@code null}
 * @param network {@code none} or {@code bridge}
 * @param runtime {@code runc} or {@code runsc}
 * @param capabilities the capabilities kept; every other one is dropped
 * @param readOnlyRoot whether the root file system is read-only
 * @param writableDirs directories that get an anonymous volume of their own (removed with the container)
 * @param diskLimit the writable layer's size limit in bytes, or {@code null}
 */
public record ContainerSpec(
        String name,
        String image,
        List<String> entrypoint,
        List<String> cmd,
        List<String> env,
        Map<String, String> labels,
        String workdir,
        String user,
        Long nanoCpus,
        Long memory,
        Long pids,
        String network,
        String runtime,
        Set<String> capabilities,
        boolean readOnlyRoot,
        List<String> writableDirs,
        Long diskLimit) {
    /**
     * The same container with another entrypoint.
     *
     * @param entrypoint the entrypoint and its arguments
     * @return the new spec
     */
    public ContainerSpec withEntrypoint(List<String> entrypoint) {
        return new ContainerSpec(
                name,
                image,
                List.copyOf(entrypoint),
                cmd,
                env,
                labels,
                workdir,
                user,
                nanoCpus,
                memory,
                pids,
                network,
                runtime,
                capabilities,
                readOnlyRoot,
                writableDirs,
                diskLimit);
    }
}
