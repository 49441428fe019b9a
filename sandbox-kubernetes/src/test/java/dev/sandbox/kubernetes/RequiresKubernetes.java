package dev.sandbox.kubernetes;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.junit.jupiter.api.extension.ExtendWith;

/** The test class needs a Kubernetes cluster (KUBECONFIG), its Docker daemon and the test images. */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@ExtendWith(KubernetesCondition.class)
public @interface RequiresKubernetes {}
