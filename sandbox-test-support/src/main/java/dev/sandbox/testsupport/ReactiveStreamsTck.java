package dev.sandbox.testsupport;

import java.lang.annotation.Annotation;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.testng.SkipException;
import org.testng.annotations.AfterClass;
import org.testng.annotations.AfterMethod;
import org.testng.annotations.BeforeClass;
import org.testng.annotations.BeforeMethod;
import org.testng.annotations.Test;

/**
 * Runs a Reactive Streams TCK verification ({@code PublisherVerification}, {@code SubscriberWhiteboxVerification},
 * ...: TestNG classes) as JUnit dynamic tests, one per rule, so a module checks its hand-written publishers and
 * subscriptions in its own JUnit run:
 *
 * <pre>{@code
 * @TestFactory
 * Stream<DynamicTest> tck() {
 *     return ReactiveStreamsTck.rules(new StdinChannelVerification(), Map.of(
 *             "optional_spec104_mustSignalOnErrorWhenFails", "stdin never fails by itself"));
 * }
 * }</pre>
 *
 * <p>A rule the TCK cannot verify for this publisher (it throws TestNG's {@code SkipException}) fails the test unless
 * it is listed with the reason; a listed rule that the TCK does verify fails too, so the list cannot go stale. The
 * {@code untested_} rules, which the TCK declares it cannot test at all, are not run.
 */
public final class ReactiveStreamsTck {
    private ReactiveStreamsTck() {}

    /**
     * The verification's rules as dynamic tests.
     *
     * @param verification a TCK verification instance
     * @param notVerified the rules the TCK cannot verify for this publisher, each with the reason
     * @return one test per rule, then one that runs the verification's after-class methods
     */
    public static Stream<DynamicTest> rules(Object verification, Map<String, String> notVerified) {
        List<Method> rules = new ArrayList<>();
        Set<String> names = new TreeSet<>();
        for (Method m : verification.getClass().getMethods()) {
            if (m.isAnnotationPresent(Test.class) && !m.getName().startsWith("untested_")) {
                rules.add(m);
                names.add(m.getName());
            }
        }
        rules.sort(Comparator.comparing(Method::getName));
        Set<String> unknown = new TreeSet<>(notVerified.keySet());
        unknown.removeAll(names);
        if (!unknown.isEmpty()) {
            throw new IllegalArgumentException(
                    "not rules of " + verification.getClass().getName() + ": " + unknown);
        }
        invokeAll(verification, BeforeClass.class);
        Stream<DynamicTest> tests = rules.stream()
                .map(rule -> DynamicTest.dynamicTest(rule.getName(), () -> run(verification, rule, notVerified)));
        return Stream.concat(
                tests,
                Stream.of(DynamicTest.dynamicTest("after all rules", () -> invokeAll(verification, AfterClass.class))));
    }

    private static void run(Object verification, Method rule, Map<String, String> notVerified) throws Throwable {
        String reason = notVerified.get(rule.getName());
        invokeAll(verification, BeforeMethod.class);
        try {
            rule.invoke(verification);
        } catch (InvocationTargetException e) {
            if (e.getCause() instanceof SkipException skip) {
                if (reason != null) {
                    return; // not verifiable here, for the reason given
                }
                throw new AssertionError(
                        "the TCK could not verify " + rule.getName() + ": " + skip.getMessage()
                                + " (list it with the reason if that is right)",
                        skip);
            }
            throw e.getCause();
        } finally {
            invokeAll(verification, AfterMethod.class);
        }
        if (reason != null) {
            throw new AssertionError(rule.getName() + " is listed as not verifiable (" + reason
                    + "), but the TCK verified it: take it off the list");
        }
    }

    private static void invokeAll(Object target, Class<? extends Annotation> annotation) {
        for (Method m : target.getClass().getMethods()) {
            if (m.isAnnotationPresent(annotation)) {
                try {
                    m.invoke(target);
                } catch (IllegalAccessException e) {
                    throw new IllegalStateException(e);
                } catch (InvocationTargetException e) {
                    throw new IllegalStateException(
                            m.getName() + " of " + target.getClass().getName() + " failed", e.getCause());
                }
            }
        }
    }
}
