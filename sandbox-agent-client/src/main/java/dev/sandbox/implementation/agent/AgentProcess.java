package dev.sandbox.implementation.agent;

import dev.sandbox.ProcessLaunchException;
import dev.sandbox.UnsupportedFeatureException;
import dev.sandbox.implementation.process.RawEvent;
import dev.sandbox.implementation.process.SpawnedProcess;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

/**
 * A foreground process on its own agent stream. {@link #events()} sends the {@code SPAWN} when subscribed (nothing is
 * sent or buffered before), emits stdout and stderr chunks as demanded (credit goes back to the agent only as the
 * subscriber consumes, so a subscriber that stops requesting leaves the process blocked in {@code write()}), then one
 * {@link RawEvent.Exited}. Cancelling sends {@code CLOSE}: the agent kills the process group. A launch failure is a
 * {@link ProcessLaunchException} naming the agent's {@code errno}.
 */
public final class AgentProcess implements SpawnedProcess {
    private static final int SIGKILL = 9;

    private final AgentSpawn spec;
    private final Events events;
    private final Sinks.One<Long> started = Sinks.one();
    private volatile long pid = -1;
    private boolean subscribed; // guarded by this
    private boolean killedEarly; // guarded by this

    AgentProcess(AgentConnection conn, AgentSpawn spec) {
        this.spec = spec;
        this.events = new Events(conn);
    }

    /**
     * The pid inside the sandbox, once {@code STARTED} arrived; -1 before.
     *
     * @return the pid or -1
     */
    @Override
    public long pid() {
        return pid;
    }

    /**
     * The pid once the process started: errors like {@link #events()} when it cannot start; empty when the events
     * were cancelled first.
     *
     * @return the pid
     */
    public Mono<Long> started() {
        return started.asMono();
    }

    @Override
    public Flux<RawEvent> events() {
        return events;
    }

    @Override
    public void kill() {
        synchronized (this) {
            if (!subscribed) {
                killedEarly = true;
                return;
            }
        }
        events.conn.writer.signal(events.st, SIGKILL);
    }

    @Override
    public void signal(int signal) {
        if (signal == SIGKILL) {
            kill();
            return;
        }
        events.conn.writer.signal(events.st, signal);
    }

    @Override
    public void resize(int cols, int rows) {
        if (!spec.pty()) {
            throw new UnsupportedFeatureException("a process without a terminal", "terminal resize");
        }
        events.conn.writer.resize(events.st, cols, rows);
    }

    /** The agent's launch error as the public one. */
    static Throwable launchError(AgentErrnoException e) {
        return new ProcessLaunchException(
                "cannot start the command: " + e.getMessage(), e, AgentErrnoException.retryable(e.code()));
    }

    private final class Events extends ItemStream<RawEvent> {
        Events(AgentConnection conn) {
            super(conn, "SPAWN " + spec.argv().get(0), AgentConnection.WINDOW, 1, 2);
            st.source = spec.stdin();
        }

        @Override
        boolean beforeOpen() {
            synchronized (AgentProcess.this) {
                subscribed = true;
                if (killedEarly) {
                    // killed before it started: it never will
                    push(Item.value(new RawEvent.Exited(SIGKILL, true), 0));
                    complete();
                    started.tryEmitEmpty();
                    return false;
                }
            }
            return true;
        }

        @Override
        ClientFrame request(int id) {
            int flags = (spec.pty() ? AgentFrames.FLAG_PTY : 0) | (spec.stdin() != null ? AgentFrames.FLAG_STDIN : 0);
            return new ClientFrame.Spawn(
                    id,
                    flags,
                    spec.cols(),
                    spec.rows(),
                    AgentConnection.WINDOW,
                    0,
                    0,
                    spec.cwd(),
                    spec.argv(),
                    spec.envEntries());
        }

        @Override
        RawEvent map(Item it) {
            return it.value == null
                    ? new RawEvent.Chunk(it.fd == 1 ? RawEvent.STDOUT : RawEvent.STDERR, it.bytes())
                    : (RawEvent) it.value;
        }

        @Override
        public void onFrame(AgentFrame f, int length) {
            switch (f) {
                case AgentFrame.Started s -> {
                    pid = s.pid();
                    started.tryEmitValue(s.pid());
                }
                case AgentFrame.Output o -> {
                    if (o.bytes().length > 0) { // an empty chunk would be queued at no cost: never
                        push(Item.chunk(o.fd(), o.offset(), o.bytes()));
                    }
                }
                case AgentFrame.Exit e -> {
                    push(Item.value(new RawEvent.Exited(e.status(), e.signaled(), e.oomKilled()), 0));
                    complete();
                    started.tryEmitEmpty();
                }
                case AgentFrame.Error e -> {
                    Throwable t = launchError(new AgentErrnoException(what, e.code(), e.message()));
                    started.tryEmitError(t);
                    fault(t);
                }
                default -> throw AgentStream.unexpected(f, what);
            }
        }

        @Override
        public void fail(Throwable t) {
            started.tryEmitError(t);
            super.fail(t);
        }

        @Override
        void onCancel() {
            started.tryEmitEmpty();
        }
    }
}
