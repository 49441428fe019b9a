package dev.sandbox.micrometer;

import dev.sandbox.SandboxProvider;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.observation.ObservationRegistry;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * Observes a provider's sessions through Micrometer: every {@code create}, {@code attach}, {@code exec}, {@code
 * run}, background {@code start}, file read, write, upload, download and list, and {@code destroy} becomes an
 * {@link io.micrometer.observation.Observation} (a timer with Micrometer's meter handler, a span with Micrometer
 * Tracing), and, given a {@link MeterRegistry}, counters of the output lines and bytes and the file bytes moved.
 * {@link SandboxObservationNames} lists every name and tag.
 *
 * <pre>{@code
 * SandboxProvider provider = SandboxObservations.observe(LocalSandboxProvider.create(), observationRegistry, meterRegistry);
 * provider.withSession(SessionOptions.defaults(), session -> session.run(ExecOptions.of("make", "test")))
 *         .blockLast(Duration.ofMinutes(5));
 * // timers sandbox.create, sandbox.run, sandbox.destroy; counter sandbox.output.bytes
 * }</pre>
 *
 * <p>Each observation is a child of the caller's current observation: the one in the subscriber's Reactor {@code
 * Context} (key {@code micrometer.observation}, where WebFlux puts the request's), else the registry's current one.
 * While an observed operation is served, the session id is in the Reactor {@code Context} and in the slf4j MDC
 * under {@value SandboxObservationNames#MDC_SESSION_ID}, and the caller's context (its trace id, MDC entries with a
 * registered accessor) is in the thread locals where the operation is started and subscribed, so the log lines of
 * the SDK carry both (see {@link SessionIdThreadLocalAccessor}).
 *
 * <p>Nothing is wrapped when there is nothing to record: with {@link ObservationRegistry#NOOP} and no meter
 * registry, {@code observe} returns the provider itself. Closing the observed provider closes the provider.
 */
public final class SandboxObservations {

    private SandboxObservations() {}

    /**
     * Observes the provider's sessions, without counters.
     *
     * @param provider the provider to observe
     * @param registry where observations go
     * @return a provider whose sessions are observed, or {@code provider} itself when {@code registry} is a no-op
     */
    public static SandboxProvider observe(SandboxProvider provider, ObservationRegistry registry) {
        return observe(provider, registry, null);
    }

    /**
     * Observes the provider's sessions and counts their output and file bytes. A provider that is already observed
     * is returned as it is.
     *
     * @param provider the provider to observe
     * @param registry where observations go
     * @param meters where the counters go, or {@code null} for none
     * @return a provider whose sessions are observed, or {@code provider} itself when there is nothing to record
     */
    public static SandboxProvider observe(
            SandboxProvider provider, ObservationRegistry registry, @Nullable MeterRegistry meters) {
        Objects.requireNonNull(provider, "provider");
        Objects.requireNonNull(registry, "registry");
        if (provider instanceof ObservedProvider || (registry.isNoop() && meters == null)) {
            return provider;
        }
        return new ObservedProvider(provider, new Instrumentation(registry, meters, provider.name()));
    }

    /**
     * Tells whether a provider is one {@link #observe} made.
     *
     * @param provider a provider
     * @return true when its sessions are observed
     */
    public static boolean isObserved(SandboxProvider provider) {
        return provider instanceof ObservedProvider;
    }
}
