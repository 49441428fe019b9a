/*
 * agent_relay.c: the `relay` mode, a byte pipe (a docker exec's stdin and stdout) joined to the agent's socket: handed
 * over to the agent when both ends are pipes or sockets, else copied both ways; and the socket's address, which `init`
 * listens on.
 */
#include "agent.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

/* One direction of the relay: a 64 KiB buffer between a source and a sink. */
struct pipe_half {
    int from, to, eof, done;
    uint8_t buf[65536];
    size_t len, off;
};

int make_addr(const char *name, struct sockaddr_un *a, socklen_t *len) {
    memset(a, 0, sizeof *a);
    a->sun_family = AF_UNIX;
    size_t n = strlen(name);
    if (n + 2 > sizeof a->sun_path) return -1;
    if (name[0] == '/') {
        memcpy(a->sun_path, name, n + 1);
        *len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n + 1);
    } else { /* abstract: a leading NUL, no terminator */
        memcpy(a->sun_path + 1, name, n);
        *len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + n);
    }
    return 0;
}

/* Hands stdin and stdout to the agent when both are pipes or sockets (what epoll can watch); 1 when done. */
static int handoff(int s) {
    struct stat a, b;
    if (fstat(0, &a) < 0 || fstat(1, &b) < 0) return 0;
    if (!(S_ISFIFO(a.st_mode) || S_ISSOCK(a.st_mode)) || !(S_ISFIFO(b.st_mode) || S_ISSOCK(b.st_mode))) return 0;
    uint8_t byte = HANDOFF;
    int fds[2] = {0, 1};
    union {
        char buf[CMSG_SPACE(sizeof fds)];
        struct cmsghdr align;
    } u;
    memset(&u, 0, sizeof u);
    struct iovec iov = {.iov_base = &byte, .iov_len = 1};
    struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf, .msg_controllen = sizeof u.buf};
    struct cmsghdr *h = CMSG_FIRSTHDR(&m);
    h->cmsg_level = SOL_SOCKET;
    h->cmsg_type = SCM_RIGHTS;
    h->cmsg_len = CMSG_LEN(sizeof fds);
    memcpy(CMSG_DATA(h), fds, sizeof fds);
    return sendmsg(s, &m, MSG_NOSIGNAL) == 1;
}

int relay(const char *name) {
    struct sockaddr_un a;
    socklen_t al;
    if (make_addr(name, &a, &al) < 0) {
        fprintf(stderr, "sandbox-agent relay: socket name too long: %s\n", name);
        return 1;
    }
    int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (s < 0 || connect(s, (struct sockaddr *)&a, al) < 0) {
        fprintf(stderr, "sandbox-agent relay: cannot connect to %s%s: %s\n", name[0] == '/' ? "" : "@", name,
                strerror(errno));
        return 1;
    }
    signal(SIGPIPE, SIG_IGN); /* a closed peer is a write error to handle, not a death */
    /* code in the sandbox that stops everything it can (kill -TERM -1, pkill, a shell's hangup) must not cut the
     * SDK's connection by accident; SIGKILL still can, and the SDK then reconnects */
    signal(SIGTERM, SIG_IGN);
    signal(SIGINT, SIG_IGN);
    signal(SIGHUP, SIG_IGN);
    signal(SIGQUIT, SIG_IGN);
    if (handoff(s)) { /* the agent has our stdin and stdout now: wait for the connection's end */
        char b;
        for (;;) {
            ssize_t n = read(s, &b, 1);
            if (n < 0 && errno == EINTR) continue;
            return 0;
        }
    }
    set_nonblock(s);
    set_nonblock(0);
    set_nonblock(1);
    static struct pipe_half up, down; /* static: 128 KiB off the stack */
    up.from = 0;
    up.to = s;
    down.from = s;
    down.to = 1;
    for (;;) {
        struct pollfd pf[4];
        struct pipe_half *h[2] = {&up, &down};
        int np = 0;
        int idx[4][2];
        for (int i = 0; i < 2; i++) {
            if (!h[i]->eof && h[i]->len == 0) {
                pf[np] = (struct pollfd){.fd = h[i]->from, .events = POLLIN};
                idx[np][0] = i;
                idx[np++][1] = 0;
            }
            if (h[i]->len > h[i]->off) {
                pf[np] = (struct pollfd){.fd = h[i]->to, .events = POLLOUT};
                idx[np][0] = i;
                idx[np++][1] = 1;
            }
        }
        if (np == 0) return 0;
        if (poll(pf, (nfds_t)np, -1) < 0) {
            if (errno == EINTR) continue;
            return 1;
        }
        for (int k = 0; k < np; k++) {
            if (!pf[k].revents) continue;
            struct pipe_half *x = h[idx[k][0]];
            if (idx[k][1] == 0) {
                ssize_t n = read(x->from, x->buf, sizeof x->buf);
                if (n > 0) {
                    x->len = (size_t)n;
                    x->off = 0;
                } else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
                    x->eof = 1;
                }
            } else {
                ssize_t n = write(x->to, x->buf + x->off, x->len - x->off);
                if (n > 0) {
                    x->off += (size_t)n;
                    if (x->off == x->len) x->len = x->off = 0;
                } else if (n < 0 && errno != EAGAIN && errno != EINTR) {
                    if (x == &down) return 1; /* our client is gone */
                    /* the agent closed its side (after an ERROR, say): stop sending, but copy what it said */
                    up.eof = up.done = 1;
                    up.len = up.off = 0;
                }
            }
        }
        if (up.eof && up.len == 0 && !up.done) { /* the client is done sending: tell the agent, keep reading */
            shutdown(s, SHUT_WR);
            up.done = 1;
        }
        if (down.eof && down.len == 0) return 0;
    }
}
