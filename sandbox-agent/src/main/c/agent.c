/*
 * sandbox-agent: process 1 of a sandbox. Serves PROTOCOL.md (version 1) on an abstract Unix socket (`init`), on
 * stdin/stdout (`stdio`), and copies a byte pipe to that socket (`relay`).
 *
 * Design: one epoll loop, no threads, every fd non-blocking. Sources (pipes, PTY masters, connections) are
 * registered edge-triggered and remember "readable"/"writable" flags; the work they allow is done by tasks on a
 * ready list, which only read a source while the consumer has credit and the connection's output queue is under
 * OUT_BOUND. Nothing the peer or the sandbox sends can make a buffer grow past a fixed bound: input is parsed one
 * frame at a time (at most one 2 MiB payload), output is produced only while there is room, and every count and
 * length in a payload is checked before use. Objects that epoll may still name in the current batch of events are
 * freed only after the batch (the graveyard).
 */
#include "agent.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

struct agent G;

void fatal(const char *what) {
    fprintf(stderr, "sandbox-agent: %s: %s\n", what, strerror(errno));
    exit(1);
}

void *xmalloc(size_t n) {
    void *p = malloc(n ? n : 1);
    if (!p) fatal("out of memory");
    return p;
}

void *xcalloc(size_t n, size_t m) {
    void *p = calloc(n ? n : 1, m ? m : 1);
    if (!p) fatal("out of memory");
    return p;
}

int64_t now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t mono_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void set_nonblock(int fd) {
    int fl = fcntl(fd, F_GETFL);
    if (fl >= 0) fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

/* Frees after the current batch of epoll events, which may still point at the object. */
void bury(void *p) {
    if (G.ngrave == G.grave_cap) {
        size_t cap = G.grave_cap ? (size_t)G.grave_cap * 2 : 256;
        void **ng = realloc(G.grave, cap * sizeof *ng);
        if (!ng) fatal("out of memory");
        G.grave = ng;
        G.grave_cap = (int)cap;
    }
    G.grave[G.ngrave++] = p;
}

/* ---------- ready list ---------- */

void task_ready(struct task *t) {
    if (t->queued) return;
    t->queued = 1;
    t->next = NULL;
    t->prev = G.rq_tail;
    if (G.rq_tail) G.rq_tail->next = t; else G.rq_head = t;
    G.rq_tail = t;
    G.rq_len++;
}

void task_cancel(struct task *t) {
    if (!t->queued) return;
    if (t->prev) t->prev->next = t->next; else G.rq_head = t->next;
    if (t->next) t->next->prev = t->prev; else G.rq_tail = t->prev;
    t->queued = 0;
    t->prev = t->next = NULL;
    G.rq_len--;
}

/* ---------- epoll ---------- */

int ep_add(int fd, uint32_t events, struct evtag *tag) {
    struct epoll_event ev = {.events = events, .data.ptr = tag};
    return epoll_ctl(G.ep, EPOLL_CTL_ADD, fd, &ev);
}

void ep_del(int fd) {
    if (fd >= 0) epoll_ctl(G.ep, EPOLL_CTL_DEL, fd, NULL);
}




void proc_orphan(struct proc *p);
void reader_detach(struct stream *s);

/* ---------- connections ---------- */

static void conn_finish(struct conn *c) {
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

static void conn_flush(struct conn *c) {
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

static void conn_run(struct conn *c) {
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

static struct conn *conn_new(int in_fd, int out_fd) {
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

static void accept_all(void) {
    for (int k = 0; k < 64; k++) {
        int fd = accept4(G.lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
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
        conn_new(fd, fd)->handoff = 1;
    }
}

/* ---------- main loop ---------- */

static void kill_all(void) {
    for (struct proc *p = G.procs; p; p = p->next) kill(-p->pid, SIGKILL);
}

static void quit(int code) {
    kill_all();
    exit(code);
}

static void on_signals(void) {
    struct signalfd_siginfo si;
    while (read(G.sfd, &si, sizeof si) == (ssize_t)sizeof si) {
        if (si.ssi_signo == SIGCHLD) reap();
        else if (si.ssi_signo == SIGTERM || si.ssi_signo == SIGINT) quit(0);
    }
    reap(); /* signals coalesce: reap whatever is there */
}

static void on_event(struct epoll_event *e) {
    struct evtag *t = e->data.ptr;
    switch (t->kind) {
    case EV_LISTEN: accept_all(); break;
    case EV_SIGNAL: on_signals(); break;
    case EV_CONN_LIFE: { /* the relay ended, or wrote on a socket it only holds: the connection is over */
        struct conn *c = t->obj;
        if (!c->dead) conn_close(c);
        break;
    }
    case EV_CONN_IN:
    case EV_CONN_OUT: {
        struct conn *c = t->obj;
        if (c->dead) break;
        if (e->events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR)) {
            if (t->kind == EV_CONN_IN) c->readable = 1;
        }
        if (e->events & (EPOLLOUT | EPOLLERR | EPOLLHUP)) {
            if (t->kind == EV_CONN_OUT || c->in_fd == c->out_fd) {
                c->writable = 1;
                mark_dirty(c);
            }
        }
        if (c->readable) task_ready(&c->task);
        break;
    }
    case EV_PROC: {
        struct proc *p = t->obj;
        if (p->dead) break;
        if (t->fd == 0) p->writable = 1;
        else p->readable[t->fd] = 1;
        task_ready(&p->task);
        break;
    }
    case EV_WATCH: {
        struct stream *s = t->obj;
        if (!s->dead) watch_event(s);
        break;
    }
    }
}

static void run_ready(void) {
    /* a bounded turn: as many tasks as were queued when it began; tasks queued meanwhile (a busy background
     * process requeues itself) wait for the next turn, after epoll had its say */
    for (size_t n = G.rq_len; n > 0 && G.rq_head; n--) {
        struct task *t = G.rq_head;
        task_cancel(t);
        switch (t->kind) {
        case TK_CONN: {
            struct conn *c = (struct conn *)t;
            if (!c->dead) conn_run(c);
            break;
        }
        case TK_PROC: {
            struct proc *p = (struct proc *)t;
            if (!p->dead) {
                if (p->bg) bg_run(p);
                else fg_run(p);
            }
            break;
        }
        case TK_STREAM: {
            struct stream *s = (struct stream *)t;
            if (!s->dead) stream_run(s);
            break;
        }
        }
    }
}

static void flush_dirty(void) {
    while (G.dirty) {
        struct conn *c = G.dirty;
        G.dirty = c->dnext;
        c->dirty = 0;
        if (!c->dead) conn_flush(c);
    }
}

static void check_timers(int *timeout) {
    int64_t now = now_ms(), mono = mono_ms();
    int64_t t = -1;
    if (G.deadline_ms > 0) {
        if (now >= G.deadline_ms) quit(0);
        t = G.deadline_ms - now;
    }
    if (G.idle_ms > 0 && G.running == 0) {
        int64_t left = G.last_activity + G.idle_ms - mono;
        if (left <= 0) quit(0);
        if (t < 0 || left < t) t = left;
    }
    /* Linux reports a PTY's end as EIO on its master once the last holder of the terminal closed it; gVisor reports
     * no such event. A PTY whose command was reaped PTY_HUP_MS ago is read once more: nothing left means its end. */
    if (G.pty_waiting > 0) {
        int waiting = 0; /* counted again: a PTY that reported its end, or was freed, waits no more */
        for (struct proc *p = G.procs; p; p = p->next) {
            if (!p->pty || !p->reaped || p->hup || p->eof[1]) continue;
            int64_t left = p->reaped_mono + PTY_HUP_MS - mono;
            if (left <= 0) {
                p->hup = 1;
                p->readable[1] = 1;
                task_ready(&p->task);
            } else {
                waiting++;
                if (t < 0 || left < t) t = left;
            }
        }
        G.pty_waiting = waiting;
    }
    for (struct conn *c = G.conns, *n; c; c = n) {
        n = c->next;
        if (c->closing && !c->dead) {
            int64_t left = c->close_deadline - mono;
            if (left <= 0) conn_finish(c);
            else if (t < 0 || left < t) t = left;
        }
    }
    if (t > 60000) t = 60000;
    *timeout = G.rq_head ? 0 : (int)t;
}

static void loop(void) {
    struct epoll_event evs[128];
    for (;;) {
        int timeout;
        check_timers(&timeout);
        int n = epoll_wait(G.ep, evs, 128, timeout);
        if (n < 0 && errno != EINTR) fatal("epoll_wait");
        for (int i = 0; i < n; i++) on_event(&evs[i]);
        run_ready();
        flush_dirty();
        for (int i = 0; i < G.ngrave; i++) free(G.grave[i]);
        G.ngrave = 0;
        if (G.mode == 's' && !G.conns) quit(0);
    }
}

/* ---------- startup ---------- */

static void usage(void) {
    fprintf(stderr, "usage: sandbox-agent init [--socket NAME] [--deadline-ms N] [--idle-ms N] [--workdir DIR]\n"
                    "       sandbox-agent stdio [--deadline-ms N] [--idle-ms N] [--workdir DIR]\n"
                    "       sandbox-agent relay [--socket NAME]\n"
                    "       sandbox-agent --version\n");
    exit(2);
}

static int64_t parse_ms(const char *opt, const char *v) {
    char *end;
    errno = 0;
    long long x = strtoll(v, &end, 10);
    if (errno || *end || end == v || x < 0) {
        fprintf(stderr, "sandbox-agent: %s wants a number of milliseconds >= 0, got '%s'\n", opt, v);
        exit(2);
    }
    return x;
}

int main(int argc, char **argv) {
    if (argc < 2) usage();
    if (strcmp(argv[1], "--version") == 0) {
        printf("sandbox-agent %s protocol %d..%d\n", AGENT_VERSION, PROTO_MIN, PROTO_MAX);
        return 0;
    }
    const char *sock = DEFAULT_SOCKET, *workdir = NULL;
    int mode = strcmp(argv[1], "init") == 0 ? 'i' : strcmp(argv[1], "stdio") == 0 ? 's'
                                                  : strcmp(argv[1], "relay") == 0 ? 'r' : 0;
    if (!mode) usage();
    for (int i = 2; i < argc; i++) {
        if (i + 1 >= argc) usage();
        if (strcmp(argv[i], "--socket") == 0 && mode != 's') sock = argv[++i];
        else if (strcmp(argv[i], "--deadline-ms") == 0 && mode != 'r') G.deadline_ms = parse_ms(argv[i], argv[i + 1]), i++;
        else if (strcmp(argv[i], "--idle-ms") == 0 && mode != 'r') G.idle_ms = parse_ms(argv[i], argv[i + 1]), i++;
        else if (strcmp(argv[i], "--workdir") == 0 && mode != 'r') workdir = argv[++i];
        else usage();
    }
    if (mode == 'r') return relay(sock);

    /* fds 0..2 must exist so that no pipe or socket of ours lands there and gets replaced in a child */
    for (int fd = 0; fd < 3; fd++)
        if (fcntl(fd, F_GETFD) < 0 && open("/dev/null", O_RDWR) < 0) fatal("/dev/null");
    if (workdir && chdir(workdir) < 0) fatal(workdir);
    G.mode = mode;
    getrlimit(RLIMIT_NOFILE, &G.nofile);
    struct rlimit more = {G.nofile.rlim_max, G.nofile.rlim_max}; /* 1,000 streams need ~3,000 fds */
    setrlimit(RLIMIT_NOFILE, &more);
    G.last_activity = mono_ms();
    signal(SIGPIPE, SIG_IGN);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGCHLD);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    if (sigprocmask(SIG_BLOCK, &set, NULL) < 0) fatal("sigprocmask");
    G.sfd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
    G.ep = epoll_create1(EPOLL_CLOEXEC);
    if (G.sfd < 0 || G.ep < 0) fatal("signalfd/epoll");
    G.tsig.kind = EV_SIGNAL;
    if (ep_add(G.sfd, EPOLLIN, &G.tsig) < 0) fatal("epoll_ctl");
    if (mode == 'i') {
        /* outside a pid namespace (tests) orphans of our children come to us as they would to process 1 */
        prctl(PR_SET_CHILD_SUBREAPER, 1);
        struct sockaddr_un a;
        socklen_t al;
        if (make_addr(sock, &a, &al) < 0) {
            fprintf(stderr, "sandbox-agent: socket name too long: %s\n", sock);
            return 1;
        }
        G.lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (sock[0] == '/') unlink(sock);
        if (G.lfd < 0 || bind(G.lfd, (struct sockaddr *)&a, al) < 0 || listen(G.lfd, 64) < 0) fatal(sock);
        G.tlisten.kind = EV_LISTEN;
        if (ep_add(G.lfd, EPOLLIN, &G.tlisten) < 0) fatal("epoll_ctl");
    } else {
        set_nonblock(0);
        set_nonblock(1);
        conn_new(0, 1);
    }
    loop();
    return 0;
}
