package dev.sandbox.samples.webflux;

import dev.sandbox.ExecEvent;
import dev.sandbox.ExecOptions;
import dev.sandbox.InvalidArgumentException;
import dev.sandbox.SandboxProvider;
import dev.sandbox.SessionOptions;
import dev.sandbox.pool.Claim;
import dev.sandbox.pool.SandboxPool;
import java.util.List;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.http.MediaType;
import org.springframework.http.codec.ServerSentEvent;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;
import reactor.core.publisher.Flux;
import tools.jackson.databind.json.JsonMapper;

/**
 * {@code POST /api/exec}: runs {@code {"command": ["sh", "-c", "..."]}} in a fresh sandbox session and streams
 * what it writes as server-sent events, one per line, as the lines are written:
 *
 * <pre>{@code
 * event:stdout
 * data:{"text":"hello","offset":0,"partial":false}
 *
 * event:stderr
 * data:{"text":"oops","offset":0,"partial":false}
 *
 * event:exit
 * data:{"code":3,"termination":"EXITED","durationMillis":12}
 * }</pre>
 *
 * <p>A command that cannot be started ends with one {@code error} event instead of {@code exit}. The stream is read
 * from the process only as fast as the client reads it, and closing the connection kills the process and ends the
 * session. A request without a usable {@code command} gets a 400 with an {@link ApiError} naming the field.
 *
 * <p>With {@code sandbox.pool.enabled=true} (the starter's warm pool; {@code sandbox.pool.warm} sessions, 4 by
 * default) each command runs in a session taken from the pool, created ahead, rather than one created for the request;
 * the session is given back (destroyed, and replaced in the pool) when the stream ends.
 */
@RestController
public class ExecController {
    private static final Logger LOG = LoggerFactory.getLogger(ExecController.class);

    private final SandboxProvider provider;
    private final @Nullable SandboxPool pool;
    private final DemoProperties properties;
    private final JsonMapper json;

    /**
     * Creates the controller.
     *
     * @param provider the provider that runs the commands, configured by the starter from {@code sandbox.*}
     * @param pool the starter's warm pool over that provider, there with {@code sandbox.pool.enabled=true}
     * @param properties the demo's settings ({@code sandbox.demo.*})
     * @param json the application's JSON mapper, which writes each event's data
     */
    public ExecController(
            SandboxProvider provider, ObjectProvider<SandboxPool> pool, DemoProperties properties, JsonMapper json) {
        this.provider = provider;
        this.pool = pool.getIfAvailable();
        this.properties = properties;
        this.json = json;
    }

    /**
     * The request body of {@code POST /api/exec}.
     *
     * @param command the program and its arguments, such as {@code ["sh", "-c", "ls -l"]}
     */
    public record ExecRequest(List<String> command) {}

    /**
     * The data of a {@code stdout} or {@code stderr} event.
     *
     * @param text the line without its terminator
     * @param offset the byte offset of the line in its stream
     * @param partial whether the line was cut at the maximum line length and continues in the next event
     */
    public record LineData(String text, long offset, boolean partial) {
        /**
         * The data of a line event.
         *
         * @param line the line
         * @return its data
         */
        public static LineData of(ExecEvent.Line line) {
            return new LineData(line.text(), line.offset(), line.partial());
        }
    }

    /**
     * The data of the {@code exit} event.
     *
     * @param code the exit code: the process's status, 128 + n when killed by signal n, 124 after the timeout
     * @param termination {@code EXITED}, {@code SIGNALED}, {@code TIMED_OUT} or {@code IDLE_TIMED_OUT}
     * @param durationMillis wall time from start to exit
     */
    public record ExitData(int code, String termination, long durationMillis) {
        /**
         * The data of the exit event.
         *
         * @param exit the exit
         * @return its data
         */
        public static ExitData of(ExecEvent.Exit exit) {
            return new ExitData(
                    exit.code(), exit.termination().name(), exit.duration().toMillis());
        }
    }

    /**
     * Runs the command and streams its events.
     *
     * @param request the command to run
     * @return {@code stdout} and {@code stderr} events as lines are written, then one {@code exit} (or {@code
     *     error}) event
     * @throws InvalidArgumentException when the command is missing, empty or malformed; answered with a 400
     */
    @PostMapping(
            path = "/api/exec",
            consumes = MediaType.APPLICATION_JSON_VALUE,
            produces = MediaType.TEXT_EVENT_STREAM_VALUE)
    public Flux<ServerSentEvent<String>> exec(@RequestBody(required = false) ExecRequest request) {
        ExecOptions options = validated(request).withTimeout(properties.execTimeout());
        LOG.info("exec {}", options.argv());
        // a warm session from the pool when there is one, else one created for this request
        Flux<ExecEvent> output = pool != null
                ? pool.withSession(Claim.defaults(), session -> session.exec(options))
                : provider.withSession(SessionOptions.defaults(), session -> session.exec(options));
        // tag::webflux[]
        Flux<ServerSentEvent<String>> events = output.map(event -> switch (event) {
            case ExecEvent.Stdout out -> sse("stdout", LineData.of(out));
            case ExecEvent.Stderr err -> sse("stderr", LineData.of(err));
            // the demo asks for lines; byte output would need an encoding of its own on the page
            case ExecEvent.Chunk chunk -> throw new IllegalStateException("unexpected byte output");
            case ExecEvent.Exit exit -> sse("exit", ExitData.of(exit));
        });
        // end::webflux[]
        return events.onErrorResume(error -> Flux.just(sse("error", ApiError.of(error))))
                .doOnCancel(() -> LOG.info("client went away: killed {}", options.argv()));
    }

    /**
     * An event whose data is its JSON text, written here rather than by the SSE writer's encoder. Spring's
     * {@code ServerSentEventHttpMessageWriter} (7.0.x) writes an event with String data as one buffer, but for object
     * data it encodes the JSON into a pooled buffer and emits it between the event's header and its blank line, from a
     * {@code Flux.just(header, json, end)} that does not release what it still holds when cancelled: a client that
     * disconnects after the header of an event was written (the server's demand ended there) leaked the JSON buffer.
     * Jackson escapes CR and LF inside strings, so the text is one {@code data:} line.
     */
    private ServerSentEvent<String> sse(String name, Object data) {
        return ServerSentEvent.builder(json.writeValueAsString(data))
                .event(name)
                .build();
    }

    /** Checks the request before anything is started, so that bad input gets a 400 rather than an event stream. */
    private static ExecOptions validated(ExecRequest request) {
        if (request == null || request.command() == null) {
            throw new InvalidArgumentException("command", "command is required: a JSON array such as [\"ls\", \"-l\"]");
        }
        List<String> command = request.command();
        if (command.isEmpty()) {
            throw new InvalidArgumentException("command", "command must name a program, got an empty array");
        }
        for (int i = 0; i < command.size(); i++) {
            if (command.get(i) == null) {
                throw new InvalidArgumentException(
                        "command[" + i + "]", "command[" + i + "] must be a string, got null");
            }
        }
        try {
            return ExecOptions.of(command).validate();
        } catch (InvalidArgumentException e) {
            // the SDK names its own fields (argv, argv[0]); the API calls the same thing "command"
            throw new InvalidArgumentException(
                    e.field().replace("argv", "command"), e.getMessage().replace("argv", "command"));
        }
    }
}
