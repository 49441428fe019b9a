package dev.sandbox.spring.boot.autoconfigure;

import dev.sandbox.InvalidArgumentException;
import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/**
 * Turns an {@link InvalidArgumentException} that stopped the application's start into Boot's "APPLICATION FAILED TO
 * START" report, naming the setting and saying what is wrong with it:
 *
 * <pre>{@code
 * ***************************
 * APPLICATION FAILED TO START
 * ***************************
 *
 * Description:
 *
 * The value of 'sandbox.provider' cannot be used: sandbox.provider must be one of [docker, kubernetes, local, remote], got 'firecracker'
 *
 * Action:
 *
 * Change 'sandbox.provider' in the application's configuration (application.properties or .yaml, an environment
 * variable such as SANDBOX_PROVIDER, or a --sandbox.provider=... argument).
 * }</pre>
 *
 * <p>Registered in {@code META-INF/spring.factories}; Boot creates it.
 */
public final class InvalidSandboxSettingFailureAnalyzer extends AbstractFailureAnalyzer<InvalidArgumentException> {

    /** Created by Spring Boot. */
    public InvalidSandboxSettingFailureAnalyzer() {}

    @Override
    protected FailureAnalysis analyze(Throwable rootFailure, InvalidArgumentException cause) {
        String field = cause.field();
        String description = "The value of '" + field + "' cannot be used: " + cause.getMessage();
        String action = isProperty(field)
                ? "Change '" + field + "' in the application's configuration (application.properties or .yaml, an"
                        + " environment variable such as " + environmentName(field) + ", or a --" + field
                        + "=... argument)."
                : "Correct '" + field + "' where the application sets it.";
        return new FailureAnalysis(description, action, cause);
    }

    /** Whether the field names a configuration property rather than an argument of some call. */
    private static boolean isProperty(String field) {
        return field.contains(".");
    }

    /** The environment variable Boot binds to a property: {@code sandbox.docker.image} is {@code SANDBOX_DOCKER_IMAGE}. */
    private static String environmentName(String property) {
        return property.replaceAll("\\[(\\d+)]", "_$1")
                .replace('.', '_')
                .replace("-", "")
                .toUpperCase(java.util.Locale.ROOT);
    }
}
