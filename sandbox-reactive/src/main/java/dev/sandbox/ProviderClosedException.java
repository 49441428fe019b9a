package dev.sandbox;

/**
 * The provider was closed ({@link SandboxProvider#close()} or {@link SandboxProvider#closeAsync()}); it creates,
 * attaches and lists nothing any more. Not retryable: make a new provider.
 *
 * <pre>{@code
 * provider.closeAsync().then(provider.create(options)) // fails with ProviderClosedException
 * }</pre>
 */
public class ProviderClosedException extends SandboxStateException {
    private static final long serialVersionUID = 1L;

    private final String provider;

    /**
     * Creates the exception.
     *
     * @param provider the provider's name, such as {@code local}
     */
    public ProviderClosedException(String provider) {
        super("the " + provider + " provider is closed");
        this.provider = provider;
    }

    /**
     * The name of the closed provider.
     *
     * @return the name, such as {@code docker}
     */
    public String provider() {
        return provider;
    }
}
