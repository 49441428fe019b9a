/*
 * sandbox-agent: process 1 of a sandbox. Serves PROTOCOL.md (version 1) on an abstract Unix socket (`init`), on
 * stdin/stdout (`stdio`), and copies a byte pipe to that socket (`relay`).
 *
 * Design: one epoll loop, no threads, every fd non-blocking. Sources (pipes, PTY masters, connections, CONNECT's
 * and LISTEN's sockets) are registered edge-triggered and remember "readable"/"writable" flags; the work they allow is done by
 * tasks on a ready list, which only read a source while the consumer has credit and the connection's output queue is
 * under OUT_BOUND. Nothing the peer or the sandbox sends can make a buffer grow past a fixed bound: input is parsed one
 * frame at a time (at most one 2 MiB payload), output is produced only while there is room, and every count and
 * length in a payload is checked before use. Objects that epoll may still name in the current batch of events are
 * freed only after the batch (the graveyard).
 *
 * This file holds the loop and main; agent.h lists the files that hold the rest, one job each.
 */
#include "agent.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/socket.h>
#include <sys/un.h>
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
    case EV_LISTEN: accept_all(G.lfd, 1); break;
    case EV_LISTEN_CHANNEL: accept_all(G.cfd, 0); break;
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
    case EV_TUNNEL: {
        struct stream *s = t->obj;
        if (!s->dead) tunnel_event(s, e->events);
        break;
    }
    case EV_TCP_LISTEN: {
        struct stream *s = t->obj;
        if (!s->dead) listen_event(s);
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
    if (G.idle_ms > 0 && G.running == 0 && G.tunnels == 0) {
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
    int64_t dial = tunnel_expire(mono); /* CONNECTs past CONNECT_TIMEOUT_MS end with ETIMEDOUT */
    if (dial >= 0 && (t < 0 || dial < t)) t = dial;
    for (struct conn *c = G.conns, *n; c; c = n) {
        n = c->next;
        if (c->closing && !c->dead) {
            int64_t left = c->close_deadline - mono;
            if (left <= 0) conn_finish(c);
            else if (t < 0 || left < t) t = left;
        }
    }
    if (t > 60000) t = 60000;
    *timeout = G.rq_head || G.dirty ? 0 : (int)t; /* frames queued here (a timed-out CONNECT) leave at once */
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
    fprintf(stderr, "usage: sandbox-agent init [--socket NAME] [--channel PATH] [--deadline-ms N] [--idle-ms N] [--workdir DIR]\n"
                    "       sandbox-agent stdio [--deadline-ms N] [--idle-ms N] [--workdir DIR]\n"
                    "       sandbox-agent relay [--socket NAME]\n"
                    "       sandbox-agent install DIR\n"
                    "       sandbox-agent --version\n");
    exit(2);
}

/*
 * The channel socket: a path socket in a directory the host mounted, which the host reaches without the container
 * runtime in between. Optional: when it cannot be made (no such directory, a runtime that keeps sockets to itself)
 * the host uses the relay, so a failure is only said on stderr. Anyone may connect (mode 0777): the host's side of
 * the directory is what keeps other users out, and in the sandbox everything can reach the agent anyway.
 */
static void listen_channel(const char *path) {
    G.cfd = -1;
    if (!path) return;
    struct sockaddr_un a;
    socklen_t al;
    if (path[0] != '/' || make_addr(path, &a, &al) < 0) {
        fprintf(stderr, "sandbox-agent: --channel wants an absolute path under %zu bytes: %s\n", sizeof a.sun_path, path);
        return;
    }
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    unlink(path);
    mode_t old = umask(0);
    int ok = fd >= 0 && bind(fd, (struct sockaddr *)&a, al) == 0;
    umask(old);
    if (!ok || listen(fd, 64) < 0) {
        fprintf(stderr, "sandbox-agent: no channel socket at %s: %s\n", path, strerror(errno));
        if (fd >= 0) close(fd);
        return;
    }
    G.cfd = fd;
    G.tchannel.kind = EV_LISTEN_CHANNEL;
    if (ep_add(G.cfd, EPOLLIN, &G.tchannel) < 0) fatal("epoll_ctl");
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
    if (strcmp(argv[1], "install") == 0) {
        if (argc != 3) usage();
        return install_self(argv[2]);
    }
    const char *sock = DEFAULT_SOCKET, *workdir = NULL, *channel = NULL;
    int mode = strcmp(argv[1], "init") == 0 ? 'i' : strcmp(argv[1], "stdio") == 0 ? 's'
                                                  : strcmp(argv[1], "relay") == 0 ? 'r' : 0;
    if (!mode) usage();
    for (int i = 2; i < argc; i++) {
        if (i + 1 >= argc) usage();
        if (strcmp(argv[i], "--socket") == 0 && mode != 's') sock = argv[++i];
        else if (strcmp(argv[i], "--deadline-ms") == 0 && mode != 'r') G.deadline_ms = parse_ms(argv[i], argv[i + 1]), i++;
        else if (strcmp(argv[i], "--idle-ms") == 0 && mode != 'r') G.idle_ms = parse_ms(argv[i], argv[i + 1]), i++;
        else if (strcmp(argv[i], "--workdir") == 0 && mode != 'r') workdir = argv[++i];
        else if (strcmp(argv[i], "--channel") == 0 && mode == 'i') channel = argv[++i];
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
        listen_channel(channel);
    } else {
        set_nonblock(0);
        set_nonblock(1);
        conn_new(0, 1);
    }
    loop();
    return 0;
}
