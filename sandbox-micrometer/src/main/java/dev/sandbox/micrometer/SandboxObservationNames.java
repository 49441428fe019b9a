package dev.sandbox.micrometer;

/**
 * The names of every observation, metric, tag and context key that {@link SandboxObservations} produces.
 *
 * <h2>Observations</h2>
 *
 * Each operation of an observed session is one {@link io.micrometer.observation.Observation}, started when the
 * operation is subscribed and stopped when it completes, fails or is cancelled. With Micrometer's {@code
 * DefaultMeterObservationHandler} (Spring Boot registers it) each becomes a timer of the same name, carrying the
 * low-cardinality tags below plus {@code error} (the exception's simple class name, or {@code none}); with Micrometer
 * Tracing each becomes a span, child of the caller's observation (for example a WebFlux request's).
 *
 * <table>
 *   <caption>observations</caption>
 *   <tr><th>name</th><th>operation</th><th>extra tags</th></tr>
 *   <tr><td>{@value #CREATE}</td><td>{@code SandboxProvider.create}</td><td></td></tr>
 *   <tr><td>{@value #ATTACH}</td><td>{@code SandboxProvider.attach}</td><td></td></tr>
 *   <tr><td>{@value #EXEC}</td><td>{@code SandboxSession.exec}</td><td>exit code, termination</td></tr>
 *   <tr><td>{@value #RUN}</td><td>{@code SandboxSession.run}</td><td>exit code, termination</td></tr>
 *   <tr><td>{@value #START}</td><td>{@code SandboxSession.start} (a background process)</td><td></td></tr>
 *   <tr><td>{@value #FILE_READ}</td><td>{@code SandboxFiles.read}, {@code readAllBytes}</td><td></td></tr>
 *   <tr><td>{@value #FILE_WRITE}</td><td>{@code SandboxFiles.write}, {@code writeAll}</td><td></td></tr>
 *   <tr><td>{@value #FILE_UPLOAD}</td><td>{@code SandboxFiles.upload}</td><td></td></tr>
 *   <tr><td>{@value #FILE_DOWNLOAD}</td><td>{@code SandboxFiles.download}</td><td></td></tr>
 *   <tr><td>{@value #FILE_LIST}</td><td>{@code SandboxFiles.list}</td><td></td></tr>
 *   <tr><td>{@value #DESTROY}</td><td>{@code SandboxSession.destroy}</td><td></td></tr>
 * </table>
 *
 * <h2>Tags of every observation</h2>
 *
 * <table>
 *   <caption>tags</caption>
 *   <tr><th>key</th><th>cardinality</th><th>values</th></tr>
 *   <tr><td>{@value #PROVIDER}</td><td>low</td><td>the provider's {@code name()}: {@code local}, {@code docker},
 *       {@code remote}, ...</td></tr>
 *   <tr><td>{@value #OUTCOME}</td><td>low</td><td>{@value #OUTCOME_SUCCESS}, {@value #OUTCOME_ERROR} or
 *       {@value #OUTCOME_CANCELLED} (the subscriber cancelled: for {@code exec}, the command was killed)</td></tr>
 *   <tr><td>{@value #EXIT_CODE}</td><td>low</td><td>{@code exec} and {@code run}: the command's exit code, or
 *       {@value #NONE} when it did not exit (error, cancellation)</td></tr>
 *   <tr><td>{@value #TERMINATION}</td><td>low</td><td>{@code exec} and {@code run}: {@code EXITED},
 *       {@code SIGNALED}, {@code TIMED_OUT}, {@code IDLE_TIMED_OUT}, {@code OOM_KILLED}, or {@value #NONE}</td></tr>
 *   <tr><td>{@value #END_REASON}</td><td>low</td><td>when the operation failed with a {@code
 *       SessionClosedException}: its reason ({@code DESTROYED}, {@code HANDLE_CLOSED}, {@code LIFETIME_EXPIRED},
 *       {@code IDLE_TIMEOUT}, {@code PROVIDER_CLOSED}, {@code TERMINATED}); else {@value #NONE}</td></tr>
 *   <tr><td>{@value #SESSION_ID}</td><td>high</td><td>the session's id (for {@code create}, once it is
 *       known)</td></tr>
 * </table>
 *
 * <h2>Counters</h2>
 *
 * Registered in the {@link io.micrometer.core.instrument.MeterRegistry} given to {@link
 * SandboxObservations#observe(dev.sandbox.SandboxProvider, io.micrometer.observation.ObservationRegistry,
 * io.micrometer.core.instrument.MeterRegistry)}, each with the tag {@value #PROVIDER}:
 *
 * <table>
 *   <caption>counters</caption>
 *   <tr><th>name</th><th>unit</th><th>tags</th><th>counts</th></tr>
 *   <tr><td>{@value #OUTPUT_BYTES}</td><td>bytes</td><td>{@value #OPERATION} ({@code exec}, {@code run}),
 *       {@value #STREAM} ({@code stdout}, {@code stderr})</td><td>output the commands produced: for {@code exec} as
 *       it is delivered, for {@code run} the whole count of each stream (also the part not kept)</td></tr>
 *   <tr><td>{@value #OUTPUT_LINES}</td><td>lines</td><td>{@value #STREAM}</td><td>lines {@code exec} delivered
 *       (partial lines included)</td></tr>
 *   <tr><td>{@value #FILE_BYTES}</td><td>bytes</td><td>{@value #OPERATION} ({@code read}, {@code write},
 *       {@code upload}, {@code download})</td><td>file content moved in or out of sandboxes: read and write as it
 *       flows; an upload without a progress listener counts the uploaded file's size (a directory counts
 *       nothing)</td></tr>
 * </table>
 *
 * <h2>Context</h2>
 *
 * While an observed session serves an operation, the session's id is in the Reactor {@code Context} under {@value
 * #SESSION_ID} and, wherever the SDK or the decorator logs for that operation, in the slf4j MDC under {@value
 * #MDC_SESSION_ID} (see {@link SessionIdThreadLocalAccessor}).
 *
 * <pre>{@code
 * double failedExecs = meterRegistry.get(SandboxObservationNames.EXEC)
 *         .tag(SandboxObservationNames.OUTCOME, SandboxObservationNames.OUTCOME_ERROR)
 *         .timers().stream().mapToLong(Timer::count).sum();
 * }</pre>
 */
public final class SandboxObservationNames {

    /** Observation and timer: creating a session. */
    public static final String CREATE = "sandbox.create";

    /** Observation and timer: attaching to an existing session. */
    public static final String ATTACH = "sandbox.attach";

    /** Observation and timer: running a command and streaming its output. */
    public static final String EXEC = "sandbox.exec";

    /** Observation and timer: running a command to the end and collecting its output. */
    public static final String RUN = "sandbox.run";

    /** Observation and timer: starting a background process. */
    public static final String START = "sandbox.start";

    /** Observation and timer: reading a file. */
    public static final String FILE_READ = "sandbox.file.read";

    /** Observation and timer: writing a file. */
    public static final String FILE_WRITE = "sandbox.file.write";

    /** Observation and timer: uploading a host file or directory. */
    public static final String FILE_UPLOAD = "sandbox.file.upload";

    /** Observation and timer: downloading to a host file or directory. */
    public static final String FILE_DOWNLOAD = "sandbox.file.download";

    /** Observation and timer: listing a directory. */
    public static final String FILE_LIST = "sandbox.file.list";

    /** Observation and timer: destroying a session. */
    public static final String DESTROY = "sandbox.destroy";

    /** Counter: bytes of command output. */
    public static final String OUTPUT_BYTES = "sandbox.output.bytes";

    /** Counter: lines of command output delivered by {@code exec}. */
    public static final String OUTPUT_LINES = "sandbox.output.lines";

    /** Counter: bytes of file content transferred. */
    public static final String FILE_BYTES = "sandbox.file.bytes";

    /** Low-cardinality tag: the provider's name. */
    public static final String PROVIDER = "sandbox.provider";

    /** Low-cardinality tag: how the operation ended. */
    public static final String OUTCOME = "sandbox.outcome";

    /** Value of {@link #OUTCOME}: completed. */
    public static final String OUTCOME_SUCCESS = "success";

    /** Value of {@link #OUTCOME}: failed. */
    public static final String OUTCOME_ERROR = "error";

    /** Value of {@link #OUTCOME}: the subscriber cancelled. */
    public static final String OUTCOME_CANCELLED = "cancelled";

    /** Low-cardinality tag: a command's exit code. */
    public static final String EXIT_CODE = "sandbox.exit.code";

    /** Low-cardinality tag: how a command ended ({@code ExecEvent.Termination}). */
    public static final String TERMINATION = "sandbox.termination";

    /** Low-cardinality tag: the reason a session ended under an operation ({@code SessionEndReason}). */
    public static final String END_REASON = "sandbox.end.reason";

    /** The value of a tag that does not apply to this call. */
    public static final String NONE = "none";

    /** Tag of the counters: the operation that moved the bytes or lines. */
    public static final String OPERATION = "sandbox.operation";

    /** Tag of the output counters: {@code stdout} or {@code stderr}. */
    public static final String STREAM = "sandbox.stream";

    /** High-cardinality tag, and Reactor {@code Context} key: the session's id. */
    public static final String SESSION_ID = "sandbox.session.id";

    /** The slf4j MDC key that holds the session's id while the SDK serves one of its operations. */
    public static final String MDC_SESSION_ID = "sandbox.session.id";

    private SandboxObservationNames() {}
}
