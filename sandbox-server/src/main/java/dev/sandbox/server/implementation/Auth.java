package dev.sandbox.server.implementation;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Checks bearer tokens. Only the SHA-256 digests of the server's tokens are kept; a presented token is digested too and
 * compared with every one with {@link MessageDigest#isEqual}, whose time does not depend on where they differ (and,
 * digests being of one length, nothing about the token's length leaks either). Tokens are never logged.
 */
public final class Auth {
    private static final String PREFIX = "Bearer ";
    private final List<byte[]> digests = new ArrayList<>();
    private final List<Tenant> tenants = new ArrayList<>();

    /**
     * Creates the check.
     *
     * @param tokenDigests the SHA-256 digests of the server's tokens by name
     */
    public Auth(Map<String, byte[]> tokenDigests) {
        tokenDigests.forEach((name, digest) -> {
            digests.add(digest.clone());
            tenants.add(Tenant.of(name, digest));
        });
    }

    /**
     * The tenant whose token an {@code Authorization} header carries.
     *
     * @param header the header's value, or {@code null}
     * @return the tenant, or {@code null} when no token matches
     */
    public Tenant accept(String header) {
        if (header == null) {
            return null;
        }
        String presented = header.regionMatches(true, 0, PREFIX, 0, PREFIX.length())
                ? header.substring(PREFIX.length()).trim()
                : "";
        byte[] digest = sha256(presented.getBytes(StandardCharsets.UTF_8));
        Tenant match = null;
        for (int i = 0; i < digests.size(); i++) {
            if (MessageDigest.isEqual(digests.get(i), digest)) { // every digest compared: the time says nothing
                match = tenants.get(i);
            }
        }
        return match;
    }

    /**
     * The tenants, one per token.
     *
     * @return the tenants
     */
    public List<Tenant> tenants() {
        return List.copyOf(tenants);
    }

    /**
     * The SHA-256 digest of some bytes.
     *
     * @param bytes the bytes
     * @return the digest
     */
    public static byte[] sha256(byte[] bytes) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(bytes);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is missing from this JDK", e);
        }
    }
}
