/*
 * agent_listen.c: LISTEN (PROTOCOL.md "LISTEN"), a TCP listener on 127.0.0.1:port inside the sandbox whose
 * connections the agent carries to the client, each on a new agent stream id (2^31 upward, per connection, never
 * reused): the way a server on the host is offered to code in the sandbox without any network.
 *
 * The listening socket is watched edge-triggered with a "readable" flag; the stream's task accepts at most BURST
 * connections per turn, and only while the client's connection has room (conn_flush wakes every stream once it has
 * again), so a flood of connections cannot grow the output queue. An accepted socket becomes a tunnel stream
 * (agent_tunnel.c's tunnel_accepted: ACCEPTED, then exactly a connected CONNECT stream). Beyond max_conns open
 * connections of the listener, MAX_STREAMS open streams of the connection, or the agent's ids, a connection is
 * accepted and closed at once without a frame.
 *
 * An accepted stream names its listener by stream id, looked up when it ends (listen_release): a listener closed
 * while its connections live on leaves nothing dangling.
 */
#include "agent.h"

#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#define LISTEN_BACKLOG 128
#define MAX_LISTEN_CONNS 1024
#define AGENT_IDS 0x80000000u /* the agent's ids: 2^31 .. 2^32-1, so 2^31 of them */

struct listener {
    struct evtag tag;
    uint16_t port, max_conns;
    uint32_t credit;   /* the DATA credit of each accepted connection */
    int open;          /* its accepted connections still open */
    uint8_t readable;
};

void h_listen(struct req *q) {
    uint16_t port = rd_u16(&q->r);
    uint32_t credit = rd_u32(&q->r);
    uint16_t max_conns = rd_u16(&q->r);
    if (!req_begin(q, 1, NULL)) return;
    if (port == 0) {
        req_fail(q, EINVAL, "listen on port 0: the port must be 1..65535");
        return;
    }
    if (max_conns < 1 || max_conns > MAX_LISTEN_CONNS) {
        req_fail(q, EINVAL, "listen on port %u: max_conns %u must be 1..%d", port, max_conns, MAX_LISTEN_CONNS);
        return;
    }
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    int one = 1;
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port), .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) < 0
        || bind(fd, (struct sockaddr *)&a, sizeof a) < 0 || listen(fd, LISTEN_BACKLOG) < 0) {
        int err = errno;
        if (fd >= 0) close(fd);
        req_fail(q, (uint32_t)err, "listen on port %u: %s", port, strerror(err));
        return;
    }
    struct stream *s = stream_new(q->c, q->id, ST_LISTEN);
    struct listener *l = xcalloc(1, sizeof *l);
    s->lis = l;
    s->fd = fd;
    G.tunnels++;
    l->port = port;
    l->max_conns = max_conns;
    l->credit = credit;
    l->readable = 1; /* edge-triggered: a connection may have come before the registration */
    l->tag.kind = EV_TCP_LISTEN;
    l->tag.obj = s;
    if (ep_add(fd, EPOLLIN | EPOLLET, &l->tag) < 0) {
        int err = errno;
        send_error(q->c, q->id, (uint32_t)err, "listen on port %u: epoll: %s", port, strerror(err));
        stream_drop(s);
        return;
    }
    struct fw f = fw_begin(q->c, A_READY, q->id, 4);
    fw_u32(&f, 0);
    fw_end(&f);
    task_ready(&s->task);
}

/* An epoll event of the listening socket: connections wait in its backlog. */
void listen_event(struct stream *s) {
    s->lis->readable = 1;
    task_ready(&s->task);
}

/* The stream's task: accepts up to BURST connections while the connection has room. */
void listen_run(struct stream *s) {
    struct listener *l = s->lis;
    struct conn *c = s->c;
    for (int k = 0; k < BURST; k++) {
        if (!l->readable || !room(c) || c->closing) return; /* conn_flush wakes every stream once it has room */
        struct sockaddr_in peer;
        socklen_t plen = sizeof peer;
        memset(&peer, 0, sizeof peer);
        int fd = accept4(s->fd, (struct sockaddr *)&peer, &plen, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
            int err = errno;
            if (err == EINTR || err == ECONNABORTED || err == EPROTO) continue; /* that one is gone; others wait */
            if (err == EAGAIN) {
                l->readable = 0;
                return;
            }
            if (err == EMFILE || err == ENFILE || err == ENOBUFS || err == ENOMEM)
                return; /* out of fds for now: tried again when one of this listener's streams ends */
            send_error(c, s->id, (uint32_t)err, "listen on port %u: accept: %s", l->port, strerror(err));
            stream_drop(s);
            return;
        }
        if (l->open >= l->max_conns || c->nstreams >= MAX_STREAMS || c->agent_ids >= AGENT_IDS) {
            close(fd); /* beyond a bound: the peer sees its end at once, the client nothing */
            continue;
        }
        uint32_t id = AGENT_IDS + (uint32_t)c->agent_ids++;
        uint16_t peer_port = plen >= sizeof peer && peer.sin_family == AF_INET ? ntohs(peer.sin_port) : 0;
        l->open++; /* listen_release gives it back when the stream ends, also when tunnel_accepted fails */
        if (tunnel_accepted(c, id, fd, l->port, l->credit, s->id, peer_port) < 0) return; /* epoll full: later */
    }
    task_ready(&s->task); /* BURST connections: let the others have a turn */
}

/* An accepted connection of listener (a stream id of c) ended: one less open, and the listener may accept again. */
void listen_release(struct conn *c, uint32_t listener) {
    struct stream *s = stream_find(c, listener);
    if (!s || s->kind != ST_LISTEN || !s->lis) return; /* the listener was closed before its connection */
    s->lis->open--;
    task_ready(&s->task);
}

/* stream_drop's part: the listening socket closed; the accepted connections go on (they find it gone). */
void listen_drop(struct stream *s) {
    struct listener *l = s->lis;
    if (!l) return;
    if (s->fd >= 0) {
        ep_del(s->fd);
        close(s->fd);
        s->fd = -1;
    }
    s->lis = NULL;
    if (--G.tunnels == 0) G.last_activity = mono_ms();
    bury(l); /* this turn's epoll events may still name its tag */
}
