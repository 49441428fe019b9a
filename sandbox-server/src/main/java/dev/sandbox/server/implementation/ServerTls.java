package dev.sandbox.server.implementation;

import dev.sandbox.InvalidArgumentException;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.file.AccessDeniedException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.Arrays;

/**
 * The server's TLS context, made from PEM files when the server starts: a bad file is refused then, naming the
 * setting, not at the first connection.
 */
public final class ServerTls {
    /** A PEM file larger than this is not a certificate chain nor a key. */
    private static final long MAX_PEM_BYTES = 1024 * 1024;

    private ServerTls() {}

    /**
     * Reads the certificate chain and the private key and makes the server context.
     *
     * @param certificateChain the PEM file of the server's certificate, followed by any intermediate ones
     * @param privateKey the PEM file of the certificate's private key, unencrypted PKCS#8 ({@code BEGIN PRIVATE KEY})
     * @return the context
     * @throws InvalidArgumentException naming {@code tlsCertificate} or {@code tlsKey} when a file cannot be read or
     *     used
     */
    public static SslContext serverContext(Path certificateChain, Path privateKey) {
        byte[] cert = read("tlsCertificate", certificateChain);
        byte[] key = read("tlsKey", privateKey);
        try {
            return SslContextBuilder.forServer(new ByteArrayInputStream(cert), new ByteArrayInputStream(key))
                    .build();
        } catch (IllegalArgumentException | IOException e) {
            String why = e.getMessage() == null ? "" : ": " + e.getMessage();
            boolean keyFault = why.toLowerCase(java.util.Locale.ROOT).contains("key");
            throw new InvalidArgumentException(
                    keyFault ? "tlsKey" : "tlsCertificate",
                    "cannot use tlsCertificate '" + certificateChain + "' with tlsKey '" + privateKey
                            + "' (a PEM certificate chain and its unencrypted PKCS#8 PEM private key)" + why);
        } finally {
            Arrays.fill(key, (byte) 0);
        }
    }

    private static byte[] read(String field, Path file) {
        try {
            if (Files.size(file) > MAX_PEM_BYTES) {
                throw new InvalidArgumentException(
                        field, field + " '" + file + "' is larger than " + MAX_PEM_BYTES + " bytes");
            }
            return Files.readAllBytes(file);
        } catch (NoSuchFileException e) {
            throw new InvalidArgumentException(field, field + " '" + file + "' was not found");
        } catch (AccessDeniedException e) {
            throw new InvalidArgumentException(field, "cannot read " + field + " '" + file + "': permission denied");
        } catch (IOException e) {
            throw new InvalidArgumentException(field, "cannot read " + field + " '" + file + "': " + e.getMessage());
        }
    }
}
