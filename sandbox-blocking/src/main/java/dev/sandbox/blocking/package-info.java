/**
 * A blocking facade over the reactive sandbox API, for code that does not use Reactor: {@link
 * dev.sandbox.blocking.SandboxClient} and its sub-clients ({@code process()}, {@code files()}, {@code pty()}) wait
 * for each operation with a timeout, honour interrupts and throw the SDK's exceptions unchanged. Operations have the
 * names they have in the reactive API. No Reactor type appears in this package's public API.
 *
 * <pre>{@code
 * try (SandboxClient client = SandboxClient.local()) {
 *     ExecResult result = client.process().run(ExecOptions.shell("echo hello"));
 *     BackgroundProcessHandle server = client.process().start(ExecOptions.of("python3", "-m", "http.server"));
 *     client.files().upload(Path.of("site.zip"), "site.zip", (done, total) -> System.out.println(done + "/" + total));
 *     PtySessionHandle shell = client.pty().open(PtyOptions.shell());
 * }
 * }</pre>
 *
 * <p>Nullness: every type in this package is non-null unless annotated {@link org.jspecify.annotations.Nullable}
 * ({@link org.jspecify.annotations.NullMarked}); NullAway checks it when the SDK is built.
 */
@NullMarked
package dev.sandbox.blocking;

import org.jspecify.annotations.NullMarked;
