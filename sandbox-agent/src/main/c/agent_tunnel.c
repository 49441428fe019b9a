/*
 * agent_tunnel.c: CONNECT (PROTOCOL.md "CONNECT"), a TCP connection from the agent to 127.0.0.1:port carried on a
 * stream: the way the host reaches a server in a sandbox that has no network.
 * LISTEN's accepted connections (agent_listen.c) are the same streams from their ACCEPTED on (tunnel_accepted).
 *
 * The socket connects without blocking the loop: its completion is an epoll event (SO_ERROR tells how it went), and
 * one still connecting after CONNECT_TIMEOUT_MS is ended by tunnel_expire, which the loop's timers call (the
 * connecting tunnels are a list in the order they began, so the first is the first to time out). Connected, the
 * socket is watched edge-triggered with "readable"/"writable" flags, as a process's pipes are:
 * - what it receives leaves as DATA frames while the stream has credit and the connection has room; without either
 *   it is not read, so the server blocks in write() while every other stream flows (a peek still sees its end);
 * - the client's DATA waits in a buffer until the socket takes it; the client may only send what the agent credited
 *   (STDIN_CREDIT at READY, then CREDIT as the socket takes bytes), so that buffer never holds more than that;
 * - the client's EOF shuts the socket's sending side once the buffer is empty; the socket's own end ends the stream
 *   (END, or ERROR when it was reset or a write to it failed), after every byte it received was sent.
 */
#include "agent.h"

#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

struct tunnel {
    struct stream *s;
    struct tunnel *dprev, *dnext; /* G.dial_head's list, while connecting */
    struct evtag tag;
    uint16_t port;
    uint8_t connecting, readable, writable;
    uint8_t eof_in;               /* the client sent EOF: shut the sending side once buf is written */
    uint8_t shut;                 /* it was shut */
    int werr;                     /* a write failed with this errno: the client's bytes are dropped from then on */
    int64_t deadline;             /* connecting: when it times out (mono_ms) */
    uint8_t *buf;                 /* the client's bytes the socket has not taken yet: [off, len) */
    size_t len, off;
};

static void dial_unlink(struct tunnel *t) {
    if (!t->connecting) return;
    t->connecting = 0;
    if (t->dprev) t->dprev->dnext = t->dnext; else G.dial_head = t->dnext;
    if (t->dnext) t->dnext->dprev = t->dprev; else G.dial_tail = t->dprev;
    t->dprev = t->dnext = NULL;
}

static void dial_link(struct tunnel *t) {
    t->connecting = 1;
    t->deadline = mono_ms() + CONNECT_TIMEOUT_MS;
    t->dprev = G.dial_tail;
    if (G.dial_tail) G.dial_tail->dnext = t; else G.dial_head = t;
    G.dial_tail = t;
}

/* Ends the stream with ERROR err naming the port (a failed connect, a reset, a failed write). */
static void tunnel_fail(struct stream *s, int err, const char *what) {
    send_error(s->c, s->id, (uint32_t)err, "%s port %u: %s", what, s->tun->port, strerror(err));
    stream_drop(s);
}

/* The socket is connected: its bytes may flow. The caller sent the stream's first frame (READY, ACCEPTED) already, so
 * that no DATA comes before it. */
static void tunnel_up(struct stream *s) {
    struct tunnel *t = s->tun;
    dial_unlink(t);
    t->readable = t->writable = 1; /* edge-triggered: what came with the connection may have been reported already */
    s->data_credit = t->eof_in ? 0 : STDIN_CREDIT;
    task_ready(&s->task);
}

static void connected(struct stream *s) {
    struct fw f = fw_begin(s->c, A_READY, s->id, 4);
    fw_u32(&f, STDIN_CREDIT);
    fw_end(&f);
    tunnel_up(s);
}

/*
 * A TCP socket (non-blocking) carried on stream id of c from now on: the stream, its tunnel, epoll, the idle count.
 * credit: the stream's DATA credit toward the client; port: what error messages name; listener: the LISTEN stream
 * it was accepted on, or 0. NULL when epoll refused it (errno set): the socket is closed and the id used up, no
 * frame sent.
 */
struct stream *tunnel_new(struct conn *c, uint32_t id, int fd, uint16_t port, uint32_t credit, uint32_t listener) {
    struct stream *s = stream_new(c, id, ST_TUNNEL);
    struct tunnel *t = xcalloc(1, sizeof *t);
    s->tun = t;
    G.tunnels++;
    s->fd = fd;
    s->credit = credit;
    s->listener = listener;
    t->s = s;
    t->port = port;
    t->tag.kind = EV_TUNNEL;
    t->tag.obj = s;
    if (ep_add(fd, EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET, &t->tag) < 0) {
        int err = errno;
        stream_drop(s);
        errno = err;
        return NULL;
    }
    return s;
}

/* An accepted connection of a LISTEN stream (agent_listen.c): ACCEPTED on its new id, then as a connected CONNECT. */
int tunnel_accepted(struct conn *c, uint32_t id, int fd, uint16_t port, uint32_t credit, uint32_t listener,
                    uint16_t peer_port) {
    struct stream *s = tunnel_new(c, id, fd, port, credit, listener);
    if (!s) return -1;
    struct fw f = fw_begin(c, A_ACCEPTED, id, 10);
    fw_u32(&f, listener);
    fw_u16(&f, peer_port);
    fw_u32(&f, STDIN_CREDIT);
    fw_end(&f);
    tunnel_up(s);
    return 0;
}

void h_connect(struct req *q) {
    uint16_t port = rd_u16(&q->r);
    uint32_t credit = rd_u32(&q->r);
    if (!req_begin(q, 1, NULL)) return;
    if (port == 0) {
        req_fail(q, EINVAL, "connect to port 0: the port must be 1..65535");
        return;
    }
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        int err = errno;
        req_fail(q, (uint32_t)err, "connect to port %u: %s", port, strerror(err));
        return;
    }
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port), .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    int rc = connect(fd, (struct sockaddr *)&a, sizeof a);
    if (rc < 0 && errno != EINPROGRESS && errno != EINTR) { /* EINTR: it goes on without us, as EINPROGRESS */
        int err = errno;
        close(fd);
        req_fail(q, (uint32_t)err, "connect to port %u: %s", port, strerror(err));
        return;
    }
    struct stream *s = tunnel_new(q->c, q->id, fd, port, credit, 0);
    if (!s) {
        int err = errno;
        send_error(q->c, q->id, (uint32_t)err, "epoll for port %u: %s", port, strerror(err));
        return;
    }
    if (rc == 0) connected(s);
    else dial_link(s->tun);
}

/* The loop's timers: ends the connects that took too long; the ms until the next one times out, or -1. */
int64_t tunnel_expire(int64_t mono) {
    while (G.dial_head) {
        int64_t left = G.dial_head->deadline - mono;
        if (left > 0) return left;
        tunnel_fail(G.dial_head->s, ETIMEDOUT, "connect to");
    }
    return -1;
}

/* An epoll event of the socket: a connect's completion, or it may be read or written. */
void tunnel_event(struct stream *s, uint32_t events) {
    struct tunnel *t = s->tun;
    if (t->connecting) {
        if (!(events & (EPOLLOUT | EPOLLERR | EPOLLHUP))) return;
        int err = 0;
        socklen_t len = sizeof err;
        if (getsockopt(s->fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0) err = errno;
        if (err) tunnel_fail(s, err, "connect to");
        else connected(s);
        return;
    }
    if (events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR)) t->readable = 1;
    if (events & (EPOLLOUT | EPOLLHUP | EPOLLERR)) t->writable = 1;
    task_ready(&s->task);
}

/* Writes the buffered bytes while the socket takes them; returns how many it took (or were dropped after a failed
 * write). Shuts the sending side once everything before the client's EOF was written. */
static size_t tunnel_flush(struct stream *s) {
    struct tunnel *t = s->tun;
    size_t taken = 0;
    while (t->off < t->len && t->writable) {
        ssize_t n = send(s->fd, t->buf + t->off, t->len - t->off, MSG_NOSIGNAL);
        if (n > 0) {
            t->off += (size_t)n;
            taken += (size_t)n;
        } else if (n < 0 && errno == EINTR) {
            continue;
        } else if (n < 0 && errno == EAGAIN) {
            t->writable = 0;
        } else { /* EPIPE, ECONNRESET: the rest is dropped; the read side sends what came before and ends it */
            t->werr = n < 0 ? errno : EPIPE;
            taken += t->len - t->off;
            t->off = t->len;
            t->readable = 1;
        }
    }
    if (t->off == t->len && t->buf) {
        free(t->buf);
        t->buf = NULL;
        t->len = t->off = 0;
    }
    if (t->eof_in && !t->shut && !t->buf && !t->werr) {
        shutdown(s->fd, SHUT_WR); /* a failure (the connection is gone) shows on the read side */
        t->shut = 1;
    }
    return taken;
}

/* Bytes the socket took return to the client as credit (none after its EOF: it sends nothing more). */
static void credit_back(struct stream *s, size_t n) {
    if (n == 0 || s->tun->eof_in) return;
    s->data_credit += n;
    send_credit(s->c, s->id, 0, (uint32_t)n);
}

/* DATA on a CONNECT stream, within the credit the agent gave (h_stream_op checked it): buffered, then written. */
void tunnel_data(struct stream *s, const uint8_t *b, size_t n) {
    struct tunnel *t = s->tun;
    if (t->werr) { /* the socket takes nothing more: dropped, and credited so the client is not left waiting */
        credit_back(s, n);
        return;
    }
    if (t->off > 0) {
        memmove(t->buf, t->buf + t->off, t->len - t->off);
        t->len -= t->off;
        t->off = 0;
    }
    uint8_t *nb = realloc(t->buf, t->len + n); /* at most STDIN_CREDIT: the client's credit bounds it */
    if (!nb) fatal("out of memory");
    t->buf = nb;
    memcpy(t->buf + t->len, b, n);
    t->len += n;
    credit_back(s, tunnel_flush(s));
}

/* EOF on a CONNECT stream: the socket's sending side is shut once the buffer is written; the stream stays open. */
void tunnel_eof(struct stream *s) {
    struct tunnel *t = s->tun;
    if (t->eof_in) return;
    t->eof_in = 1;
    s->data_credit = 0;
    if (!t->connecting) tunnel_flush(s);
}

/* The socket's end: END after the last DATA, or ERROR for a reset or an earlier failed write. */
static void tunnel_end(struct stream *s, int err) {
    if (!err) err = s->tun->werr;
    if (err) {
        tunnel_fail(s, err, "connection to");
        return;
    }
    send_empty(s->c, A_END, s->id);
    stream_drop(s);
}

/* The stream's task: the client's bytes to the socket, the socket's bytes to the client within credit and room. */
void tunnel_run(struct stream *s) {
    struct tunnel *t = s->tun;
    struct conn *c = s->c;
    if (t->connecting) return;
    credit_back(s, tunnel_flush(s));
    for (int k = 0; k < BURST; k++) {
        if (!t->readable || !room(c)) return; /* conn_flush wakes every stream once the connection has room */
        ssize_t n;
        if (s->credit == 0) { /* not read, so the server blocks; yet its end, with nothing left, is seen */
            uint8_t one;
            n = recv(s->fd, &one, 1, MSG_PEEK | MSG_DONTWAIT);
            if (n > 0) return; /* bytes wait for CREDIT */
        } else {
            size_t want = s->credit < CHUNK ? (size_t)s->credit : CHUNK;
            uint8_t *o = out_reserve(c, 9 + want);
            n = recv(s->fd, o + 9, want, MSG_DONTWAIT);
            if (n > 0) {
                put32(o, (uint32_t)n);
                o[4] = A_DATA;
                put32(o + 5, s->id);
                c->ob_tail += 9 + (size_t)n;
                mark_dirty(c);
                s->credit -= (uint64_t)n;
                continue;
            }
        }
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && errno == EAGAIN) {
            t->readable = 0;
            return;
        }
        tunnel_end(s, n == 0 ? 0 : errno);
        return;
    }
    task_ready(&s->task); /* BURST frames: let the others have a turn */
}

/* stream_drop's part: the socket closed (the server sees its end), the buffer freed, the connecting list left. */
void tunnel_drop(struct stream *s) {
    struct tunnel *t = s->tun;
    if (!t) return;
    dial_unlink(t);
    if (s->fd >= 0) {
        ep_del(s->fd);
        close(s->fd);
        s->fd = -1;
    }
    free(t->buf);
    s->tun = NULL;
    if (s->listener) listen_release(s->c, s->listener);
    if (--G.tunnels == 0) G.last_activity = mono_ms(); /* the idle time counts from the last one's end */
    bury(t); /* this turn's epoll events may still name its tag */
}
