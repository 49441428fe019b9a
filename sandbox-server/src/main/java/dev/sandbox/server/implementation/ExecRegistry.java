package dev.sandbox.server.implementation;

import dev.sandbox.implementation.exec.Framed;
import dev.sandbox.implementation.wire.LineBatch;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;
import reactor.core.publisher.Flux;

/** The streaming execs the server holds, by the id each client chose. */
public final class ExecRegistry {
    private final Map<String, ExecChannel> channels = new ConcurrentHashMap<>();
    private final int windowBytes;
    private final Duration resumeTimeout;

    /**
     * Creates the registry.
     *
     * @param windowBytes the unacknowledged bytes each exec keeps for a resume
     * @param resumeTimeout how long an exec waits for its client to come back
     */
    public ExecRegistry(int windowBytes, Duration resumeTimeout) {
        this.windowBytes = windowBytes;
        this.resumeTimeout = resumeTimeout;
    }

    /**
     * The channel with this id, created and started if it does not exist (a repeated request attaches to it).
     *
     * @param id the client's exec id
     * @param sessionId the session
     * @param maxLineLength the command's line limit
     * @param slot takes a slot of the exec limit; gives the release action
     * @param events the command's events, subscribed once if the channel is new
     * @return the channel
     */
    public ExecChannel open(
            String id,
            String sessionId,
            int maxLineLength,
            Supplier<Runnable> slot,
            Supplier<Flux<Framed<LineBatch>>> events) {
        ExecChannel existing = channels.get(id);
        if (existing != null) {
            check(existing, sessionId);
            return existing;
        }
        Runnable release = slot.get();
        ExecChannel[] created = new ExecChannel[1];
        ExecChannel channel = channels.computeIfAbsent(
                id,
                k -> created[0] = new ExecChannel(
                        id,
                        sessionId,
                        windowBytes,
                        maxLineLength,
                        resumeTimeout,
                        release,
                        () -> channels.remove(id, created[0])));
        if (channel != created[0]) {
            release.run();
            check(channel, sessionId);
            return channel;
        }
        channel.start(events.get());
        return channel;
    }

    /**
     * An existing channel.
     *
     * @param id the exec id
     * @param sessionId the session it must belong to
     * @return the channel, or a 404 error
     */
    public ExecChannel get(String id, String sessionId) {
        ExecChannel c = channels.get(id);
        if (c == null) {
            throw new HttpError(404, "ExecNotFound", "no exec " + id + " in session " + sessionId);
        }
        check(c, sessionId);
        return c;
    }

    private static void check(ExecChannel c, String sessionId) {
        if (!c.sessionId().equals(sessionId)) {
            throw new HttpError(404, "ExecNotFound", "no exec " + c.id() + " in session " + sessionId);
        }
    }

    /**
     * How many execs are held.
     *
     * @return the count
     */
    public int size() {
        return channels.size();
    }

    /** Releases every channel (killing commands still running); used on shutdown. */
    public void releaseAll() {
        new ArrayList<>(channels.values()).forEach(ExecChannel::release);
    }
}
