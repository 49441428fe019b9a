package dev.sandbox.mcp.implementation;

import io.modelcontextprotocol.json.TypeRef;
import io.modelcontextprotocol.spec.McpSchema;
import io.modelcontextprotocol.spec.McpServerSession;
import io.modelcontextprotocol.spec.McpServerTransport;
import io.modelcontextprotocol.spec.McpServerTransportProvider;
import java.util.List;
import reactor.core.publisher.Mono;

/**
 * The SDK's stdio transport with its outgoing messages handed over one at a time. Its outgoing queue takes one
 * producer at once and refuses a message offered while another thread offers one; tool results and progress
 * notifications of calls running at once come from several threads (a provider's event loops), so each offer is
 * made under a lock here.
 */
public final class SerializedStdio implements McpServerTransportProvider {
    private final McpServerTransportProvider delegate;

    /**
     * Wraps a transport provider.
     *
     * @param delegate the SDK's stdio transport provider
     */
    public SerializedStdio(McpServerTransportProvider delegate) {
        this.delegate = delegate;
    }

    @Override
    public void setSessionFactory(McpServerSession.Factory sessionFactory) {
        delegate.setSessionFactory(transport -> sessionFactory.create(new Serialized(transport)));
    }

    @Override
    public Mono<Void> notifyClients(String method, Object params) {
        return delegate.notifyClients(method, params);
    }

    @Override
    public Mono<Void> notifyClient(String sessionId, String method, Object params) {
        return delegate.notifyClient(sessionId, method, params);
    }

    @Override
    public Mono<Void> closeGracefully() {
        return delegate.closeGracefully();
    }

    @Override
    public void close() {
        delegate.close();
    }

    @Override
    public List<String> protocolVersions() {
        return delegate.protocolVersions();
    }

    private static final class Serialized implements McpServerTransport {
        private final McpServerTransport transport;

        Serialized(McpServerTransport transport) {
            this.transport = transport;
        }

        @Override
        public Mono<Void> sendMessage(McpSchema.JSONRPCMessage message) {
            return Mono.defer(() -> {
                // subscribing offers the message (the transport is ready once serving): offer under the lock
                synchronized (this) {
                    return Mono.fromFuture(transport.sendMessage(message).toFuture());
                }
            });
        }

        @Override
        public <T> T unmarshalFrom(Object data, TypeRef<T> typeRef) {
            return transport.unmarshalFrom(data, typeRef);
        }

        @Override
        public Mono<Void> closeGracefully() {
            return transport.closeGracefully();
        }

        @Override
        public void close() {
            transport.close();
        }

        @Override
        public List<String> protocolVersions() {
            return transport.protocolVersions();
        }
    }
}
