package dev.sandbox.local;

import dev.sandbox.BackgroundProcess;
import dev.sandbox.ExecOptions;
import dev.sandbox.SandboxSession;
import dev.sandbox.SessionOptions;
import dev.sandbox.implementation.process.ProcessLauncher;
import java.nio.file.Path;
import java.time.Duration;

/**
 * The JVM {@link LocalCrashCleanupTest} kills: it makes a local session with a background {@code sleep} and a
 * daemonised grandchild, prints what the test checks, then waits to be killed.
 */
public final class CrashingOwner {
    private CrashingOwner() {}

    public static void main(String[] args) throws Exception {
        Duration wait = Duration.ofSeconds(30);
        LocalSandboxProvider provider =
                LocalSandboxProvider.create(ProcessLauncher.best(), Path.of(args[0]), Path.of(args[1]));
        SandboxSession session = provider.create(SessionOptions.defaults()).block(wait);
        BackgroundProcess sleeper =
                session.start(ExecOptions.shell("exec sleep 600")).block(wait);
        String daemon = session.run(
                        ExecOptions.shell("setsid sh -c 'sleep 600; true' </dev/null >/dev/null 2>&1 & echo $!"))
                .block(wait)
                .stdout()
                .trim();
        System.out.println("workdir " + session.files().stat(".").block(wait).path());
        System.out.println("pid " + sleeper.pid().orElseThrow());
        System.out.println("pid " + daemon);
        System.out.println("ready");
        System.out.flush();
        Thread.sleep(Duration.ofMinutes(10)); // until the test kills this JVM with SIGKILL
    }
}
