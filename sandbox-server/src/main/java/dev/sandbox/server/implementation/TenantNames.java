package dev.sandbox.server.implementation;

import dev.sandbox.SessionOptions;
import java.nio.charset.StandardCharsets;
import java.util.HexFormat;
import java.util.Map;

/**
 * Session names per tenant. A tenant names a session as it likes ({@link SessionOptions#withName(String)}); the
 * server's provider gets another name, {@code t} and 32 hex digits of a digest of the tenant's marker and the
 * tenant's name, so that two tenants' sessions of one name are two names at the provider (neither can take the
 * other's, nor find it) while the provider still makes each one atomic. The tenant's own name travels with the
 * session as the label {@link #LABEL} (a server label: clients neither set nor see it) and is what the tenant sees.
 * The inner name is 33 characters: a valid session name on every provider.
 */
final class TenantNames {
    /** The label holding the name the tenant gave. */
    static final String LABEL = Tenant.RESERVED_PREFIX + "name";

    private TenantNames() {}

    /**
     * The name the server's provider knows a tenant's session by.
     *
     * @param tenant whose session
     * @param name the tenant's name for it, already valid
     * @return the provider's name for it
     */
    static String inner(Tenant tenant, String name) {
        byte[] d = Auth.sha256(
                ("dev.sandbox.server name\0" + tenant.marker() + "\0" + name).getBytes(StandardCharsets.UTF_8));
        return "t" + HexFormat.of().formatHex(d, 0, 16);
    }

    /**
     * The name a tenant gave a session, from its labels.
     *
     * @param labels the session's labels as the provider has them
     * @return the name, or {@code null} for an unnamed session
     */
    static String of(Map<String, String> labels) {
        return labels.get(LABEL);
    }
}
