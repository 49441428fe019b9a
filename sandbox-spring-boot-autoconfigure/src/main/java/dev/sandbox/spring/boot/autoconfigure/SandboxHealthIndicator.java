package dev.sandbox.spring.boot.autoconfigure;

import dev.sandbox.SandboxProvider;
import dev.sandbox.SessionInfo;
import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.TimeoutException;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.ReactiveHealthIndicator;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * The health of the application's provider, as the actuator's {@code sandbox} component: the provider is asked for a
 * list of sessions (the application's own, through a {@link ManagedSandboxProvider}), which reaches the Docker daemon or
 * the sandbox server, waiting at most {@code sandbox.health-timeout}. Up with the provider's name and the number of
 * sessions the application holds; down with the provider's name and the reason when the call fails or does not answer
 * in time. It never blocks a thread.
 *
 * <pre>{@code
 * {"status":"UP","details":{"provider":"docker","sessions":3}}
 * {"status":"DOWN","details":{"provider":"remote","error":"dev.sandbox.BackendException: ... Connection refused"}}
 * }</pre>
 */
public final class SandboxHealthIndicator implements ReactiveHealthIndicator {
    /** Matches no session: what an unmanaged provider is asked for. */
    private static final Map<String, String> NO_SESSION = Map.of("spring.sandbox.health", "probe");

    private final SandboxProvider provider;
    private final Duration timeout;

    /**
     * A health indicator for {@code provider}.
     *
     * @param provider the provider to ask
     * @param timeout how long to wait for its answer
     */
    public SandboxHealthIndicator(SandboxProvider provider, Duration timeout) {
        this.provider = Objects.requireNonNull(provider, "provider");
        this.timeout = Objects.requireNonNull(timeout, "timeout");
    }

    /**
     * Asks the provider.
     *
     * @return up with {@code provider} and {@code sessions}, or down with {@code provider} and {@code error}
     */
    @Override
    public Mono<Health> health() {
        String name = provider.name();
        // deferred: a provider that refuses at once (closed, misconfigured) is reported down like one that fails later
        Flux<SessionInfo> probe = Flux.defer(() ->
                provider instanceof ManagedSandboxProvider managed ? managed.sessions() : provider.list(NO_SESSION));
        return probe.count()
                .timeout(timeout)
                .map(sessions -> {
                    Health.Builder up = Health.up().withDetail("provider", name);
                    return (provider instanceof ManagedSandboxProvider ? up.withDetail("sessions", sessions) : up)
                            .build();
                })
                .onErrorResume(e -> Mono.just(Health.down()
                        .withDetail("provider", name)
                        .withDetail(
                                "error",
                                e instanceof TimeoutException
                                        ? "the provider did not answer within " + timeout
                                        : e.getClass().getName() + ": " + e.getMessage())
                        .build()));
    }
}
