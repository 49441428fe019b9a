package dev.sandbox;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.List;

/**
 * How the host resolves the names a sandbox asks its egress proxy for (see {@link NetworkPolicy}). The default is the
 * host's own resolver; a test or a service with its own DNS view sets another. Called on a virtual thread, with a
 * timeout; every address it returns is checked against the policy before one is dialled, and only checked addresses
 * are dialled (no second lookup a changed answer could slip through).
 *
 * <pre>{@code
 * NameResolver fixed = host -> host.equals("mirror.internal")
 *     ? List.of(InetAddress.getByName("10.1.2.3"))
 *     : NameResolver.system().resolve(host);
 * }</pre>
 */
@FunctionalInterface
public interface NameResolver {

    /**
     * Resolves a host name.
     *
     * @param host the name, as the sandbox asked for it
     * @return its addresses, in the order to try them; empty or an exception when it has none
     * @throws UnknownHostException when the name does not resolve
     */
    List<InetAddress> resolve(String host) throws UnknownHostException;

    /**
     * The host's resolver ({@link InetAddress#getAllByName}).
     *
     * @return the resolver
     */
    static NameResolver system() {
        return SystemResolver.INSTANCE;
    }
}

/** The host's resolver, one instance so that policies using it compare equal. */
enum SystemResolver implements NameResolver {
    INSTANCE;

    @Override
    public List<InetAddress> resolve(String host) throws UnknownHostException {
        return List.of(InetAddress.getAllByName(host));
    }

    @Override
    public String toString() {
        return "system";
    }
}
