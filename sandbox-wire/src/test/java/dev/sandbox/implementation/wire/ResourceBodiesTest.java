package dev.sandbox.implementation.wire;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sandbox.BackendException;
import dev.sandbox.ExecEvent;
import dev.sandbox.ExecResult;
import dev.sandbox.FileInfo;
import dev.sandbox.ProcessInfo;
import dev.sandbox.SessionEndReason;
import dev.sandbox.SessionInfo;
import dev.sandbox.SessionStatus;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * Resource bodies: what the server answers comes back equal on the client, in the exact JSON the hand-written
 * encoder wrote (the expected strings are its output), and an answer that does not fit fails naming the field and the
 * value.
 */
class ResourceBodiesTest {
    private static final Instant T = Instant.parse("2026-01-02T03:04:05.123456789Z");

    private static String json(Object body) {
        return new String(WireJson.bytes(body), StandardCharsets.UTF_8);
    }

    /** What the client does with an answer: read it leniently, bind it. */
    private static <T extends Record> T read(String json, Class<T> type) {
        return ResourceBodies.read(WireJson.lenient(json.getBytes(StandardCharsets.UTF_8)), type);
    }

    /**
     * An answer of JSON {@code null}, or of blanks only, is no record: a {@link dev.sandbox.BackendException} naming the
     * type, not a {@code null} the client then dereferences (WireDecodersFuzzTest found the blank answer).
     */
    @Test
    void aNullOrBlankAnswerIsABackendError() {
        for (String answer : new String[] {"null", "\n"}) {
            assertThatThrownBy(() -> read(answer, ResourceBodies.SessionInfoBody.class))
                    .isInstanceOf(dev.sandbox.BackendException.class)
                    .hasMessageStartingWith(
                            "the sandbox server sent a SessionInfoBody that cannot be read: body must be"
                                    + " a JSON object, got ");
        }
    }

    @Test
    void runResultsAndExitsRoundTrip() {
        ExecResult r = new ExecResult(
                3,
                "out\n",
                "é\"err",
                true,
                false,
                10,
                20,
                ExecEvent.Termination.TIMED_OUT,
                Duration.ofNanos(123456789));
        String wire = json(ResourceBodies.ExecResultBody.of(r));
        assertThat(wire)
                .isEqualTo("{\"exitCode\":3,\"stdout\":\"out\\n\",\"stderr\":\"é\\\"err\",\"stdoutTruncated\":true,"
                        + "\"stderrTruncated\":false,\"stdoutBytes\":10,\"stderrBytes\":20,\"termination\":\"TIMED_OUT\","
                        + "\"durationNanos\":123456789}");
        // read by hand on the client (the hot path of every remote run)
        assertThat(ResourceBodies.execResult(WireJson.lenient(wire.getBytes(StandardCharsets.UTF_8))))
                .isEqualTo(r);
        assertThat(read(wire, ResourceBodies.ExecResultBody.class)).isEqualTo(ResourceBodies.ExecResultBody.of(r));

        ExecEvent.Exit exit = new ExecEvent.Exit(137, ExecEvent.Termination.SIGNALED, Duration.ofNanos(42));
        String exitWire = json(ResourceBodies.ExitBody.of(exit));
        assertThat(exitWire)
                .isEqualTo("{\"type\":\"exit\",\"code\":137,\"termination\":\"SIGNALED\",\"durationNanos\":42}")
                .isEqualTo(new String(StreamFrames.event(exit), StandardCharsets.UTF_8));
        assertThat(read(exitWire, ResourceBodies.ExitBody.class).exit()).isEqualTo(exit);
    }

    @Test
    void sessionsRoundTrip() {
        SessionStatus running = new SessionStatus(
                "s-1",
                "running",
                "0.1.0",
                1234,
                T,
                1,
                2,
                3,
                "local",
                "posix_spawn",
                T.plusSeconds(60),
                Duration.ofMillis(1500),
                null);
        String wire = json(ResourceBodies.SessionStatusBody.of(running));
        assertThat(wire)
                .isEqualTo(
                        "{\"sessionId\":\"s-1\",\"status\":\"running\",\"version\":\"0.1.0\",\"uptimeMs\":1234,"
                                + "\"lastActivity\":\"2026-01-02T03:04:05.123456789Z\",\"execsRunning\":1,\"ptysRunning\":2,"
                                + "\"ptysAttached\":3,\"provider\":\"local\",\"processLauncher\":\"posix_spawn\","
                                + "\"expiresAt\":\"2026-01-02T03:05:05.123456789Z\",\"idleTimeoutMs\":1500,\"endReason\":null}");
        // the client reports its own provider name
        assertThat(read(wire, ResourceBodies.SessionStatusBody.class).status("local"))
                .isEqualTo(running);
        SessionStatus ended = new SessionStatus(
                "s-2", "ended", "0.1.0", 0, T, 0, 0, 0, "local", "jdk", null, null, SessionEndReason.IDLE_TIMEOUT);
        String endedWire = json(ResourceBodies.SessionStatusBody.of(ended));
        assertThat(endedWire).contains("\"expiresAt\":null", "\"idleTimeoutMs\":null");
        assertThat(read(endedWire, ResourceBodies.SessionStatusBody.class).status("remote"))
                .isEqualTo(new SessionStatus(
                        "s-2",
                        "ended",
                        "0.1.0",
                        0,
                        T,
                        0,
                        0,
                        0,
                        "remote",
                        "jdk",
                        null,
                        null,
                        SessionEndReason.IDLE_TIMEOUT));

        SessionInfo info = new SessionInfo("s-1", "local", Map.of("team", "t"), T);
        String list = json(ResourceBodies.SessionList.of(List.of(info)));
        assertThat(list)
                .isEqualTo("{\"sessions\":[{\"id\":\"s-1\",\"provider\":\"local\",\"labels\":{\"team\":\"t\"},"
                        + "\"createdAt\":\"2026-01-02T03:04:05.123456789Z\"}]}");
        assertThat(read(list, ResourceBodies.SessionList.class)
                        .sessions()
                        .getFirst()
                        .info("local"))
                .isEqualTo(info);
        // a handle (create, attach) has no createdAt
        String handle = json(ResourceBodies.SessionInfoBody.handle("s-1", "local", Map.of()));
        assertThat(handle).isEqualTo("{\"id\":\"s-1\",\"provider\":\"local\",\"labels\":{}}");
        assertThat(read(handle, ResourceBodies.SessionInfoBody.class).info("remote"))
                .isEqualTo(new SessionInfo("s-1", "remote", Map.of(), Instant.EPOCH));
    }

    @Test
    void theServerStatusRoundTrips() {
        ResourceBodies.ServerStatusBody ping =
                new ResourceBodies.ServerStatusBody("ok", "0.1.0", 1234, T, 1, 2, 3, 4, "local", 5, 6);
        String wire = json(ping);
        assertThat(wire)
                .isEqualTo("{\"status\":\"ok\",\"version\":\"0.1.0\",\"uptimeMs\":1234,"
                        + "\"lastActivity\":\"2026-01-02T03:04:05.123456789Z\",\"execsRunning\":1,\"ptysRunning\":2,"
                        + "\"ptysAttached\":3,\"sessions\":4,\"provider\":\"local\",\"channelsOpen\":5,"
                        + "\"channelCommands\":6}");
        assertThat(read(wire, ResourceBodies.ServerStatusBody.class)).isEqualTo(ping);
    }

    @Test
    void filesRoundTrip() {
        FileInfo link = new FileInfo("/a/b", "b", FileInfo.Type.SYMLINK, 12, 0777, T, Optional.of("c"));
        FileInfo file = new FileInfo("/a/d", "d", FileInfo.Type.FILE, 0, 0644, T, Optional.empty());
        assertThat(json(ResourceBodies.FileInfoBody.of(link)))
                .isEqualTo("{\"path\":\"/a/b\",\"name\":\"b\",\"type\":\"SYMLINK\",\"size\":12,\"mode\":511,"
                        + "\"modifiedAt\":\"2026-01-02T03:04:05.123456789Z\",\"symlinkTarget\":\"c\"}");
        String wire = json(ResourceBodies.FileList.of(List.of(link, file)));
        assertThat(wire)
                .endsWith("{\"path\":\"/a/d\",\"name\":\"d\",\"type\":\"FILE\",\"size\":0,\"mode\":420,"
                        + "\"modifiedAt\":\"2026-01-02T03:04:05.123456789Z\"}]}");
        assertThat(read(wire, ResourceBodies.FileList.class).entries().stream().map(ResourceBodies.FileInfoBody::info))
                .containsExactly(link, file);
        assertThat(read("{}", ResourceBodies.FileList.class).entries()).isEmpty();
    }

    @Test
    void processesAndPtysRoundTrip() {
        ProcessInfo running = new ProcessInfo("p-1", List.of("sleep", "1"), 4242, T, true, null);
        ProcessInfo done = new ProcessInfo("p-2", List.of("true"), -1, T, false, 0);
        assertThat(json(ResourceBodies.ProcessInfoBody.of(running)))
                .isEqualTo("{\"id\":\"p-1\",\"argv\":[\"sleep\",\"1\"],\"pid\":4242,"
                        + "\"startedAt\":\"2026-01-02T03:04:05.123456789Z\",\"running\":true,\"exitCode\":null}");
        String wire = json(ResourceBodies.ProcessList.of(List.of(running, done)));
        assertThat(read(wire, ResourceBodies.ProcessList.class).processes().stream()
                        .map(ResourceBodies.ProcessInfoBody::info))
                .containsExactly(running, done);
        // a summary without a pid has an unknown one
        assertThat(read(
                                "{\"id\":\"p-3\",\"argv\":[],\"startedAt\":\"2026-01-02T03:04:05Z\",\"running\":true}",
                                ResourceBodies.ProcessInfoBody.class)
                        .info()
                        .pid())
                .isEqualTo(-1);

        String pty = json(ResourceBodies.PtyInfoBody.of("pty-1", 42, null));
        assertThat(pty).isEqualTo("{\"id\":\"pty-1\",\"pid\":42,\"running\":true}");
        assertThat(read(pty, ResourceBodies.PtyInfoBody.class))
                .isEqualTo(new ResourceBodies.PtyInfoBody("pty-1", 42L, true, null));
        String ended = json(ResourceBodies.PtyInfoBody.of(
                "pty-1", -1, new ExecEvent.Exit(7, ExecEvent.Termination.EXITED, Duration.ZERO)));
        assertThat(ended).isEqualTo("{\"id\":\"pty-1\",\"pid\":-1,\"running\":false,\"exitCode\":7}");
        assertThat(read(ended, ResourceBodies.PtyInfoBody.class).exitCode()).isEqualTo(7);

        String hello = json(ResourceBodies.PtyHello.of("pty-3", 4242));
        assertThat(hello).isEqualTo("{\"type\":\"hello\",\"id\":\"pty-3\",\"pid\":4242}");
        assertThat(read(hello, ResourceBodies.PtyHello.class)).isEqualTo(ResourceBodies.PtyHello.of("pty-3", 4242));
    }

    /**
     * The API declares these instants non-null (its packages are {@code @NullMarked}) and every provider sets them: a
     * server answer without one is refused, naming the field, rather than handed to the caller as {@code null}.
     */
    @Test
    void answersWithoutARequiredInstantAreRefusedNamingTheField() {
        assertThatThrownBy(() -> read(
                                "{\"sessionId\":\"s\",\"status\":\"running\",\"lastActivity\":null}",
                                ResourceBodies.SessionStatusBody.class)
                        .status("remote"))
                .isInstanceOf(BackendException.class)
                .hasMessage("the sandbox server sent a SessionStatusBody without lastActivity");
        assertThatThrownBy(() -> read(
                                "{\"path\":\"/a\",\"name\":\"a\",\"type\":\"FILE\"}", ResourceBodies.FileInfoBody.class)
                        .info())
                .isInstanceOf(BackendException.class)
                .hasMessage("the sandbox server sent a FileInfoBody without modifiedAt");
        assertThatThrownBy(() -> read(
                                "{\"id\":\"p-1\",\"argv\":[\"true\"],\"running\":false}",
                                ResourceBodies.ProcessInfoBody.class)
                        .info())
                .isInstanceOf(BackendException.class)
                .hasMessage("the sandbox server sent a ProcessInfoBody without startedAt");
    }

    @Test
    void answersThatDoNotFitNameTheFieldAndTheValue() {
        assertThatThrownBy(() -> read(
                        "{\"path\":\"/a\",\"type\":\"FIFO\",\"modifiedAt\":null}", ResourceBodies.FileInfoBody.class))
                .isInstanceOf(BackendException.class)
                .hasMessageContaining("type has an unknown value: 'FIFO'");
        assertThatThrownBy(() -> read(
                        "{\"sessionId\":\"s\",\"lastActivity\":\"yesterday\"}", ResourceBodies.SessionStatusBody.class))
                .isInstanceOf(BackendException.class)
                .hasMessageContaining("lastActivity must be an ISO-8601 instant, got \"yesterday\"");
        assertThatThrownBy(() -> read("{\"exitCode\":\"0\"}", ResourceBodies.ExecResultBody.class))
                .isInstanceOf(BackendException.class)
                .hasMessageContaining("exitCode must be a whole number, got \"0\"");
        assertThatThrownBy(() -> ResourceBodies.execResult(WireJson.lenient(
                        "{\"exitCode\":0,\"termination\":\"MELTED\"}".getBytes(StandardCharsets.UTF_8))))
                .isInstanceOf(BackendException.class)
                .hasMessageContaining("termination is \"MELTED\"");
        assertThatThrownBy(() ->
                        read("{\"code\":0}", ResourceBodies.ExitBody.class).exit())
                .isInstanceOf(BackendException.class)
                .hasMessageContaining("without termination");
        assertThatThrownBy(() -> read("[]", ResourceBodies.ProcessInfoBody.class))
                .isInstanceOf(BackendException.class)
                .hasMessageContaining("body must be a JSON object, got array");
    }
}
