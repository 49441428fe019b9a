package dev.sandbox.implementation.agentsession;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The agent-held processes and PTYs of one session that this provider has handles to (started here, or found by id),
 * each with its exit watcher. Bounded like the agent's own list: beyond {@link #MAX_ENDED} ended ones, the oldest
 * ended go first (the agent keeps them; a later lookup finds them again).
 */
final class AgentProcesses {
    private static final int MAX_ENDED = 256;

    private final Map<String, AgentHeldProcess> known = new LinkedHashMap<>(); // guarded by itself

    AgentHeldProcess get(String id) {
        synchronized (known) {
            return known.get(id);
        }
    }

    /**
     * Adds a process unless one with its id is known already.
     *
     * @return the one kept, and whether it is the given (new) one: only that one needs watching
     */
    AgentHeldProcess addIfAbsent(AgentHeldProcess p) {
        synchronized (known) {
            AgentHeldProcess old = known.putIfAbsent(p.id, p);
            if (old != null) {
                return old;
            }
            int ended = 0;
            for (AgentHeldProcess q : known.values()) {
                if (!q.running()) {
                    ended++;
                }
            }
            Iterator<AgentHeldProcess> it = known.values().iterator();
            while (ended > MAX_ENDED && it.hasNext()) {
                AgentHeldProcess q = it.next();
                if (!q.running()) {
                    it.remove();
                    ended--;
                }
            }
            return p;
        }
    }

    /** Running ones this provider knows of: a PTY or not. */
    int running(boolean terminal) {
        synchronized (known) {
            int n = 0;
            for (AgentHeldProcess q : known.values()) {
                if (q.terminal == terminal && q.running()) {
                    n++;
                }
            }
            return n;
        }
    }

    /** Readers of PTY output through this provider. */
    int attached() {
        synchronized (known) {
            int n = 0;
            for (AgentHeldProcess q : known.values()) {
                n += q.attached.get();
            }
            return n;
        }
    }

    /**
     * Stops every exit watcher (this provider closes, or the session ended); the processes go on in the agent.
     *
     * @param why the error for those still waiting for an exit through this provider
     */
    void unwatchAll(java.util.function.Supplier<RuntimeException> why) {
        List<AgentHeldProcess> all;
        synchronized (known) {
            all = new ArrayList<>(known.values());
        }
        all.forEach(p -> p.unwatch(why.get()));
    }
}
