package dev.sandbox.implementation.agent;

import java.nio.ByteBuffer;
import java.util.Objects;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * The file operations of one {@link AgentConnection} ({@link AgentConnection#files()}), each on its own stream:
 * reads, listings and watches delivered as demanded within the agent's credit, an atomic write fed within it, and
 * one-answer operations ({@code STAT}, {@code MKDIR}, ...) that wait at most {@link
 * AgentConnection.Options#replyTimeout()}.
 * Paths are absolute paths inside the sandbox.
 */
public final class AgentFileOps {
    private final AgentConnection conn;

    AgentFileOps(AgentConnection conn) {
        this.conn = conn;
    }

    /**
     * Reads a regular file.
     *
     * @param path absolute path
     * @param offset where to start
     * @param length at most this many bytes; {@code -1} (2^64-1): to the end
     * @return the content in chunks of at most 64 KiB; {@link AgentErrnoException} on failure
     */
    public Flux<ByteBuffer> read(String path, long offset, long length) {
        Objects.requireNonNull(path, "path");
        return new ItemStream<ByteBuffer>(conn, "read " + path, AgentConnection.READ_WINDOW, 0) {
            @Override
            ClientFrame request(int sid) {
                return new ClientFrame.Read(sid, path, offset, length, AgentConnection.READ_WINDOW);
            }

            @Override
            ByteBuffer map(Item it) {
                return ByteBuffer.wrap(it.buf, 0, it.len);
            }

            @Override
            public void onFrame(AgentFrame f, int len) {
                switch (f) {
                    case AgentFrame.Data d -> {
                        if (d.bytes().length > 0) {
                            push(Item.chunk(0, 0, d.bytes()));
                        }
                    }
                    case AgentFrame.End e -> complete();
                    case AgentFrame.Error e -> fault(new AgentErrnoException("read " + path, e.code(), e.message()));
                    default -> throw AgentStream.unexpected(f, what);
                }
            }
        };
    }

    /**
     * Writes a file atomically: a temporary file in the target's directory, renamed over it when {@code content}
     * completes. Cancelling aborts the write (the agent removes the temporary file).
     *
     * @param path absolute path
     * @param mode permission bits of a new file
     * @param parents create missing parent directories
     * @param content the bytes
     * @return the new file's info
     */
    public Mono<AgentFileInfo> write(String path, int mode, boolean parents, Publisher<ByteBuffer> content) {
        Objects.requireNonNull(path, "path");
        Objects.requireNonNull(content, "content");
        return Mono.create(sink -> {
            AgentStream st = new AgentStream(new AgentStream.Handler() {
                @Override
                public void onFrame(AgentFrame f, int length) {
                    switch (f) {
                        case AgentFrame.Ready r -> {}
                        case AgentFrame.Ok o -> {
                            if (o.info() == null) {
                                sink.error(new AgentProtocolException(
                                        "OK without info for WRITE on stream " + o.stream()));
                            } else {
                                sink.success(o.info());
                            }
                        }
                        case AgentFrame.Error e ->
                            sink.error(new AgentErrnoException("write " + path, e.code(), e.message()));
                        default -> throw AgentStream.unexpected(f, "WRITE " + path);
                    }
                }

                @Override
                public void fail(Throwable t) {
                    sink.error(t);
                }
            });
            st.source = content;
            sink.onCancel(() -> conn.cancel(st));
            Throwable e = conn.open(st, sid -> new ClientFrame.Write(sid, path, mode, parents ? 1 : 0), 0, 0);
            if (e != null) {
                sink.error(e);
            }
        });
    }

    /**
     * Lists a directory.
     *
     * @param path absolute path
     * @param depth 1: its entries; more: also those of subdirectories to that depth
     * @return the entries
     */
    public Flux<AgentFileInfo> list(String path, int depth) {
        Objects.requireNonNull(path, "path");
        if (depth < 1) {
            return Flux.error(new IllegalArgumentException("depth must be >= 1, was " + depth));
        }
        return new ItemStream<AgentFileInfo>(conn, "list " + path, AgentConnection.ITEM_WINDOW, 0) {
            @Override
            ClientFrame request(int sid) {
                return new ClientFrame.ListDir(sid, path, depth, AgentConnection.ITEM_WINDOW);
            }

            @Override
            AgentFileInfo map(Item it) {
                return (AgentFileInfo) it.value;
            }

            @Override
            public void onFrame(AgentFrame f, int length) {
                switch (f) {
                    case AgentFrame.Entry e -> push(Item.value(e.info(), length));
                    case AgentFrame.End e -> complete();
                    case AgentFrame.Error e -> fault(new AgentErrnoException("list " + path, e.code(), e.message()));
                    default -> throw AgentStream.unexpected(f, what);
                }
            }
        };
    }

    /**
     * {@code lstat} of a path.
     *
     * @param path absolute path
     * @return its info
     */
    public Mono<AgentFileInfo> stat(String path) {
        Objects.requireNonNull(path, "path");
        return UnaryCall.send(conn, "stat " + path, false, sid -> new ClientFrame.Stat(sid, path))
                .handle((f, sink) -> {
                    if (f instanceof AgentFrame.Ok ok && ok.info() != null) {
                        sink.next(ok.info());
                    } else {
                        sink.error(new AgentProtocolException("OK without info for STAT on stream " + f.stream()));
                    }
                });
    }

    /**
     * Creates a directory.
     *
     * @param path absolute path
     * @param mode its permission bits
     * @param parents create missing parents, and succeed on an existing directory
     * @return completes when done
     */
    public Mono<Void> mkdir(String path, int mode, boolean parents) {
        Objects.requireNonNull(path, "path");
        return UnaryCall.send(conn, "mkdir " + path, false, sid -> new ClientFrame.Mkdir(sid, path, mode, parents))
                .then();
    }

    /**
     * Removes a file or directory.
     *
     * @param path absolute path
     * @param recursive remove a directory's content too (never following symlinks)
     * @return completes when done
     */
    public Mono<Void> remove(String path, boolean recursive) {
        Objects.requireNonNull(path, "path");
        return UnaryCall.send(conn, "remove " + path, false, sid -> new ClientFrame.Remove(sid, path, recursive))
                .then();
    }

    /**
     * Renames ({@code rename(2)}).
     *
     * @param from absolute path
     * @param to absolute path
     * @return completes when done
     */
    public Mono<Void> move(String from, String to) {
        Objects.requireNonNull(from, "from");
        Objects.requireNonNull(to, "to");
        return UnaryCall.send(conn, "move " + from + " to " + to, false, sid -> new ClientFrame.Move(sid, from, to))
                .then();
    }

    /**
     * Makes a symbolic link ({@code symlink(2)}).
     *
     * @param path absolute path of the link
     * @param target its target, stored as given
     * @return completes when done
     */
    public Mono<Void> symlink(String path, String target) {
        Objects.requireNonNull(path, "path");
        Objects.requireNonNull(target, "target");
        return UnaryCall.send(conn, "symlink " + path, false, sid -> new ClientFrame.Symlink(sid, path, target))
                .then();
    }

    /**
     * Sets permission bits, not following a final symlink (a symlink is left as it is).
     *
     * @param path absolute path
     * @param mode the bits, {@code 07777}
     * @return completes when done
     */
    public Mono<Void> chmod(String path, int mode) {
        Objects.requireNonNull(path, "path");
        return UnaryCall.send(conn, "chmod " + path, false, sid -> new ClientFrame.Chmod(sid, path, mode))
                .then();
    }

    /**
     * Watches a directory. The first element is {@link AgentWatchEvent.Kind#READY} once every watch is in place,
     * then changes until cancelled.
     *
     * @param path absolute path of a directory
     * @param recursive also its subdirectories, including new ones
     * @return the events
     */
    public Flux<AgentWatchEvent> watch(String path, boolean recursive) {
        Objects.requireNonNull(path, "path");
        return new ItemStream<AgentWatchEvent>(conn, "watch " + path, AgentConnection.ITEM_WINDOW, 0) {
            private boolean ready;

            @Override
            ClientFrame request(int sid) {
                return new ClientFrame.Watch(sid, path, recursive, AgentConnection.ITEM_WINDOW);
            }

            @Override
            AgentWatchEvent map(Item it) {
                return (AgentWatchEvent) it.value;
            }

            @Override
            public void onFrame(AgentFrame f, int length) {
                switch (f) {
                    case AgentFrame.Ready r -> {
                        if (ready) {
                            throw AgentStream.unexpected(f, what + ", a second READY");
                        }
                        ready = true;
                        push(Item.value(new AgentWatchEvent(AgentWatchEvent.Kind.READY, path), 0));
                    }
                    case AgentFrame.Event e -> {
                        AgentWatchEvent.Kind kind = switch (e.kind()) {
                            case 1 -> AgentWatchEvent.Kind.CREATED;
                            case 2 -> AgentWatchEvent.Kind.MODIFIED;
                            case 3 -> AgentWatchEvent.Kind.DELETED;
                            default -> AgentWatchEvent.Kind.OVERFLOW;
                        };
                        push(Item.value(new AgentWatchEvent(kind, e.path()), length));
                    }
                    case AgentFrame.Error e -> fault(new AgentErrnoException("watch " + path, e.code(), e.message()));
                    case AgentFrame.End e -> complete();
                    default -> throw AgentStream.unexpected(f, what);
                }
            }
        };
    }
}
