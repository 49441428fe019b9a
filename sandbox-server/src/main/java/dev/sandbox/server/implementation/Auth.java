package dev.sandbox.server.implementation;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;

/**
 * Checks bearer tokens. Only the SHA-256 digest of the server's token is kept; a presented token is digested too and
 * the digests compared with {@link MessageDigest#isEqual}, whose time does not depend on where they differ (and,
 * digests being of one length, nothing about the token's length leaks either). Tokens are never logged.
 */
public final class Auth {
    private static final String PREFIX = "Bearer ";
    private final byte[] expected;

    /**
     * Creates the check.
     *
     * @param expectedDigest the SHA-256 digest of the server's token
     */
    public Auth(byte[] expectedDigest) {
        this.expected = expectedDigest.clone();
    }

    /**
     * Whether an {@code Authorization} header carries the token.
     *
     * @param header the header's value, or {@code null}
     * @return {@code true} when the token matches
     */
    public boolean accepts(String header) {
        String presented = header != null && header.regionMatches(true, 0, PREFIX, 0, PREFIX.length())
                ? header.substring(PREFIX.length()).trim()
                : "";
        byte[] digest = sha256(presented.getBytes(StandardCharsets.UTF_8));
        return MessageDigest.isEqual(expected, digest) && header != null;
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
