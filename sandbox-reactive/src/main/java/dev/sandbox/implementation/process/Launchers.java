package dev.sandbox.implementation.process;

import com.sun.jna.Platform;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

final class Launchers {
    private static final Logger LOG = LoggerFactory.getLogger(Launchers.class);

    static final ProcessLauncher BEST = choose();

    private Launchers() {}

    private static ProcessLauncher choose() {
        String forced = System.getProperty("dev.sandbox.launcher", "");
        if (forced.equals("jdk")) {
            return new JdkLauncher();
        }
        if (Platform.isLinux() && Platform.is64Bit()) {
            try {
                return NativeLauncher.create();
            } catch (LinkageError | RuntimeException e) {
                if (forced.equals("native")) {
                    throw e;
                }
                LOG.warn("native process launcher unavailable, falling back to java.lang.Process: {}", e.toString());
            }
        }
        return new JdkLauncher();
    }
}
