package dev.sandbox;

/**
 * The provider does not support the requested operation, for example restoring a snapshot on the local provider.
 *
 * <pre>{@code
 * provider.restore("snap-1", options)
 *     .onErrorResume(UnsupportedFeatureException.class, e -> provider.create(options));
 * }</pre>
 */
public class UnsupportedFeatureException extends SandboxException {
    private static final long serialVersionUID = 1L;

    /**
     * Creates the exception.
     *
     * @param provider the provider's name
     * @param feature the operation it lacks
     */
    public UnsupportedFeatureException(String provider, String feature) {
        super("the " + provider + " provider does not support " + feature);
    }
}
