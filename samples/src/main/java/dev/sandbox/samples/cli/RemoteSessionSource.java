package dev.sandbox.samples.cli;

import dev.sandbox.InvalidArgumentException;
import dev.sandbox.remote.RemoteSandboxProvider;

/**
 * Sessions on a sandbox server ({@code sandbox serve}), through the remote provider: they outlive the CLI, so every
 * command can use them, and a later command reaches a session by its id.
 */
final class RemoteSessionSource extends ProviderSessionSource {
    private RemoteSessionSource(RemoteSandboxProvider provider) {
        super(provider);
    }

    static RemoteSessionSource open(Provider settings) throws UsageException {
        return new RemoteSessionSource(provider(settings));
    }

    /** The remote provider the settings name, for a command that keeps it ({@code mcp}). */
    static RemoteSandboxProvider provider(Provider settings) throws UsageException {
        char[] token = TokenFile.read(settings.tokenFile());
        RemoteSandboxProvider.Builder builder;
        try {
            builder = RemoteSandboxProvider.builder().baseUrl(settings.url()).token(token);
        } finally {
            java.util.Arrays.fill(token, '\0');
        }
        if (settings.caCert() != null) {
            builder.trustedCertificates(settings.caCert());
        }
        try {
            return builder.build();
        } catch (InvalidArgumentException e) {
            // the library names its setting; the user gave a flag
            throw new UsageException(e.getMessage().replace("trustedCertificates", "--ca-cert"));
        }
    }
}
