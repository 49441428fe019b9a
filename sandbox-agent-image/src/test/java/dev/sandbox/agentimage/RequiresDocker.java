package dev.sandbox.agentimage;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Marks a test class that needs a Docker daemon (through the {@code docker} CLI) and the test image
 * {@code sandbox-test:busybox}: skipped with instructions where there is none, failed when {@code CI=true}. See
 * {@link DockerCondition}.
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@ExtendWith(DockerCondition.class)
@interface RequiresDocker {}
