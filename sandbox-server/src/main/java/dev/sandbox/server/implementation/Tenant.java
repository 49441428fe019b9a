package dev.sandbox.server.implementation;

import java.nio.charset.StandardCharsets;
import java.util.HexFormat;
import java.util.Map;

/**
 * Whose request it is: the holder of one of the server's tokens. A tenant sees only the sessions it created through
 * the server, which carry its marker as the label {@link #LABEL}; the marker is derived from the token's digest, so it
 * is the same after a restart with the same token and says nothing about the token. Clients may neither set nor see
 * labels under {@link #RESERVED_PREFIX}.
 *
 * @param name the token's name (for logs; never the token)
 * @param marker the value of the tenant label on its sessions
 */
public record Tenant(String name, String marker) {
    /** The prefix of labels only the server sets. */
    public static final String RESERVED_PREFIX = "sandbox-server.";

    /** The label naming the tenant that created a session. */
    public static final String LABEL = RESERVED_PREFIX + "tenant";

    /**
     * The tenant of a token.
     *
     * @param name the token's name
     * @param tokenDigest the SHA-256 digest of the token
     * @return the tenant
     */
    public static Tenant of(String name, byte[] tokenDigest) {
        byte[] salt = "dev.sandbox.server tenant\0".getBytes(StandardCharsets.US_ASCII);
        byte[] input = new byte[salt.length + tokenDigest.length];
        System.arraycopy(salt, 0, input, 0, salt.length);
        System.arraycopy(tokenDigest, 0, input, salt.length, tokenDigest.length);
        byte[] d = Auth.sha256(input);
        return new Tenant(name, HexFormat.of().formatHex(d, 0, 16));
    }

    /**
     * Whether a session's labels say this tenant created it.
     *
     * @param labels the session's labels
     * @return {@code true} when it is this tenant's
     */
    public boolean owns(Map<String, String> labels) {
        return marker.equals(labels.get(LABEL));
    }

    /**
     * Labels as a client may see them: without the server's own.
     *
     * @param labels a session's labels
     * @return the labels without those under {@link #RESERVED_PREFIX}
     */
    public static Map<String, String> visible(Map<String, String> labels) {
        if (labels.keySet().stream().noneMatch(k -> k.startsWith(RESERVED_PREFIX))) {
            return labels;
        }
        java.util.LinkedHashMap<String, String> out = new java.util.LinkedHashMap<>();
        labels.forEach((k, v) -> {
            if (!k.startsWith(RESERVED_PREFIX)) {
                out.put(k, v);
            }
        });
        return out;
    }
}
