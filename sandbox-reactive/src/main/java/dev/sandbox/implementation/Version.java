package dev.sandbox.implementation;

import java.io.IOException;
import java.io.InputStream;
import java.util.Properties;

/** The SDK's version, from the build. */
public final class Version {
    private static final String VERSION = load();

    private Version() {}

    /**
     * The version of this SDK, such as {@code 0.1.0}.
     *
     * @return the version, or {@code unknown} when the build did not record it
     */
    public static String get() {
        return VERSION;
    }

    private static String load() {
        try (InputStream in = Version.class.getResourceAsStream("/dev/sandbox/sandbox-version.properties")) {
            if (in == null) {
                return "unknown";
            }
            Properties p = new Properties();
            p.load(in);
            return p.getProperty("version", "unknown");
        } catch (IOException e) {
            return "unknown";
        }
    }
}
