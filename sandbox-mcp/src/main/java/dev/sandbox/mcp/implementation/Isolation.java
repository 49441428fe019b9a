package dev.sandbox.mcp.implementation;

/**
 * What isolation a provider's sessions give, in words a model reads in the tools' descriptions: a model deciding what
 * to run must not be told that host processes are isolated.
 */
public final class Isolation {
    private Isolation() {}

    /**
     * What a session of the provider is, as one sentence for a tool description.
     *
     * @param providerName the provider's {@code name()}: local, docker, remote or another
     * @return the description
     */
    public static String of(String providerName) {
        return switch (providerName) {
            case "local" ->
                "a working directory on the server's host: commands run as host processes of the server's user, with"
                        + " NO isolation (they can read and change whatever that user can, and reach its network)";
            case "docker" ->
                "a Docker container of its own: its own filesystem and processes, resource limits, and no network"
                        + " unless the server allows it";
            case "remote" -> "a session on a remote sandbox server: its isolation is what that server's provider gives";
            default ->
                "a session of the '" + Escape.line(providerName) + "' provider: this server does not know what"
                        + " isolation it gives";
        };
    }
}
