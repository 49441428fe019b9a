package dev.sandbox.spring.boot.autoconfigure;

import dev.sandbox.InvalidArgumentException;
import dev.sandbox.SandboxProvider;
import dev.sandbox.local.LocalSandboxProvider;
import java.nio.file.Files;
import java.nio.file.Path;

/** {@code sandbox.provider=local}: processes of this host, with workdirs under {@code sandbox.local.temp-root}. */
final class LocalProviderFactory implements SandboxProviderFactory {

    @Override
    public String name() {
        return LocalSandboxProvider.NAME;
    }

    @Override
    public SandboxProvider create(SandboxProperties properties) {
        Path root = properties.local().tempRoot();
        if (root == null) {
            return LocalSandboxProvider.create();
        }
        if (!Files.isDirectory(root)) {
            throw new InvalidArgumentException(
                    "sandbox.local.temp-root",
                    "sandbox.local.temp-root must be an existing directory, got '" + root + "'");
        }
        return LocalSandboxProvider.create(root);
    }
}
