package dev.sandbox.samples.quickstart;

import dev.sandbox.ExecEvent;
import dev.sandbox.ExecOptions;
import dev.sandbox.SessionOptions;
import dev.sandbox.local.LocalSandboxProvider;
import java.time.Duration;

/**
 * The reactive quick start shown in the README: run a command in a sandbox and print each line as it is written,
 * then the exit code. The README shows the part of {@link #main} between its tag comments, and a test checks that
 * the README still matches it.
 *
 * <pre>{@code
 * java --enable-native-access=ALL-UNNAMED -cp samples/target/webflux-demo.jar \
 *     -Dloader.main=dev.sandbox.samples.quickstart.ReactiveQuickStart \
 *     org.springframework.boot.loader.launch.PropertiesLauncher
 * }</pre>
 */
public final class ReactiveQuickStart {
    private ReactiveQuickStart() {}

    /**
     * Runs the quick start.
     *
     * @param args ignored
     */
    public static void main(String[] args) {
        // tag::quickstart[]
        try (LocalSandboxProvider provider = LocalSandboxProvider.create()) {
            ExecOptions command = ExecOptions.shell("echo hello; sleep 1; echo oops >&2; exit 3");
            provider.withSession(SessionOptions.defaults(), session -> session.exec(command))
                    .doOnNext(event -> {
                        switch (event) {
                            case ExecEvent.Stdout out -> System.out.println("stdout: " + out.text());
                            case ExecEvent.Stderr err -> System.out.println("stderr: " + err.text());
                            case ExecEvent.Chunk chunk -> {} // only with ExecOptions.withByteOutput(true)
                            case ExecEvent.Exit exit -> System.out.println("exit " + exit.code());
                        }
                    })
                    .blockLast(Duration.ofSeconds(30));
        }
        // end::quickstart[]
    }
}
