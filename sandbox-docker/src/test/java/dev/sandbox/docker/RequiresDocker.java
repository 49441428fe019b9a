package dev.sandbox.docker;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Marks a test class that needs a Docker daemon and the test image: skipped with instructions where there is none,
 * failed when {@code CI=true}. See {@link DockerCondition}.
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@ExtendWith(DockerCondition.class)
public @interface RequiresDocker {}
