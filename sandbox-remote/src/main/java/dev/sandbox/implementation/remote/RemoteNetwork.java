package dev.sandbox.implementation.remote;

import dev.sandbox.EgressReport;
import dev.sandbox.NetworkPolicy;
import dev.sandbox.SandboxNetwork;
import dev.sandbox.implementation.wire.NetworkBodies;
import io.netty.handler.codec.http.HttpMethod;
import java.util.Objects;
import reactor.core.publisher.Mono;

/**
 * A remote session's network: its egress proxy runs with the server's provider, and each call here is one request
 * to the server ({@code /v1/sessions/{id}/network}).
 */
final class RemoteNetwork implements SandboxNetwork {
    private final RemoteTransport t;
    private final String path;
    private final Runnable check;

    /**
     * @param t the transport
     * @param path the session's path
     * @param check throws once the handle was closed or its session destroyed
     */
    RemoteNetwork(RemoteTransport t, String path, Runnable check) {
        this.t = t;
        this.path = path + "/network";
        this.check = check;
    }

    @Override
    public Mono<NetworkPolicy> policy() {
        return Mono.defer(() -> {
            check.run();
            return t.call(HttpMethod.GET, path, null)
                    .switchIfEmpty(Mono.error(() -> RemoteErrors.protocol("the server sent no policy")))
                    .map(NetworkBodies.PolicyBody::policyOf);
        });
    }

    @Override
    public Mono<Void> update(NetworkPolicy policy) {
        Objects.requireNonNull(policy, "policy");
        return Mono.defer(() -> {
            check.run();
            return t.call(HttpMethod.PUT, path, NetworkBodies.PolicyBody.of(policy))
                    .then();
        });
    }

    @Override
    public Mono<EgressReport> report() {
        return Mono.defer(() -> {
            check.run();
            return t.call(HttpMethod.GET, path + "/report", null)
                    .switchIfEmpty(Mono.error(() -> RemoteErrors.protocol("the server sent no report")))
                    .map(NetworkBodies.ReportBody::reportOf);
        });
    }
}
