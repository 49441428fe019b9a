package dev.sandbox.implementation.kubernetes;

import java.util.regex.Pattern;

/** Kubernetes' syntax of label keys and values, and of DNS names. */
public final class LabelSyntax {
    private static final Pattern NAME = Pattern.compile("[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?");
    private static final Pattern VALUE = Pattern.compile("([A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?");
    private static final Pattern DNS_SUBDOMAIN =
            Pattern.compile("[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*");
    private static final Pattern DNS_LABEL = Pattern.compile("[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?");

    private LabelSyntax() {}

    /**
     * Whether a label key is valid: an optional DNS-subdomain prefix and a slash, then a name of at most 63.
     *
     * @param key the key
     * @return true when Kubernetes accepts it
     */
    public static boolean validKey(String key) {
        if (key == null) {
            return false;
        }
        int slash = key.indexOf('/');
        if (slash < 0) {
            return NAME.matcher(key).matches();
        }
        return dnsSubdomain(key.substring(0, slash))
                && NAME.matcher(key.substring(slash + 1)).matches();
    }

    /**
     * Whether a label value is valid: at most 63 alphanumerics, '-', '_', '.', alphanumeric at both ends, or empty.
     *
     * @param value the value
     * @return true when Kubernetes accepts it
     */
    public static boolean validValue(String value) {
        return value != null && VALUE.matcher(value).matches();
    }

    /**
     * Whether a label key and value are both valid.
     *
     * @param key the key
     * @param value the value
     * @return true when Kubernetes accepts them
     */
    public static boolean valid(String key, String value) {
        return validKey(key) && validValue(value);
    }

    /**
     * Whether a name is a DNS subdomain (resource names, RuntimeClass names).
     *
     * @param name the name
     * @return true when valid
     */
    public static boolean dnsSubdomain(String name) {
        return name != null
                && name.length() <= 253
                && DNS_SUBDOMAIN.matcher(name).matches();
    }

    /**
     * Whether a name is a DNS label (namespaces).
     *
     * @param name the name
     * @return true when valid
     */
    public static boolean dnsLabel(String name) {
        return name != null && DNS_LABEL.matcher(name).matches();
    }
}
