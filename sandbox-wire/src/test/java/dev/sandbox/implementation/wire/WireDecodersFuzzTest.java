package dev.sandbox.implementation.wire;

import static org.assertj.core.api.Assertions.assertThat;

import com.code_intelligence.jazzer.junit.DictionaryEntries;
import com.code_intelligence.jazzer.junit.FuzzTest;
import com.fasterxml.jackson.databind.JsonNode;
import dev.sandbox.BackendException;
import dev.sandbox.ExecEvent;
import dev.sandbox.InvalidArgumentException;
import java.util.Arrays;

/**
 * Jazzer on the decoders of the wire format, each reading what the other side of a connection sent, which may be
 * anything. One fuzz test (Jazzer fuzzes one per run) whose first byte picks the decoder:
 *
 * <ul>
 *   <li>0, stream lines (the remote client reading an exec or watch stream): the bytes after the second arrive in
 *       pieces of the size the second byte gives, through {@link LineSplitter} and {@link StreamFrames#streamItem}, and
 *       every {@code lines} frame is read to its end. Only {@link BackendException} may escape, and the items never
 *       claim more bytes than arrived.
 *   <li>1, request bodies (the server reading a client): {@link WireJson#parse}, {@link RequestBodies#read} into the
 *       record the second byte picks, and the record's conversion to SDK options. Only a {@link
 *       WireJson.MalformedJsonException} or an {@link InvalidArgumentException} naming its field may escape (the
 *       server's 400).
 *   <li>2, answers (the remote client reading the server): {@link WireJson#lenient}, {@link ResourceBodies#read} into
 *       the record the second byte picks, and its conversion to SDK values. Only {@link BackendException} may escape.
 *   <li>3, error answers: {@link ErrorBodies#exception} with the status the second byte gives always returns an
 *       exception and never throws one.
 *   <li>4, command channel messages ({@link ChannelFrames#decode}), read as the server or the client by the second
 *       byte's parity, each frame's fields read: only {@link ChannelFrames.MalformedFrameException} may escape.
 * </ul>
 *
 * <p>Without JAZZER_FUZZ it replays the kept inputs ({@code WireDecodersFuzzTestInputs/decodeWire} in the test
 * resources); with it (the module's verify) it fuzzes for the bounded time below.
 */
class WireDecodersFuzzTest {
    @FuzzTest(maxDuration = "10s")
    @DictionaryEntries({
        "{\"type\":\"stdout\",\"offset\":",
        "{\"type\":\"lines\",\"stream\":\"stdout\",\"offset\":",
        ",\"next\":",
        ",\"text\":\"",
        "\",\"partial\":true}",
        "\"chunk\"",
        "\"data\"",
        "\"exit\"",
        "\"termination\"",
        "\"error\"",
        "\"argv\"",
        "\"env\"",
        "\"timeoutMs\"",
        "\"maxLineLength\"",
        "\"ringBytes\"",
        "\"overflow\"",
        "\"cols\"",
        "\"rows\"",
        "\"labels\"",
        "\"lifetimeMs\"",
        "\"entries\"",
        "\"processes\"",
        "\"sessions\"",
        "\"type\"",
        "\"size\"",
        "\"modifiedAt\"",
        "\"startedAt\"",
        "\"message\"",
        "\"retryable\""
    })
    void decodeWire(byte[] input) {
        if (input.length < 2) {
            return;
        }
        int pick = input[1] & 0xFF;
        byte[] rest = Arrays.copyOfRange(input, 2, input.length);
        switch ((input[0] & 0xFF) % 5) {
            case 0 -> streamLines(pick, rest);
            case 1 -> requestBody(pick, rest);
            case 2 -> answer(pick, rest);
            case 3 -> errorAnswer(pick, rest);
            default -> channelFrames(pick, rest);
        }
    }

    /**
     * A message of the command channel, read as the server (odd pick) or the client (even) would: every frame in it is
     * decoded and its payload read with the accessors of its type. Only {@link ChannelFrames.MalformedFrameException}
     * may escape, and no frame claims bytes past the message.
     */
    private static void channelFrames(int pick, byte[] message) {
        boolean fromClient = (pick & 1) == 1;
        int at = 0;
        try {
            while (at < message.length) {
                ChannelFrames.Frame f = ChannelFrames.decode(message, at, 1 << 20, fromClient);
                assertThat(f.offset() + f.length()).isLessThanOrEqualTo(message.length);
                switch (f.type()) {
                    case ChannelFrames.OPEN_EXEC, ChannelFrames.OPEN_RUN -> {
                        assertThat(ChannelFrames.openSession(f)).isNotNull();
                        assertThat(ChannelFrames.openBodyOffset(f)).isBetween(f.offset(), f.offset() + f.length());
                    }
                    case ChannelFrames.RESUME_EXEC -> {
                        ChannelFrames.resumeExecId(f);
                        ChannelFrames.resumeStdout(f);
                        ChannelFrames.resumeStderr(f);
                    }
                    case ChannelFrames.ACK -> {
                        ChannelFrames.ackStdout(f);
                        ChannelFrames.ackStderr(f);
                    }
                    case ChannelFrames.OPENED -> ChannelFrames.openedWindow(f);
                    case ChannelFrames.ERROR -> {
                        ChannelFrames.errorStatus(f);
                        assertThat(ChannelFrames.errorBody(f)).isNotNull();
                    }
                    default -> {
                        // a frame without fields of its own
                    }
                }
                at = f.end();
            }
        } catch (ChannelFrames.MalformedFrameException refused) {
            assertThat(refused.getMessage()).isNotBlank();
        }
    }

    private static void streamLines(int pick, byte[] bytes) {
        int piece = pick == 0 ? Math.max(1, bytes.length) : pick;
        LineSplitter splitter = new LineSplitter();
        long claimed = 0;
        try {
            for (int i = 0; i < bytes.length; i += piece) {
                for (LineSplitter.Sized s :
                        splitter.split(Arrays.copyOfRange(bytes, i, Math.min(bytes.length, i + piece)))) {
                    claimed += s.wireBytes();
                    if (s.item() instanceof StreamFrames.LinesItem lines) {
                        for (ExecEvent.Line line : lines) {
                            assertThat(line.text()).isNotNull();
                        }
                    } else if (s.item() instanceof StreamFrames.EventItem(ExecEvent.Chunk c)) {
                        assertThat(c.data().remaining()).isPositive().isLessThanOrEqualTo(ExecEvent.Chunk.MAX_BYTES);
                    }
                }
            }
        } catch (BackendException refused) {
            assertThat(refused.getMessage()).isNotBlank();
        }
        assertThat(claimed).isLessThanOrEqualTo(bytes.length);
    }

    private static final Class<?>[] REQUESTS = {
        RequestBodies.ExecBody.class,
        RequestBodies.PtyBody.class,
        RequestBodies.SessionBody.class,
        RequestBodies.DurationBody.class,
        RequestBodies.AckBody.class,
        RequestBodies.SignalBody.class,
        RequestBodies.ResizeBody.class,
        RequestBodies.PtyControl.class,
        RequestBodies.PathBody.class,
        RequestBodies.MoveBody.class,
        RequestBodies.BatchBody.class,
        ResourceBodies.LeaseRenewal.class
    };

    private static void requestBody(int pick, byte[] bytes) {
        try {
            JsonNode json = WireJson.parse(bytes);
            Record body = RequestBodies.read(json, REQUESTS[pick % REQUESTS.length].asSubclass(Record.class));
            switch (body) {
                case RequestBodies.ExecBody b -> {
                    assertThat(b.options()).isNotNull();
                    assertThat(b.background()).isNotNull();
                }
                case RequestBodies.PtyBody b -> assertThat(b.options()).isNotNull();
                case RequestBodies.SessionBody b -> assertThat(b.options()).isNotNull();
                case RequestBodies.DurationBody b -> b.duration("lifetime");
                case RequestBodies.AckBody b -> {
                    b.stdoutOffset();
                    b.stderrOffset();
                }
                case RequestBodies.SignalBody b -> b.number();
                case RequestBodies.ResizeBody b -> {
                    b.colsOrZero();
                    b.rowsOrZero();
                }
                case RequestBodies.BatchBody b -> assertThat(b.files()).doesNotContainNull();
                case ResourceBodies.LeaseRenewal b -> assertThat(b.ids()).doesNotContainNull();
                default -> {}
            }
        } catch (WireJson.MalformedJsonException malformed) {
            assertThat(malformed.getMessage()).isNotBlank();
        } catch (InvalidArgumentException invalid) {
            assertThat(invalid.field()).isNotBlank();
        }
    }

    private static final Class<?>[] ANSWERS = {
        ResourceBodies.ServerStatusBody.class,
        ResourceBodies.SessionInfoBody.class,
        ResourceBodies.SessionList.class,
        ResourceBodies.SessionStatusBody.class,
        ResourceBodies.FileInfoBody.class,
        ResourceBodies.FileList.class,
        ResourceBodies.ProcessInfoBody.class,
        ResourceBodies.ProcessList.class,
        ResourceBodies.PtyInfoBody.class,
        ResourceBodies.PtyHello.class,
        ResourceBodies.ExecResultBody.class,
        ResourceBodies.ExitBody.class,
        ResourceBodies.LeaseAnswer.class,
        ResourceBodies.MkdirAnswer.class
    };

    private static void answer(int pick, byte[] bytes) {
        JsonNode json = WireJson.lenient(bytes);
        if (json == null) {
            return; // the client reports an unreadable answer itself
        }
        try {
            Class<?> type = ANSWERS[pick % ANSWERS.length];
            if (type == ResourceBodies.ExecResultBody.class) {
                assertThat(ResourceBodies.execResult(json)).isNotNull();
                return;
            }
            Record body = ResourceBodies.read(json, type.asSubclass(Record.class));
            switch (body) {
                case ResourceBodies.SessionInfoBody b ->
                    assertThat(b.info("remote")).isNotNull();
                case ResourceBodies.SessionList b ->
                    b.sessions().forEach(s -> assertThat(s.info("remote")).isNotNull());
                case ResourceBodies.SessionStatusBody b ->
                    assertThat(b.status("remote")).isNotNull();
                case ResourceBodies.FileInfoBody b -> assertThat(b.info()).isNotNull();
                case ResourceBodies.FileList b ->
                    b.entries().forEach(e -> assertThat(e.info()).isNotNull());
                case ResourceBodies.ProcessInfoBody b -> assertThat(b.info()).isNotNull();
                case ResourceBodies.ProcessList b ->
                    b.processes().forEach(p -> assertThat(p.info()).isNotNull());
                case ResourceBodies.PtyInfoBody b -> b.pidOrUnknown();
                case ResourceBodies.ExitBody b -> assertThat(b.exit()).isNotNull();
                case ResourceBodies.MkdirAnswer b -> assertThat(b.created()).isNotNull();
                default -> {}
            }
        } catch (BackendException refused) {
            assertThat(refused.getMessage()).isNotBlank();
        }
    }

    private static void errorAnswer(int status, byte[] bytes) {
        RuntimeException e = ErrorBodies.exception(WireJson.lenient(bytes), status == 0 ? 500 : 400 + status % 200);
        assertThat(e).isNotNull();
        assertThat(e.getMessage()).isNotNull();
    }
}
