package dev.sandbox.samples.cli;

import picocli.CommandLine.Mixin;

/** A subcommand that works with sessions of the provider its {@link ProviderOptions} choose. */
abstract class SessionSubcommand extends Subcommand {
    @Mixin
    ProviderOptions providerOptions;

    /** The chosen provider, known after {@link #validate()}. */
    Provider provider;

    @Override
    void validate() {
        provider = providerOptions.provider();
    }

    /** The sessions of the chosen provider; closing it releases the provider. */
    SessionSource sessions() throws UsageException {
        return SessionSource.forProvider(provider);
    }
}
