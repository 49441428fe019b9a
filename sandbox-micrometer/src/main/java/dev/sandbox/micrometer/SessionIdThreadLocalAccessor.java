package dev.sandbox.micrometer;

import io.micrometer.context.ThreadLocalAccessor;
import org.slf4j.MDC;

/**
 * Carries the session id between the Reactor {@code Context} (key {@value SandboxObservationNames#SESSION_ID}) and
 * the slf4j MDC (key {@value SandboxObservationNames#MDC_SESSION_ID}), for Micrometer's context-propagation library.
 * It is registered by {@link java.util.ServiceLoader} in {@code ContextRegistry.getInstance()}: nothing to do for an
 * application that uses the global registry. With Reactor's automatic context propagation ({@code
 * Hooks.enableAutomaticContextPropagation()}, or {@code spring.reactor.context-propagation=auto} in Spring Boot),
 * every log line the SDK writes while serving an observed session's operation then names the session:
 *
 * <pre>{@code
 * <pattern>%d %-5level [%X{traceId}] [%X{sandbox.session.id}] %logger - %msg%n</pattern>
 * }</pre>
 */
public final class SessionIdThreadLocalAccessor implements ThreadLocalAccessor<String> {

    /** Creates the accessor; {@link java.util.ServiceLoader} does. */
    public SessionIdThreadLocalAccessor() {}

    @Override
    public Object key() {
        return SandboxObservationNames.SESSION_ID;
    }

    @Override
    public String getValue() {
        return MDC.get(SandboxObservationNames.MDC_SESSION_ID);
    }

    @Override
    public void setValue(String value) {
        MDC.put(SandboxObservationNames.MDC_SESSION_ID, value);
    }

    @Override
    public void setValue() {
        MDC.remove(SandboxObservationNames.MDC_SESSION_ID);
    }

    @Override
    public void restore(String previousValue) {
        setValue(previousValue);
    }

    @Override
    public void restore() {
        setValue();
    }
}
