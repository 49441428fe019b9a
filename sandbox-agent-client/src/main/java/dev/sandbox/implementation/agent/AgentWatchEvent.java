package dev.sandbox.implementation.agent;

import dev.sandbox.FileEvent;

/**
 * What a watch emits: first one {@link Kind#READY} (every watch is in place), then changes.
 *
 * @param kind what happened
 * @param path the file that changed (the watched directory for {@code READY} and {@code OVERFLOW})
 */
public record AgentWatchEvent(Kind kind, String path) {

    /** Kinds of watch event. */
    public enum Kind {
        /** The watch is live: changes from now on are seen. */
        READY,
        /** Created or moved in. */
        CREATED,
        /** Written and closed, or attributes changed. */
        MODIFIED,
        /** Deleted or moved out. */
        DELETED,
        /** Events were dropped. */
        OVERFLOW
    }

    /**
     * The public event.
     *
     * @return the file event
     */
    public FileEvent toFileEvent() {
        return switch (kind) {
            case READY -> new FileEvent(FileEvent.Kind.READY, path);
            case CREATED -> new FileEvent(FileEvent.Kind.CREATED, path);
            case MODIFIED -> new FileEvent(FileEvent.Kind.MODIFIED, path);
            case DELETED -> new FileEvent(FileEvent.Kind.DELETED, path);
            case OVERFLOW -> new FileEvent(FileEvent.Kind.OVERFLOW, path);
        };
    }
}
