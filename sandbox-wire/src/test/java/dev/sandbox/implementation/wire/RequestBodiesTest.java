package dev.sandbox.implementation.wire;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sandbox.BackgroundOptions;
import dev.sandbox.ExecOptions;
import dev.sandbox.InvalidArgumentException;
import dev.sandbox.PtyOptions;
import dev.sandbox.SessionOptions;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Request bodies: options go out and come back equal, in the exact JSON the hand-written encoder wrote (the expected
 * strings are its output), and bad input fails naming the field and the value, with the messages it gave.
 */
class RequestBodiesTest {

    private static final BackgroundOptions THROTTLE =
            BackgroundOptions.defaults().withRingBytes(65536).withOverflow(BackgroundOptions.Overflow.THROTTLE);

    private static String json(Object body) {
        return new String(WireJson.bytes(body), StandardCharsets.UTF_8);
    }

    /** What the server does with a body: parse it, bind it. */
    private static <T extends Record> T read(String json, Class<T> type) {
        return RequestBodies.read(WireJson.parse(json.getBytes(StandardCharsets.UTF_8)), type);
    }

    /** A body of JSON {@code null} is no record: refused naming the body (the server's 400), as WireDecodersFuzzTest found. */
    @Test
    void aNullBodyIsRefusedNamingTheBody() {
        assertThatThrownBy(() -> read("null", RequestBodies.SessionBody.class))
                .isInstanceOfSatisfying(
                        InvalidArgumentException.class,
                        e -> assertThat(e.field()).isEqualTo("body"))
                .hasMessage("body must be a JSON object, got null");
    }

    @Test
    void execOptionsRoundTripInTheirWireForm() {
        ExecOptions full = ExecOptions.of("ls", "-l")
                .withCwd("/tmp")
                .withEnv(Map.of("A", "1"))
                .withTimeout(Duration.ofMillis(1500))
                .withIdleTimeout(Duration.ofNanos(1))
                .withCharset(StandardCharsets.ISO_8859_1)
                .withMaxLineLength(100)
                .withMaxOutputBytes(200);
        RequestBodies.ExecBody body =
                RequestBodies.ExecBody.of(full, "in-1").withId("e-1").withBackground(THROTTLE);
        String wire = json(body);
        assertThat(wire)
                .isEqualTo("{\"argv\":[\"ls\",\"-l\"],\"cwd\":\"/tmp\",\"env\":{\"A\":\"1\"},\"timeoutMs\":1500,"
                        + "\"idleTimeoutMs\":1,\"charset\":\"ISO-8859-1\",\"maxLineLength\":100,\"maxOutputBytes\":200,"
                        + "\"stdinId\":\"in-1\",\"id\":\"e-1\",\"ringBytes\":65536,\"overflow\":\"THROTTLE\"}");

        RequestBodies.ExecBody back = read(wire, RequestBodies.ExecBody.class);
        assertThat(back).isEqualTo(body);
        // an idle timeout of 1 ns goes out as 1 ms: rounded up, so a positive duration stays positive
        assertThat(back.options()).usingRecursiveComparison().isEqualTo(full.withIdleTimeout(Duration.ofMillis(1)));
        assertThat(back.stdinId()).isEqualTo("in-1");
        assertThat(back.id()).isEqualTo("e-1");
        assertThat(back.background()).usingRecursiveComparison().isEqualTo(THROTTLE);
    }

    @Test
    void defaultsAreLeftOutAndReadBackAsDefaults() {
        ExecOptions plain = ExecOptions.of("true");
        String wire = json(RequestBodies.ExecBody.of(plain, null));
        assertThat(wire).isEqualTo("{\"argv\":[\"true\"],\"maxLineLength\":65536,\"maxOutputBytes\":1048576}");
        RequestBodies.ExecBody back = read("{\"argv\":[\"true\"]}", RequestBodies.ExecBody.class);
        assertThat(back.options()).usingRecursiveComparison().isEqualTo(plain);
        assertThat(back.stdinId()).isNull();
        assertThat(back.id()).isNull();
        assertThat(back.background()).usingRecursiveComparison().isEqualTo(BackgroundOptions.defaults());
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(
            delimiter = '|',
            quoteCharacter = '`',
            value = {
                "[1,2]                                            | body           | body must be a JSON object, got array",
                "{}                                               | argv           | argv must be an array of strings, got nothing",
                "{`argv`:null}                                    | argv           | argv must be an array of strings, got null",
                "{`argv`:`ls`}                                    | argv           | argv must be an array of strings, got string",
                "{`argv`:[`ls`,{}]}                               | argv[1]        | argv[1] must be a string, got object",
                "{`argv`:[null]}                                  | argv[0]        | argv[0] must be a string, got null",
                "{`argv`:[`ls`],`timeoutMs`:`soon`}               | timeoutMs      | timeoutMs must be a whole number of milliseconds, got `soon`",
                "{`argv`:[`ls`],`timeoutMs`:1.5}                  | timeoutMs      | timeoutMs must be a whole number of milliseconds, got 1.5",
                "{`argv`:[`ls`],`env`:{`A`:1}}                    | env[A]         | env[A] must be a string, got number",
                "{`argv`:[`ls`],`env`:{`A`:null}}                 | env[A]         | env[A] must be a string, got null",
                "{`argv`:[`ls`],`env`:[]}                         | env            | env must be an object of strings, got array",
                "{`argv`:[`ls`],`cwd`:5}                          | cwd            | cwd must be a string, got number",
                "{`argv`:[`ls`],`charset`:`nope`}                 | charset        | charset is not supported: 'nope'",
                "{`argv`:[`ls`],`maxLineLength`:99999999999}      | maxLineLength  | maxLineLength is too large: 99999999999",
                "{`argv`:[`ls`],`maxOutputBytes`:true}            | maxOutputBytes | maxOutputBytes must be a whole number, got true",
                "{`argv`:[`ls`],`stdinId`:5}                      | stdinId        | stdinId must be a string, got number",
                "{`argv`:[`ls`],`overflow`:`SOMETIMES`}           | overflow       | overflow has an unknown value: 'SOMETIMES'",
                "{`argv`:[`ls`],`overflow`:1}                     | overflow       | overflow must be a string, got number",
                "{`argv`:[`ls`],`ringBytes`:99999999999}          | ringBytes      | ringBytes is too large: 99999999999",
            })
    void badExecBodiesNameTheFieldAndTheValue(String body, String field, String message) {
        String json = body.replace('`', '"');
        assertInvalid(
                () -> {
                    RequestBodies.ExecBody b = read(json, RequestBodies.ExecBody.class);
                    b.options();
                    b.background();
                },
                field,
                message.replace('`', '"'));
    }

    @Test
    void ptyOptionsRoundTrip() {
        PtyOptions full = PtyOptions.of("sh", "-l")
                .withCwd("/tmp")
                .withEnv("TERM", "xterm")
                .withSize(120, 40)
                .withReplayBytes(100_000);
        String wire = json(RequestBodies.PtyBody.of(full));
        assertThat(wire)
                .isEqualTo("{\"argv\":[\"sh\",\"-l\"],\"cwd\":\"/tmp\",\"env\":{\"TERM\":\"xterm\"},\"cols\":120,"
                        + "\"rows\":40,\"replayBytes\":100000}");
        assertThat(read(wire, RequestBodies.PtyBody.class).options())
                .usingRecursiveComparison()
                .isEqualTo(full);
        assertThat(json(RequestBodies.PtyBody.of(PtyOptions.shell())))
                .isEqualTo("{\"argv\":[\"/bin/sh\"],\"cols\":80,\"rows\":24,\"replayBytes\":65536}");
        assertThat(read("{\"argv\":[\"/bin/sh\"]}", RequestBodies.PtyBody.class).options())
                .usingRecursiveComparison()
                .isEqualTo(PtyOptions.shell());

        assertInvalid(
                () -> read("{\"argv\":[\"sh\"],\"cols\":5000}", RequestBodies.PtyBody.class)
                        .options(),
                "cols",
                "cols must be from 1 to 1000, got 5000");
        assertInvalid(
                () -> read("{\"argv\":[\"sh\"],\"cols\":99999999999}", RequestBodies.PtyBody.class),
                "cols",
                "cols must be a whole number, got 99999999999");
        assertInvalid(
                () -> read("{\"argv\":[\"sh\"],\"rows\":\"x\"}", RequestBodies.PtyBody.class),
                "rows",
                "rows must be a whole number, got \"x\"");
    }

    @Test
    void sessionOptionsRoundTripTellingAnUnlimitedLifetimeFromTheDefault() {
        SessionOptions full = SessionOptions.defaults()
                .withWorkdir("/w")
                .withEnv("A", "1")
                .withSecret("S", "x")
                .withLabel("team", "t")
                .withLifetime(Duration.ofSeconds(90))
                .withIdleTimeout(Duration.ofMillis(2500));
        String wire = json(RequestBodies.SessionBody.of(full));
        assertThat(wire)
                .isEqualTo(
                        "{\"workdir\":\"/w\",\"env\":{\"A\":\"1\"},\"secrets\":{\"S\":\"x\"},\"labels\":{\"team\":\"t\"},"
                                + "\"lifetimeMs\":90000,\"idleTimeoutMs\":2500}");
        assertThat(read(wire, RequestBodies.SessionBody.class).options())
                .usingRecursiveComparison()
                .isEqualTo(full);

        SessionOptions unlimited = SessionOptions.defaults().withUnlimitedLifetime();
        String none = json(RequestBodies.SessionBody.of(unlimited));
        assertThat(none).isEqualTo("{\"env\":{},\"secrets\":{},\"labels\":{},\"lifetimeMs\":null}");
        assertThat(read(none, RequestBodies.SessionBody.class).options().lifetime())
                .isEmpty();
        assertThat(read("{}", RequestBodies.SessionBody.class).options().lifetime())
                .contains(SessionOptions.DEFAULT_LIFETIME);

        assertInvalid(
                () -> read("{\"lifetimeMs\":\"x\"}", RequestBodies.SessionBody.class)
                        .options(),
                "lifetimeMs",
                "lifetimeMs must be a whole number of milliseconds, got \"x\"");
        assertInvalid(
                () -> read("{\"labels\":{\"a\":2}}", RequestBodies.SessionBody.class),
                "labels[a]",
                "labels[a] must be a string, got number");
        assertInvalid(
                () -> read("{\"workdir\":5}", RequestBodies.SessionBody.class),
                "workdir",
                "workdir must be a string, got number");
    }

    @Test
    void smallBodiesRoundTrip() {
        assertThat(json(RequestBodies.DurationBody.of(Duration.ofNanos(1_500_000_001))))
                .isEqualTo("{\"ms\":1501}");
        assertThat(read("{\"ms\":1501}", RequestBodies.DurationBody.class).duration("lifetime"))
                .isEqualTo(Duration.ofMillis(1501));
        assertInvalid(
                () -> read("{}", RequestBodies.DurationBody.class).duration("lifetime"),
                "lifetime",
                "lifetime is required as {\"ms\": N}");
        assertInvalid(
                () -> read("{\"ms\":0}", RequestBodies.DurationBody.class).duration("idleTimeout"),
                "idleTimeout",
                "idleTimeout must be positive, got PT0S");
        assertInvalid(
                () -> read("{\"ms\":1.5}", RequestBodies.DurationBody.class),
                "ms",
                "ms must be a whole number of milliseconds, got 1.5");

        roundTrip(new RequestBodies.AckBody(12L, -1L), "{\"stdout\":12,\"stderr\":-1}", RequestBodies.AckBody.class);
        assertThat(read("{}", RequestBodies.AckBody.class).stdoutOffset()).isEqualTo(-1);
        assertInvalid(
                () -> read("{\"stdout\":\"12\"}", RequestBodies.AckBody.class),
                "stdout",
                "stdout must be a whole number, got \"12\"");

        roundTrip(new RequestBodies.SignalBody(15L), "{\"signal\":15}", RequestBodies.SignalBody.class);
        assertThat(read("{\"signal\":15}", RequestBodies.SignalBody.class).number())
                .isEqualTo(15);
        assertInvalid(
                () -> read("{}", RequestBodies.SignalBody.class).number(),
                "signal",
                "signal must be a number from 1 to 64, got null");
        assertInvalid(
                () -> read("{\"signal\":2.5}", RequestBodies.SignalBody.class),
                "signal",
                "signal must be a whole number, got 2.5");

        roundTrip(new RequestBodies.ResizeBody(120, 40), "{\"cols\":120,\"rows\":40}", RequestBodies.ResizeBody.class);
        assertThat(read("{}", RequestBodies.ResizeBody.class).colsOrZero()).isZero();

        roundTrip(
                new RequestBodies.PtyControl("resize", 120, 40, null),
                "{\"type\":\"resize\",\"cols\":120,\"rows\":40}",
                RequestBodies.PtyControl.class);
        assertInvalid(
                () -> read("{\"type\":\"resize\",\"cols\":\"wide\"}", RequestBodies.PtyControl.class),
                "cols",
                "cols must be a whole number, got \"wide\"");

        roundTrip(new RequestBodies.PathBody("a/b"), "{\"path\":\"a/b\"}", RequestBodies.PathBody.class);
        roundTrip(new RequestBodies.MoveBody("a", "b"), "{\"from\":\"a\",\"to\":\"b\"}", RequestBodies.MoveBody.class);
    }

    @Test
    void bodiesThatAreNotJsonAreMalformedNotInvalid() {
        assertThatThrownBy(() -> WireJson.parse("{not json".getBytes(StandardCharsets.UTF_8)))
                .isInstanceOf(WireJson.MalformedJsonException.class)
                .hasMessageStartingWith("the request body is not valid JSON");
        assertThatThrownBy(() -> WireJson.parse(new byte[0]))
                .isInstanceOf(WireJson.MalformedJsonException.class)
                .hasMessage("the request body is empty; a JSON object was expected");
    }

    private static <T extends Record> void roundTrip(T body, String expected, Class<T> type) {
        String wire = json(body);
        assertThat(wire).isEqualTo(expected);
        assertThat(read(wire, type)).isEqualTo(body);
    }

    private static void assertInvalid(Runnable r, String field, String message) {
        assertThatThrownBy(r::run)
                .isInstanceOfSatisfying(
                        InvalidArgumentException.class,
                        e -> assertThat(e.field()).isEqualTo(field))
                .hasMessage(message);
    }
}
