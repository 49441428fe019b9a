/*
 * fuzz_agent.c: a libFuzzer target for the agent's input side. One input is the byte stream a hostile client sends
 * on one socket connection (or, when it begins with the byte HANDOFF, through the pipes a relay hands over): the frame decoder (agent_conn.c, agent_frame.c), the dispatch and the request prologue
 * (agent_request.c) and every handler read it, through the agent's own loop functions, until the agent ends the
 * connection. The output is read and checked to be whole frames.
 *
 * Kept safe and deterministic at the link level (the Makefile's FUZZ_WRAP):
 * - a SPAWN forks, but the child executes nothing: execve runs a small program instead (echo, cat, sleep, or a
 *   missing file; see __wrap_execve), so the processes' part (stdin, output, signals, terminals, background rings,
 *   ATTACH, PROCS, INPUT, reaping) runs for real and no command the input names does;
 * - every path reaching agent_fs.c is put under a temporary directory, one that is emptied after each input; a path
 *   with a ".." component and a symlink target that is absolute or holds ".." are refused (EACCES), so nothing the
 *   input names can reach outside it;
 * - a CONNECT dials nothing: connect to an AF_INET address is refused or gets one end of a socketpair whose other end
 *   echoes (see __wrap_connect);
 * - a LISTEN listens on no port: bind, listen and accept4 on an AF_INET socket are stubs whose connections are
 *   socketpairs with echoing peers, a few per listener (see __wrap_bind).
 * Checked on the way: the agent sends no stream more than the input credited it.
 * After each input: no connection, stream, task, process or file descriptor is left over (a leak is a crash).
 *
 * Built twice: with clang -fsanitize=fuzzer (make fuzz), and with FUZZ_REPLAY by the plain compiler under
 * ASan/UBSan (make test), which replays the kept corpus and the regression inputs given as arguments.
 */
#include "agent.h"

#undef main /* agent.c's main is renamed (-Dmain=...) so that libFuzzer's or the replay's can be the program's */

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int trace; /* FUZZ_AGENT_TRACE set: the agent's frames on stderr, as they come */
static char root[64]; /* the temporary directory every path is confined to */
static size_t root_len;

/* ---------- link-level stubs: no process, no path outside root ---------- */

/* A process is a fork of this one that never executes anything: execve (in the child only) runs a small program
 * decided by the last part of argv[0] instead, and a name starting "no-such" fails as a missing file does. Every
 * such process ends within 10 s (alarm), and after each input every one left is killed and reaped. */
static void put_all(int fd, const char *b, size_t n) {
    while (n > 0) {
        ssize_t w = write(fd, b, n);
        if (w <= 0) return;
        b += w, n -= (size_t)w;
    }
}

int __wrap_execve(const char *path, char *const argv[], char *const envp[]);
int __wrap_execve(const char *path, char *const argv[], char *const envp[]) {
    (void)envp;
    const char *name = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
    if (strncmp(name, "no-such", 7) == 0) {
        errno = ENOENT;
        return -1;
    }
    for (int fd = 3; fd < 1024; fd++) /* what exec does: the close-on-exec descriptors go (the launch pipe with them) */
        if (fcntl(fd, F_GETFD) > 0 && (fcntl(fd, F_GETFD) & FD_CLOEXEC)) close(fd);
    alarm(10);
    int argc = 0;
    while (argv[argc]) argc++;
    if (strcmp(name, "cat") == 0) { /* stdin to stdout until its end */
        char b[4096];
        for (ssize_t n; (n = read(0, b, sizeof b)) > 0;) put_all(1, b, (size_t)n);
        _exit(0);
    }
    if (strcmp(name, "sleep") == 0) { /* until a signal ends it */
        for (;;) pause();
    }
    for (int i = 1; i < argc; i++) { /* echo: the arguments on stdout, their count on stderr */
        put_all(1, argv[i], strlen(argv[i]));
        put_all(1, "\n", 1);
    }
    char line[32];
    int n = snprintf(line, sizeof line, "%d arguments\n", argc - 1);
    put_all(2, line, (size_t)n);
    _exit(argc & 0x7f);
}

/* 1 when a path has a ".." component */
static int has_dotdot(const char *p) {
    for (const char *s = p; (s = strstr(s, "..")) != NULL; s += 2)
        if ((s == p || s[-1] == '/') && (s[2] == 0 || s[2] == '/')) return 1;
    return 0;
}

/* root + path (malloc'd), or NULL for a path that could leave root */
static char *confine(const char *path) {
    if (path[0] != '/' || has_dotdot(path)) return NULL;
    size_t n = strlen(path);
    char *p = xmalloc(root_len + n + 1);
    memcpy(p, root, root_len);
    memcpy(p + root_len, path, n + 1);
    return p;
}

#define CONFINED(call_with_p)                                                                                          \
    char *p = confine(path);                                                                                           \
    if (!p) return -EACCES;                                                                                            \
    int rc = call_with_p;                                                                                              \
    free(p);                                                                                                           \
    return rc

int __real_fs_stat(const char *path, struct fs_info *out);
int __real_fs_mkdir(const char *path, uint32_t mode, int parents);
int __real_fs_remove(const char *path, int recursive);
int __real_fs_move(const char *from, const char *to);
int __real_fs_symlink(const char *target, const char *path);
int __real_fs_chmod(const char *path, uint32_t mode);
int __real_fs_open_read(const char *path, uint64_t offset);
int __real_fs_write_begin(const char *path, uint32_t mode, int parents, struct fs_write **out);
int __real_fs_list_open(const char *path, uint32_t depth, struct fs_list **out);
int __real_fs_watch_open(const char *path, int recursive, struct fs_watch **out);
int __wrap_fs_stat(const char *path, struct fs_info *out);
int __wrap_fs_mkdir(const char *path, uint32_t mode, int parents);
int __wrap_fs_remove(const char *path, int recursive);
int __wrap_fs_move(const char *from, const char *to);
int __wrap_fs_symlink(const char *target, const char *path);
int __wrap_fs_chmod(const char *path, uint32_t mode);
int __wrap_fs_open_read(const char *path, uint64_t offset);
int __wrap_fs_write_begin(const char *path, uint32_t mode, int parents, struct fs_write **out);
int __wrap_fs_list_open(const char *path, uint32_t depth, struct fs_list **out);
int __wrap_fs_watch_open(const char *path, int recursive, struct fs_watch **out);

int __wrap_fs_stat(const char *path, struct fs_info *out) { CONFINED(__real_fs_stat(p, out)); }
int __wrap_fs_mkdir(const char *path, uint32_t mode, int parents) { CONFINED(__real_fs_mkdir(p, mode, parents)); }
int __wrap_fs_remove(const char *path, int recursive) { CONFINED(__real_fs_remove(p, recursive)); }
int __wrap_fs_chmod(const char *path, uint32_t mode) { CONFINED(__real_fs_chmod(p, mode)); }
int __wrap_fs_open_read(const char *path, uint64_t offset) { CONFINED(__real_fs_open_read(p, offset)); }
int __wrap_fs_write_begin(const char *path, uint32_t mode, int parents, struct fs_write **out) {
    CONFINED(__real_fs_write_begin(p, mode, parents, out));
}
int __wrap_fs_list_open(const char *path, uint32_t depth, struct fs_list **out) {
    CONFINED(__real_fs_list_open(p, depth, out));
}
int __wrap_fs_watch_open(const char *path, int recursive, struct fs_watch **out) {
    CONFINED(__real_fs_watch_open(p, recursive, out));
}

int __wrap_fs_move(const char *from, const char *path) {
    char *f = confine(from);
    if (!f) return -EACCES;
    char *p = confine(path);
    int rc = p ? __real_fs_move(f, p) : -EACCES;
    free(f);
    free(p);
    return rc;
}

/* a relative target without ".." resolves below the link's directory, so inside root */
int __wrap_fs_symlink(const char *target, const char *path) {
    if (target[0] == '/' || has_dotdot(target)) return -EACCES;
    CONFINED(__real_fs_symlink(target, p));
}

/* CONNECT dials no port. By the port asked for: odd is ECONNREFUSED; even gets one end of a socketpair put in place
 * of the socket, connected at once (a multiple of 4) or as a connect in progress that epoll then reports (2 mod 4);
 * its other end is a peer that echoes what it reads (what does not fit is dropped) and closes at its end of file,
 * or at once when the port is a multiple of 8 (the agent then sees the end, or EPIPE). At most MAX_PEERS at a time
 * (then ECONNREFUSED); every peer is closed after the input. Other families (the relay's Unix socket) pass. */
#define MAX_PEERS 64
static int peers[MAX_PEERS], npeers;
static void fail(const char *what);

int __real_connect(int fd, const struct sockaddr *addr, socklen_t len);
int __wrap_connect(int fd, const struct sockaddr *addr, socklen_t len);
int __wrap_connect(int fd, const struct sockaddr *addr, socklen_t len) {
    if (addr->sa_family != AF_INET) return __real_connect(fd, addr, len);
    uint16_t port = ntohs(((const struct sockaddr_in *)addr)->sin_port);
    int sv[2];
    if (port % 2 || npeers == MAX_PEERS || socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv) < 0) {
        errno = ECONNREFUSED;
        return -1;
    }
    if (dup3(sv[0], fd, O_CLOEXEC) < 0) fail("dup3");
    close(sv[0]);
    if (port % 8 == 0) close(sv[1]);
    else peers[npeers++] = sv[1];
    if (port % 4 == 2) {
        errno = EINPROGRESS;
        return -1;
    }
    return 0;
}

/* The peers echo what they can; one whose agent side ended is closed. */
static int pump_peers(void) {
    static uint8_t b[4096];
    int busy = 0;
    for (int i = 0; i < npeers; i++) {
        ssize_t n = read(peers[i], b, sizeof b);
        if (n > 0) {
            busy = 1;
            ssize_t w = write(peers[i], b, (size_t)n);
            (void)w;
        } else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
            busy = 1;
            close(peers[i]);
            peers[i--] = peers[--npeers];
        }
    }
    return busy;
}

static void close_peers(void) {
    while (npeers > 0) close(peers[--npeers]);
}

/* LISTEN binds no port. By the port asked for: odd is EADDRINUSE; even puts in place of the socket one end of a
 * socketpair that is readable for good (a byte, then its peer's end), so epoll reports connections waiting, and
 * accept4 on it gives (port / 2) % 8 connections, then EAGAIN: each one end of a socketpair whose other end is a peer
 * as CONNECT's (echoing; closed at once when port & 16), while MAX_PEERS allow. Other families pass. */
#define MAX_FAKE_LISTENERS 32
static struct {
    int fd, left;
    uint16_t port;
} fakes[MAX_FAKE_LISTENERS];
static int nfakes;

static int fake_of(int fd) {
    for (int i = 0; i < nfakes; i++)
        if (fakes[i].fd == fd) return i;
    return -1;
}

int __real_bind(int fd, const struct sockaddr *addr, socklen_t len);
int __wrap_bind(int fd, const struct sockaddr *addr, socklen_t len);
int __wrap_bind(int fd, const struct sockaddr *addr, socklen_t len) {
    if (addr->sa_family != AF_INET) return __real_bind(fd, addr, len);
    uint16_t port = ntohs(((const struct sockaddr_in *)addr)->sin_port);
    int i = fake_of(fd), sv[2];
    if (i < 0 && nfakes == MAX_FAKE_LISTENERS) {
        errno = EADDRINUSE; /* stale entries are dropped after each input */
        return -1;
    }
    if (port % 2 || socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv) < 0) {
        errno = EADDRINUSE;
        return -1;
    }
    if (dup3(sv[0], fd, O_CLOEXEC) < 0) fail("dup3");
    close(sv[0]);
    if (write(sv[1], "c", 1) != 1) fail("write");
    close(sv[1]);
    if (i < 0) i = nfakes++;
    fakes[i].fd = fd;
    fakes[i].port = port;
    fakes[i].left = (port / 2) % 8;
    return 0;
}

int __real_listen(int fd, int backlog);
int __wrap_listen(int fd, int backlog);
int __wrap_listen(int fd, int backlog) { return fake_of(fd) >= 0 ? 0 : __real_listen(fd, backlog); }

int __real_accept4(int fd, struct sockaddr *addr, socklen_t *len, int flags);
int __wrap_accept4(int fd, struct sockaddr *addr, socklen_t *len, int flags);
int __wrap_accept4(int fd, struct sockaddr *addr, socklen_t *len, int flags) {
    int i = fake_of(fd), sv[2];
    if (i < 0) return __real_accept4(fd, addr, len, flags);
    if (fakes[i].left == 0 || npeers == MAX_PEERS
        || socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv) < 0) {
        errno = EAGAIN;
        return -1;
    }
    fakes[i].left--;
    if (fakes[i].port & 16) close(sv[1]);
    else peers[npeers++] = sv[1];
    struct sockaddr_in peer = {.sin_family = AF_INET, .sin_port = htons((uint16_t)(40000 + fakes[i].left)),
                               .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    if (addr && len) {
        memcpy(addr, &peer, *len < sizeof peer ? *len : sizeof peer);
        *len = sizeof peer;
    }
    return sv[0];
}

/* ---------- set-up and clean-up ---------- */

static int count_fds(void) {
    DIR *d = opendir("/proc/self/fd");
    if (!d) return -1;
    int n = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;) n += e->d_name[0] != '.';
    closedir(d);
    return n;
}

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
    (void)st, (void)flag;
    if (ftw->level > 0) remove(path);
    return 0;
}

static void empty_root(void) { nftw(root, remove_one, 16, FTW_DEPTH | FTW_PHYS); }

static void remove_root(void) {
    if (!root_len) return;
    empty_root();
    rmdir(root);
}

static void fail(const char *what) {
    fprintf(stderr, "fuzz_agent: %s\n", what);
    abort();
}

static void setup(void) {
    strcpy(root, "/tmp/sandbox-agent-fuzz-XXXXXX");
    if (!mkdtemp(root)) fail("mkdtemp");
    root_len = strlen(root);
    trace = getenv("FUZZ_AGENT_TRACE") != NULL;
    atexit(remove_root);
    signal(SIGPIPE, SIG_IGN);
    getrlimit(RLIMIT_NOFILE, &G.nofile);
    G.sfd = G.lfd = -1;
    G.mode = 's';
    G.ep = epoll_create1(EPOLL_CLOEXEC);
    if (G.ep < 0) fail("epoll_create1");
}

/* ---------- the agent's loop, one turn at a time (agent.c's loop without its timers and signals) ---------- */

static void on_event(struct epoll_event *e) {
    struct evtag *t = e->data.ptr;
    if (t->kind == EV_PROC) {
        struct proc *p = t->obj;
        if (p->dead) return;
        if (t->fd == 0) p->writable = 1;
        else p->readable[t->fd] = 1;
        task_ready(&p->task);
        return;
    }
    if (t->kind == EV_WATCH) {
        struct stream *s = t->obj;
        if (!s->dead) watch_event(s);
        return;
    }
    if (t->kind == EV_TUNNEL) {
        struct stream *s = t->obj;
        if (!s->dead) tunnel_event(s, e->events);
        return;
    }
    if (t->kind == EV_TCP_LISTEN) {
        struct stream *s = t->obj;
        if (!s->dead) listen_event(s);
        return;
    }
    struct conn *c = t->obj;
    if (c->dead) return;
    if (t->kind == EV_CONN_LIFE) { /* the relay's socket: its end ends the connection */
        conn_close(c);
        return;
    }
    if (t->kind == EV_CONN_IN) c->readable = 1;
    if ((e->events & (EPOLLOUT | EPOLLERR | EPOLLHUP)) && (t->kind == EV_CONN_OUT || c->in_fd == c->out_fd)) {
        c->writable = 1;
        mark_dirty(c);
    }
    if (c->readable) task_ready(&c->task);
}

static void run_ready(void) {
    for (size_t n = G.rq_len; n > 0 && G.rq_head; n--) {
        struct task *t = G.rq_head;
        task_cancel(t);
        if (t->kind == TK_CONN && !((struct conn *)t)->dead) conn_run((struct conn *)t);
        else if (t->kind == TK_STREAM && !((struct stream *)t)->dead) stream_run((struct stream *)t);
        else if (t->kind == TK_PROC && !((struct proc *)t)->dead) {
            struct proc *p = (struct proc *)t;
            if (p->bg) bg_run(p);
            else fg_run(p);
        }
    }
}

static void turn(int wait_ms) {
    struct epoll_event evs[64];
    reap();
    int n = epoll_wait(G.ep, evs, 64, G.rq_head ? 0 : wait_ms);
    for (int i = 0; i < n; i++) on_event(&evs[i]);
    run_ready();
    while (G.dirty) {
        struct conn *c = G.dirty;
        G.dirty = c->dnext;
        c->dirty = 0;
        if (!c->dead) conn_flush(c);
    }
    for (int i = 0; i < G.ngrave; i++) free(G.grave[i]);
    G.ngrave = 0;
}

/* Background processes outlive their connection (and a killed foreground one may not be reaped yet): kill each one
 * left, wait for it, free it. */
static void end_processes(void) {
    for (int k = 0; G.procs; k++) {
        if (k > 10000) fail("a process did not end after SIGKILL");
        for (struct proc *p = G.procs; p; p = p->next)
            if (!p->reaped) kill(-p->pid, SIGKILL);
        usleep(k ? 1000 : 0);
        reap();
        for (struct proc *p = G.procs, *next; p; p = next) {
            next = p->next;
            if (p->reaped) proc_free(p);
        }
        turn(0);
    }
    if (G.running != 0) fail("processes counted as running after every one was reaped");
}

/* ---------- credit: the agent never sends a stream more than the input credited it (PROTOCOL.md "Credit") ---------- */

/* What the input grants one stream id per fd (0: READ, LIST, WATCH, PROCS; 1 and 2: SPAWN, ATTACH) and what the agent
 * spent of it. Every grant in the whole input counts, also one the agent never reads: an upper bound, never short. */
struct grant {
    uint32_t id;
    uint64_t granted[3], spent[3];
    struct grant *next;
};
#define GRANT_BUCKETS 1024
static struct grant *grants[GRANT_BUCKETS];

static struct grant *grant_of(uint32_t id) {
    struct grant **b = &grants[id % GRANT_BUCKETS];
    for (struct grant *g = *b; g; g = g->next)
        if (g->id == id) return g;
    struct grant *g = xcalloc(1, sizeof *g);
    g->id = id;
    g->next = *b;
    *b = g;
    return g;
}

static void grants_free(void) {
    for (int i = 0; i < GRANT_BUCKETS; i++) {
        for (struct grant *g = grants[i], *n; g; g = n) {
            n = g->next;
            free(g);
        }
        grants[i] = NULL;
    }
}

/* The credits of one client frame: the initial credit of a request, or CREDIT. */
static void grant_frame(uint8_t type, uint32_t id, const uint8_t *p, size_t n) {
    struct rd r = {p, n, 0, NULL};
    size_t len;
    uint32_t credit;
    switch (type) {
    case T_READ: rd_str(&r, &len), rd_u64(&r), rd_u64(&r); break;
    case T_LIST: rd_str(&r, &len), rd_u32(&r); break;
    case T_WATCH: rd_str(&r, &len), rd_u8(&r); break;
    case T_PROCS: break;
    case T_SPAWN: rd_u32(&r), rd_u16(&r), rd_u16(&r); break;
    case T_ATTACH: rd_str(&r, &len), rd_u64(&r), rd_u64(&r), rd_u8(&r); break;
    case T_CONNECT: rd_u16(&r); break;
    case T_LISTEN: rd_u16(&r); break; /* its credit: every connection's (see spend) */
    case T_CREDIT: {
        uint8_t fd = rd_u8(&r);
        credit = rd_u32(&r);
        if (!r.err && fd <= 2) grant_of(id)->granted[fd] += credit;
        return;
    }
    default: return;
    }
    credit = rd_u32(&r);
    if (r.err) return;
    struct grant *g = grant_of(id);
    if (type == T_SPAWN || type == T_ATTACH) g->granted[1] += credit, g->granted[2] += credit;
    else g->granted[0] += credit;
}

/* Every frame of the input as the agent would cut it (a bad length or type ends the agent's reading too). */
static void grant_all(const uint8_t *d, size_t size) {
    for (size_t at = 0; size - at >= 9;) {
        uint32_t len = (uint32_t)d[at] << 24 | (uint32_t)d[at + 1] << 16 | (uint32_t)d[at + 2] << 8 | d[at + 3];
        if (len > MAX_CLIENT_PAYLOAD || !known_type(d[at + 4]) || size - at - 9 < len) return;
        uint32_t id = (uint32_t)d[at + 5] << 24 | (uint32_t)d[at + 6] << 16 | (uint32_t)d[at + 7] << 8 | d[at + 8];
        grant_frame(d[at + 4], id, d + at + 9, len);
        at += 9 + (size_t)len;
    }
}

/* An agent frame's payload of n bytes (first its first byte) spends credit: OUTPUT its bytes on its fd, DATA, ENTRY,
 * EVENT and PROC their whole payload on fd 0. */
static void spend(uint8_t type, uint32_t id, uint8_t first, uint64_t n, const uint8_t *head) {
    int fd;
    if (type == A_ACCEPTED) { /* a new agent stream: the credit of its LISTEN, which named it in head */
        if (n != 10) fail("an ACCEPTED frame that is not 10 bytes");
        if (id < 0x80000000u) fail("ACCEPTED on a client's stream id");
        uint32_t listener = (uint32_t)head[0] << 24 | (uint32_t)head[1] << 16 | (uint32_t)head[2] << 8 | head[3];
        grant_of(id)->granted[0] += grant_of(listener)->granted[0];
        return;
    }
    if (type == A_OUTPUT) {
        if (n < 9 || first < 1 || first > 2) fail("an OUTPUT frame without fd and offset");
        fd = first, n -= 9;
    } else if (type == A_DATA || type == A_ENTRY || type == A_EVENT || type == A_PROC) {
        fd = 0;
    } else {
        return;
    }
    struct grant *g = grant_of(id);
    g->spent[fd] += n;
    if (g->spent[fd] > g->granted[fd]) {
        fprintf(stderr, "fuzz_agent: stream %u fd %d: %llu bytes sent, %llu credited\n", id, fd,
                (unsigned long long)g->spent[fd], (unsigned long long)g->granted[fd]);
        fail("the agent sent beyond the credit the client gave");
    }
}

/* ---------- what the client reads back: whole agent frames ---------- */

struct reader {
    uint8_t hdr[9];
    size_t got;     /* header bytes had, or 9 while in a payload */
    uint64_t len, left; /* the payload's length, and its bytes still to come */
    uint8_t first;  /* the payload's first byte */
    uint8_t head[4]; /* its first 4 bytes (ACCEPTED's listener) */
    uint64_t frames;
};

static void frame_done(struct reader *rb) {
    uint32_t id = (uint32_t)rb->hdr[5] << 24 | (uint32_t)rb->hdr[6] << 16 | (uint32_t)rb->hdr[7] << 8 | rb->hdr[8];
    spend(rb->hdr[4], id, rb->first, rb->len, rb->head);
    rb->got = 0;
    rb->frames++;
}

static void read_back(struct reader *rb, const uint8_t *b, size_t n) {
    while (n > 0) {
        if (rb->got < 9) {
            rb->hdr[rb->got++] = *b++;
            n--;
            if (rb->got == 9) {
                rb->len = rb->left = (uint32_t)rb->hdr[0] << 24 | (uint32_t)rb->hdr[1] << 16
                                   | (uint32_t)rb->hdr[2] << 8 | rb->hdr[3];
                if (rb->left > 65600) fail("an agent frame longer than PROTOCOL.md allows (65,600)");
                if (rb->hdr[4] < 0x80) fail("an agent frame with a client's type");
                if (trace) fprintf(stderr, "agent frame 0x%02x on stream %u, %u bytes\n", rb->hdr[4],
                                   (unsigned)rb->hdr[5] << 24 | rb->hdr[6] << 16 | rb->hdr[7] << 8 | rb->hdr[8],
                                   (unsigned)rb->left);
                rb->first = 0;
                memset(rb->head, 0, sizeof rb->head);
                if (rb->left == 0) frame_done(rb);
            }
        } else {
            if (rb->left == rb->len) rb->first = *b;
            size_t k = n < rb->left ? n : (size_t)rb->left, at = (size_t)(rb->len - rb->left);
            for (size_t j = 0; j < k && at + j < sizeof rb->head; j++) rb->head[at + j] = b[j];
            b += k, n -= k, rb->left -= k;
            if (rb->left == 0) frame_done(rb);
        }
    }
}

/* A relay's handoff, as agent_relay.c makes it: the byte HANDOFF with two fds, here the ends of two pipes the client
 * then writes and reads. The socket stays the connection's life line. */
static void hand_off(int sock, int *in_w, int *out_r) {
    int in[2], out[2];
    if (pipe2(in, O_CLOEXEC) < 0 || pipe2(out, O_CLOEXEC) < 0) fail("pipe2");
    union {
        char buf[CMSG_SPACE(2 * sizeof(int))];
        struct cmsghdr align;
    } u;
    memset(&u, 0, sizeof u);
    uint8_t byte = HANDOFF;
    struct iovec iov = {.iov_base = &byte, .iov_len = 1};
    struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf, .msg_controllen = sizeof u.buf};
    struct cmsghdr *h = CMSG_FIRSTHDR(&m);
    h->cmsg_level = SOL_SOCKET;
    h->cmsg_type = SCM_RIGHTS;
    h->cmsg_len = CMSG_LEN(2 * sizeof(int));
    int fds[2] = {in[0], out[1]};
    memcpy(CMSG_DATA(h), fds, sizeof fds);
    if (sendmsg(sock, &m, 0) != 1) fail("sendmsg");
    close(in[0]);
    close(out[1]);
    set_nonblock(in[1]);
    set_nonblock(out[0]);
    *in_w = in[1];
    *out_r = out[0];
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (!root_len) setup();
    int fds_before = count_fds(); /* libFuzzer may open some between inputs (its symbolizer's pipes) */
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv) < 0) fail("socketpair");
    /* a socket connection as accept_all makes one: its first byte may hand over a relay's pipes (an input that
     * begins with HANDOFF is the rest of the stream sent through them) */
    int in_w = sv[1], out_r = sv[1];
    if (size > 0 && data[0] == HANDOFF) {
        hand_off(sv[1], &in_w, &out_r);
        data++, size--;
    }
    grant_all(data, size);
    conn_new(sv[0], sv[0])->handoff = 1;
    size_t sent = 0;
    int shut = 0;
    struct reader rb = {0};
    static uint8_t buf[1 << 16];
    /* the client's end of input comes once the agent is idle (as a client waits for its answers), so that the
     * streams the input opened run before the end of the connection drops them */
    for (long k = 0, idle = 0; G.nconns > 0; k++) {
        if (k > 1000000) fail("the connection did not end after its input ended");
        int busy = G.rq_head != NULL;
        if (sent < size) {
            ssize_t w = write(in_w, data + sent, size - sent);
            if (w > 0) sent += (size_t)w, busy = 1;
        }
        for (ssize_t r; (r = read(out_r, buf, sizeof buf)) > 0; busy = 1) read_back(&rb, buf, (size_t)r);
        busy |= pump_peers();
        idle = busy ? 0 : idle + 1;
        if (sent == size && !shut && idle >= 3) {
            if (in_w != sv[1]) close(in_w), in_w = -1, shut = 1;
            else shut = shutdown(sv[1], SHUT_WR) == 0;
        }
        turn(idle && G.procs ? 1 : 0); /* an idle agent may wait on a process: give it a millisecond */
    }
    for (ssize_t r; (r = read(out_r, buf, sizeof buf)) > 0;) read_back(&rb, buf, (size_t)r);
    if (rb.got != 0) fail("the agent's output ended inside a frame");
    if (in_w >= 0 && in_w != sv[1]) close(in_w);
    if (out_r != sv[1]) close(out_r);
    close(sv[1]);
    close_peers();
    nfakes = 0;
    end_processes();
    if (G.conns || G.rq_head || G.rq_len || G.dirty || G.procs || G.nbg || G.dial_head || G.tunnels)
        fail("state left over after the connection");
    grants_free();
    G.deadline_ms = G.idle_ms = 0; /* TIMERS */
    empty_root();
    if (count_fds() != fds_before) fail("a file descriptor leaked");
    return 0;
}

#ifdef FUZZ_REPLAY
/* Replays files (or every file of directories) through the target: the kept corpus and the regression inputs. */
static int replay(const char *path, int *count) {
    struct stat st;
    if (stat(path, &st) < 0) return fprintf(stderr, "%s: %s\n", path, strerror(errno)), -1;
    if (S_ISDIR(st.st_mode)) {
        struct dirent **names;
        int n = scandir(path, &names, NULL, alphasort), rc = 0;
        for (int i = 0; i < n; i++) {
            char sub[4096];
            if (names[i]->d_name[0] != '.' && (size_t)snprintf(sub, sizeof sub, "%s/%s", path, names[i]->d_name)
                < sizeof sub) {
                rc |= replay(sub, count);
            }
            free(names[i]);
        }
        free(n >= 0 ? names : NULL);
        return rc;
    }
    FILE *f = fopen(path, "rb");
    if (!f) return -1;
    uint8_t *b = xmalloc((size_t)st.st_size);
    size_t n = fread(b, 1, (size_t)st.st_size, f);
    fclose(f);
    LLVMFuzzerTestOneInput(b, n);
    free(b);
    (*count)++;
    return 0;
}

int main(int argc, char **argv) {
    int count = 0, rc = 0;
    for (int i = 1; i < argc; i++) rc |= replay(argv[i], &count);
    printf("fuzz_agent replay: %d inputs, none crashed\n", count);
    return rc ? 1 : 0;
}
#endif
