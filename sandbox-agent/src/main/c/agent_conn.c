/*
 * agent_conn.c: connections. Accepting (at most MAX_CONNS), the first read of a socket that may hand over a relay's
 * stdin and stdout, reading whole frames off the input (at most one 2 MiB payload held, in its own buffer when it
 * exceeds the input buffer) while the output queue has room, flushing the output queue, and closing: every stream
 * dropped, queued frames given DRAIN_MS to leave.
 */
#include "agent.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

void conn_finish(struct conn *c) {
    if (c->dead) return;
    c->dead = 1;
    task_cancel(&c->task);
    ep_del(c->in_fd);
    if (c->out_fd != c->in_fd) ep_del(c->out_fd);
    close(c->in_fd);
    if (c->out_fd != c->in_fd) close(c->out_fd);
    if (c->life_fd >= 0) {
        ep_del(c->life_fd);
        close(c->life_fd); /* the relay sees the end and exits */
    }
    free(c->ob);
    free(c->ib);
    free(c->big);
    free(c->hash);
    c->ob = c->ib = c->big = NULL;
    c->hash = NULL;
    if (c->prev) c->prev->next = c->next; else G.conns = c->next;
    if (c->next) c->next->prev = c->prev;
    G.nconns--;
    bury(c);
}

/* Ends a connection: every stream goes (foreground processes are killed); queued frames get DRAIN_MS to leave. */
void conn_close(struct conn *c) {
    if (c->closing || c->dead) return;
    c->closing = 1;
    while (c->streams) stream_drop(c->streams);
    free(c->big);
    c->big = NULL;
    if (pending(c) == 0) conn_finish(c);
    else c->close_deadline = mono_ms() + DRAIN_MS;
}

void bad_frame(struct conn *c, const char *fmt, ...) {
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    send_error(c, 0, E_BAD_FRAME, "%s", msg);
    conn_close(c);
}

void conn_flush(struct conn *c) {
    int was_full = pending(c) >= OUT_BOUND;
    while (pending(c) && c->writable) {
        ssize_t n = write(c->out_fd, c->ob + c->ob_head, pending(c));
        if (n > 0) {
            c->ob_head += (size_t)n;
        } else if (n < 0 && errno == EINTR) {
            continue;
        } else if (n < 0 && errno == EAGAIN) {
            c->writable = 0;
        } else { /* the peer is gone */
            c->ob_head = c->ob_tail = 0;
            conn_close(c);
            conn_finish(c);
            return;
        }
    }
    if (pending(c) == 0) {
        c->ob_head = c->ob_tail = 0;
        if (c->ob_cap > 65536) { /* an idle connection keeps little */
            free(c->ob);
            c->ob = NULL;
            c->ob_cap = 0;
        }
        if (c->closing) {
            conn_finish(c);
            return;
        }
    }
    if (was_full && pending(c) < OUT_BOUND && !c->closing) { /* resume every source of this connection */
        for (struct stream *s = c->streams; s; s = s->next) {
            if (s->kind == ST_SPAWN && s->proc) task_ready(&s->proc->task);
            else task_ready(&s->task);
        }
        task_ready(&c->task);
    }
}

/* Parses whole frames out of the input while output has room. 0 when it stopped for room or the close. */
static int conn_parse(struct conn *c) {
    while (!c->closing && !c->dead) {
        if (pending(c) >= OUT_BOUND) return 0;
        if (c->big) {
            if (c->big_got < c->big_len) return 1;
            uint8_t *b = c->big;
            c->big = NULL;
            handle_frame(c, c->hdr[4], (uint32_t)c->hdr[5] << 24 | (uint32_t)c->hdr[6] << 16 |
                                           (uint32_t)c->hdr[7] << 8 | c->hdr[8], b, c->big_len);
            free(b);
            continue;
        }
        size_t avail = c->ib_len - c->ib_off;
        if (avail < 9) break;
        const uint8_t *h = c->ib + c->ib_off;
        uint32_t len = (uint32_t)h[0] << 24 | (uint32_t)h[1] << 16 | (uint32_t)h[2] << 8 | h[3];
        uint32_t id = (uint32_t)h[5] << 24 | (uint32_t)h[6] << 16 | (uint32_t)h[7] << 8 | h[8];
        if (len > MAX_CLIENT_PAYLOAD) {
            bad_frame(c, "frame length %u beyond 2 MiB", len);
            return 0;
        }
        if (!known_type(h[4])) {
            bad_frame(c, "frame type 0x%02x on stream %u", h[4], id);
            return 0;
        }
        if (avail - 9 >= len) {
            c->ib_off += 9 + len;
            handle_frame(c, h[4], id, h + 9, len);
        } else if (9 + (size_t)len <= INBUF_CAP) {
            break;
        } else { /* a payload beyond the input buffer gets its own, exactly its size */
            memcpy(c->hdr, h, 9);
            c->big_len = len;
            c->big_got = avail - 9;
            c->big = xmalloc(len);
            memcpy(c->big, h + 9, c->big_got);
            c->ib_off = c->ib_len;
        }
    }
    if (c->ib && c->ib_off) {
        memmove(c->ib, c->ib + c->ib_off, c->ib_len - c->ib_off);
        c->ib_len -= c->ib_off;
        c->ib_off = 0;
    }
    return !c->closing && !c->dead;
}

/*
 * The first read of a socket connection. A relay whose stdin and stdout are pipes (docker exec's) hands them over:
 * one byte HANDOFF with both fds (SCM_RIGHTS). The agent then reads and writes those pipes itself, one copy and one
 * process fewer on every byte, and keeps the socket only to learn when the relay ends (it ends the connection) and
 * to tell the relay when the connection ended (closing it). Anything else is the protocol's first bytes.
 * Returns the bytes read into ib (0 after a handoff), -1 on EAGAIN, -2 at the connection's end.
 */
static ssize_t conn_first_read(struct conn *c) {
    if (!c->ib) c->ib = xmalloc(INBUF_CAP);
    union {
        char buf[CMSG_SPACE(2 * sizeof(int))];
        struct cmsghdr align;
    } u;
    struct iovec iov = {.iov_base = c->ib + c->ib_len, .iov_len = INBUF_CAP - c->ib_len};
    struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf, .msg_controllen = sizeof u.buf};
    ssize_t n = recvmsg(c->in_fd, &m, MSG_CMSG_CLOEXEC);
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) return -1;
    if (n <= 0) return -2;
    int fds[2] = {-1, -1}, nfds = 0;
    for (struct cmsghdr *h = CMSG_FIRSTHDR(&m); h; h = CMSG_NXTHDR(&m, h)) {
        if (h->cmsg_level != SOL_SOCKET || h->cmsg_type != SCM_RIGHTS) continue;
        size_t k = (h->cmsg_len - CMSG_LEN(0)) / sizeof(int);
        for (size_t i = 0; i < k; i++) {
            int fd;
            memcpy(&fd, CMSG_DATA(h) + i * sizeof(int), sizeof fd);
            if (nfds < 2) fds[nfds++] = fd;
            else close(fd);
        }
    }
    c->handoff = 0;
    if (n == 1 && c->ib[c->ib_len] == HANDOFF && nfds == 2 && !(m.msg_flags & MSG_CTRUNC)) {
        set_nonblock(fds[0]);
        set_nonblock(fds[1]);
        ep_del(c->in_fd);
        c->life_fd = c->in_fd;
        c->in_fd = fds[0];
        c->out_fd = fds[1];
        c->tlife.kind = EV_CONN_LIFE;
        c->tlife.obj = c;
        if (ep_add(c->in_fd, EPOLLIN | EPOLLRDHUP | EPOLLET, &c->tin) < 0
                || ep_add(c->out_fd, EPOLLOUT | EPOLLET, &c->tout) < 0
                || ep_add(c->life_fd, EPOLLIN | EPOLLRDHUP | EPOLLET, &c->tlife) < 0) {
            return -2; /* fds epoll cannot watch (the relay only hands over pipes and sockets) */
        }
        c->readable = c->writable = 1;
        return 0;
    }
    for (int i = 0; i < nfds; i++) close(fds[i]);
    return n;
}

void conn_run(struct conn *c) {
    for (int k = 0; k < 16; k++) {
        if (!conn_parse(c)) return;
        if (!c->readable) return;
        ssize_t n;
        if (c->handoff) {
            n = conn_first_read(c);
            if (n == -1) {
                c->readable = 0;
                return;
            }
            if (n == -2) {
                conn_close(c);
                return;
            }
            c->ib_len += (size_t)n;
            continue;
        }
        if (c->big) {
            n = read(c->in_fd, c->big + c->big_got, c->big_len - c->big_got);
        } else {
            if (!c->ib) c->ib = xmalloc(INBUF_CAP);
            n = read(c->in_fd, c->ib + c->ib_len, INBUF_CAP - c->ib_len);
        }
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && errno == EAGAIN) {
            c->readable = 0;
            return;
        }
        if (n <= 0) { /* end of the connection (or an error on it) */
            conn_close(c);
            return;
        }
        if (c->big) c->big_got += (size_t)n;
        else c->ib_len += (size_t)n;
    }
    task_ready(&c->task); /* a busy peer: let the others have a turn */
}

struct conn *conn_new(int in_fd, int out_fd) {
    struct conn *c = xcalloc(1, sizeof *c);
    c->task.kind = TK_CONN;
    c->in_fd = in_fd;
    c->out_fd = out_fd;
    c->life_fd = -1;
    memset(c->rhead, 0xff, sizeof c->rhead);
    c->tin.kind = EV_CONN_IN;
    c->tin.obj = c;
    c->tout.kind = EV_CONN_OUT;
    c->tout.obj = c;
    c->readable = 1;
    c->writable = 1;
    if (in_fd == out_fd) {
        if (ep_add(in_fd, EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET, &c->tin) < 0) fatal("epoll_ctl connection");
    } else {
        if (ep_add(in_fd, EPOLLIN | EPOLLRDHUP | EPOLLET, &c->tin) < 0) fatal("epoll_ctl stdin");
        if (ep_add(out_fd, EPOLLOUT | EPOLLET, &c->tout) < 0) fatal("epoll_ctl stdout");
    }
    c->next = G.conns;
    if (G.conns) G.conns->prev = c;
    G.conns = c;
    G.nconns++;
    task_ready(&c->task);
    return c;
}

/* Accepts what waits on a listening socket; handoff: whether its first read may hand over a relay's pipes (the
 * abstract socket, which only processes in the sandbox reach; the channel socket's peer is the host, never a relay). */
void accept_all(int lfd, int handoff) {
    for (int k = 0; k < 64; k++) {
        int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) return;
        if (G.nconns >= MAX_CONNS) { /* one small frame fits any socket buffer */
            uint8_t f[9 + 8 + 64];
            const char *m = "at most 64 connections";
            size_t ml = strlen(m);
            put32(f, (uint32_t)(8 + ml));
            f[4] = A_ERROR;
            put32(f + 5, 0);
            put32(f + 9, E_LIMIT);
            put32(f + 13, (uint32_t)ml);
            memcpy(f + 17, m, ml);
            ssize_t rc = write(fd, f, 17 + ml);
            (void)rc;
            close(fd);
            continue;
        }
        conn_new(fd, fd)->handoff = handoff;
    }
}
