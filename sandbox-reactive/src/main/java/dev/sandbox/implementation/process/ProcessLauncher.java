package dev.sandbox.implementation.process;

import dev.sandbox.ProcessLaunchException;

/** Starts host processes. Two implementations: {@link NativeLauncher} (Linux, epoll) and {@link JdkLauncher}. */
public interface ProcessLauncher {

    /**
     * A short name reported in session status, such as {@code native-epoll}.
     *
     * @return the name
     */
    String name();

    /**
     * Starts a process in its own process group. Blocks briefly (the spawn itself); call it off non-blocking
     * threads.
     *
     * @param spec what to start
     * @return the running process
     * @throws ProcessLaunchException when it cannot be started
     */
    SpawnedProcess spawn(ProcessSpec spec);

    /**
     * Starts a process on a new pseudo-terminal, as the leader of a new session. Its output arrives as stdout;
     * stdin writes go to the terminal.
     *
     * @param spec what to start (its stdin publisher feeds the terminal)
     * @param cols terminal columns
     * @param rows terminal rows
     * @return the running process
     * @throws dev.sandbox.UnsupportedFeatureException when the launcher has no PTYs
     */
    default SpawnedProcess spawnPty(ProcessSpec spec, int cols, int rows) {
        throw new dev.sandbox.UnsupportedFeatureException("local (" + name() + " launcher)", "PTYs");
    }

    /**
     * The best launcher for this platform: native on Linux when JNA loads, the JDK's otherwise. The system property
     * {@code dev.sandbox.launcher} ({@code native} or {@code jdk}) forces a choice.
     *
     * @return the launcher
     */
    static ProcessLauncher best() {
        return Launchers.BEST;
    }

    /**
     * The portable launcher on {@link java.lang.Process}, whatever the platform.
     *
     * @return the JDK launcher
     */
    static ProcessLauncher jdk() {
        return new JdkLauncher();
    }
}
