package dev.sandbox.samples.cli;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;

/**
 * The {@code sandbox.jar}'s entry point: checks that the JVM is new enough for the CLI, then hands over to {@link
 * SandboxCli#main}. It is compiled for Java 8 (its own compiler execution in the samples' {@code pom.xml}), so that an
 * older {@code java} runs it and says what to do, instead of failing with {@code UnsupportedClassVersionError} on the
 * CLI's own classes. It names the CLI only by string, and must not use anything newer than Java 8.
 */
public final class Launcher {
    /** The oldest Java the CLI runs on: the release the rest of the project is compiled for. */
    static final int REQUIRED = 21;

    /** The exit code for a JVM that is too old: a usage error, as the CLI's own. */
    static final int EXIT_TOO_OLD = 2;

    private static final String CLI = "dev.sandbox.samples.cli.SandboxCli";

    private Launcher() {}

    /**
     * Runs the CLI, or exits 2 with what to do when this Java is older than {@link #REQUIRED}.
     *
     * @param args the command line
     * @throws Throwable whatever the CLI throws
     */
    public static void main(String[] args) throws Throwable {
        int feature = feature(System.getProperty("java.specification.version", ""));
        // a version this cannot read is left to the JVM: the CLI's classes load, or fail to, as they would anyway
        if (feature > 0 && feature < REQUIRED) {
            System.err.println(tooOld(
                    System.getProperty("java.version", String.valueOf(feature)), System.getProperty("java.home")));
            System.exit(EXIT_TOO_OLD);
            return;
        }
        MethodHandle main = MethodHandles.publicLookup()
                .findStatic(Class.forName(CLI), "main", MethodType.methodType(void.class, String[].class));
        main.invokeExact(args);
    }

    /**
     * The message for a Java that is too old.
     *
     * @param version the {@code java.version} property, such as 17.0.18
     * @param home the {@code java.home} property, or {@code null}
     * @return what is wrong and how to fix it
     */
    static String tooOld(String version, String home) {
        return "sandbox needs Java " + REQUIRED + " or newer; this is Java " + version
                + (home == null ? "" : " (" + home + ")") + ".\n"
                + "Set JAVA_HOME to a JDK " + REQUIRED + " or newer and run \"$JAVA_HOME/bin/java\" -jar sandbox.jar"
                + " (the README's sandbox wrapper does), or put that JDK's bin first on PATH.";
    }

    /**
     * The feature release in {@code java.specification.version}: 8 for {@code 1.8}, 17 for {@code 17}.
     *
     * @param specification the property's value
     * @return the release, or 0 when it cannot be read
     */
    static int feature(String specification) {
        String major = specification.startsWith("1.") ? specification.substring(2) : specification;
        int end = 0;
        while (end < major.length() && Character.isDigit(major.charAt(end))) {
            end++;
        }
        try {
            return end == 0 ? 0 : Integer.parseInt(major.substring(0, end));
        } catch (NumberFormatException e) {
            return 0;
        }
    }
}
