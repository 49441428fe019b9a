package dev.sandbox.spring.boot.autoconfigure;

import dev.sandbox.InvalidArgumentException;
import dev.sandbox.SandboxProvider;
import dev.sandbox.remote.RemoteSandboxProvider;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import org.jspecify.annotations.Nullable;

/**
 * {@code sandbox.provider=remote}: the sessions of a sandbox server, reached at {@code sandbox.remote.url} with the
 * token in {@code sandbox.remote.token-file}; an {@code https} URL trusts the JVM's trust store, or the PEM file of
 * {@code sandbox.remote.trusted-certificates}. Loaded only when {@code sandbox-remote} is on the class path.
 */
final class RemoteProviderFactory implements SandboxProviderFactory {
    private static final String PREFIX = "sandbox.remote.";

    /** A token file larger than this is not a token. */
    private static final long MAX_TOKEN_FILE = 64 * 1024;

    @Override
    public String name() {
        return RemoteSandboxProvider.NAME;
    }

    @Override
    public SandboxProvider create(SandboxProperties properties) {
        SandboxProperties.Remote remote = properties.remote();
        String url = Settings.required(
                PREFIX + "url",
                remote.url(),
                "sandbox.provider=remote needs sandbox.remote.url, the server's base URL, such as"
                        + " http://127.0.0.1:7070");
        RemoteSandboxProvider.Builder builder = RemoteSandboxProvider.builder()
                .baseUrl(url)
                .connectTimeout(Settings.positive(PREFIX + "connect-timeout", remote.connectTimeout()))
                .responseTimeout(Settings.positive(PREFIX + "response-timeout", remote.responseTimeout()))
                .commandChannel(remote.commandChannel());
        if (remote.trustedCertificates() != null) {
            builder.trustedCertificates(remote.trustedCertificates());
        }
        char[] token = token(remote.tokenFile());
        try {
            builder.token(token);
        } finally {
            Arrays.fill(token, '\0');
        }
        try {
            return builder.build();
        } catch (InvalidArgumentException e) {
            throw e.field().equals("baseUrl")
                    ? new InvalidArgumentException(PREFIX + "url", PREFIX + "url: " + e.getMessage())
                    : Settings.renamed(PREFIX, e);
        }
    }

    /** The token in the file: its content without surrounding whitespace. */
    private static char[] token(@Nullable Path file) {
        String property = PREFIX + "token-file";
        if (file == null) {
            throw new InvalidArgumentException(
                    property, "sandbox.provider=remote needs sandbox.remote.token-file, the file holding the token");
        }
        byte[] bytes;
        try {
            if (Files.size(file) > MAX_TOKEN_FILE) {
                throw new InvalidArgumentException(
                        property, property + " '" + file + "' is larger than " + MAX_TOKEN_FILE + " bytes");
            }
            bytes = Files.readAllBytes(file);
        } catch (java.nio.file.NoSuchFileException e) {
            throw new InvalidArgumentException(property, property + " '" + file + "' was not found");
        } catch (java.nio.file.AccessDeniedException e) {
            throw new InvalidArgumentException(
                    property, "cannot read " + property + " '" + file + "': permission denied");
        } catch (IOException e) {
            throw new InvalidArgumentException(
                    property, "cannot read " + property + " '" + file + "': " + e.getMessage());
        }
        CharBuffer text = StandardCharsets.UTF_8.decode(ByteBuffer.wrap(bytes));
        Arrays.fill(bytes, (byte) 0);
        String token = text.toString().strip();
        Arrays.fill(text.array(), '\0');
        if (token.isEmpty()) {
            throw new InvalidArgumentException(property, property + " '" + file + "' is empty");
        }
        return token.toCharArray();
    }
}
