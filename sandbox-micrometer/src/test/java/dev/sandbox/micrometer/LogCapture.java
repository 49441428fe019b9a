package dev.sandbox.micrometer;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.AppenderBase;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.slf4j.LoggerFactory;

/** Records what the SDK logs (logger {@code dev.sandbox}, DEBUG and up) with each line's MDC as it was then. */
final class LogCapture extends AppenderBase<ILoggingEvent> implements AutoCloseable {

    /** One log line: its logger, message and MDC. */
    record Line(String logger, String message, String thread, Map<String, String> mdc) {}

    private final List<Line> lines = new CopyOnWriteArrayList<>();
    private final Logger logger;

    private LogCapture(Logger logger) {
        this.logger = logger;
    }

    static LogCapture attach() {
        Logger logger = (Logger) LoggerFactory.getLogger("dev.sandbox");
        logger.setLevel(Level.DEBUG);
        LogCapture capture = new LogCapture(logger);
        capture.setContext(logger.getLoggerContext());
        capture.start();
        logger.addAppender(capture);
        return capture;
    }

    @Override
    protected void append(ILoggingEvent event) {
        lines.add(new Line(
                event.getLoggerName(),
                event.getFormattedMessage(),
                event.getThreadName(),
                Map.copyOf(event.getMDCPropertyMap())));
    }

    List<Line> lines() {
        return List.copyOf(lines);
    }

    /** The lines whose message contains the text. */
    List<Line> containing(String text) {
        return lines.stream().filter(l -> l.message().contains(text)).toList();
    }

    @Override
    public void close() {
        logger.detachAppender(this);
        stop();
    }
}
