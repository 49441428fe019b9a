/*
 * agent_test.c: the harness of the protocol tests (declared and described in agent_test.h) and main, which runs the
 * tests of its table in order, each in its own process.
 */
#include "agent_test.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

const char *AGENT;
int sanitized;
char tmpdir[64];
const char *current;
static int failures, passes;

int64_t mono_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t wall_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---------- payload building ---------- */

void b_u8(struct buf *b, uint8_t v) { b->d[b->n++] = v; }
void b_u16(struct buf *b, uint16_t v) { b_u8(b, v >> 8); b_u8(b, (uint8_t)v); }
void b_u32(struct buf *b, uint32_t v) { b_u16(b, v >> 16); b_u16(b, (uint16_t)v); }
void b_u64(struct buf *b, uint64_t v) { b_u32(b, v >> 32); b_u32(b, (uint32_t)v); }
void b_bytes(struct buf *b, const void *p, size_t n) { memcpy(b->d + b->n, p, n); b->n += n; }
void b_str(struct buf *b, const char *s) { b_u32(b, (uint32_t)strlen(s)); b_bytes(b, s, strlen(s)); }

uint32_t g32(const uint8_t *p) { return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3]; }
uint64_t g64(const uint8_t *p) { return (uint64_t)g32(p) << 32 | g32(p + 4); }

/* ---------- frames ---------- */

void write_all(int fd, const void *p, size_t n) {
    const uint8_t *b = p;
    while (n) {
        ssize_t k = write(fd, b, n);
        if (k < 0 && errno == EINTR) continue;
        CHECK(k > 0, "write: %s", strerror(errno));
        b += k;
        n -= (size_t)k;
    }
}

/* For connections the agent may have closed: 0 when the write failed. */
int try_frame(int fd, uint8_t type, uint32_t stream, const void *payload, size_t len) {
    uint8_t f[9 + 256];
    if (len > 256) return 0;
    f[0] = (uint8_t)(len >> 24), f[1] = (uint8_t)(len >> 16), f[2] = (uint8_t)(len >> 8), f[3] = (uint8_t)len;
    f[4] = type;
    f[5] = (uint8_t)(stream >> 24), f[6] = (uint8_t)(stream >> 16), f[7] = (uint8_t)(stream >> 8), f[8] = (uint8_t)stream;
    memcpy(f + 9, payload, len);
    return send(fd, f, 9 + len, MSG_NOSIGNAL) == (ssize_t)(9 + len);
}

void send_frame(int fd, uint8_t type, uint32_t stream, const void *payload, size_t len) {
    uint8_t h[9] = {(uint8_t)(len >> 24), (uint8_t)(len >> 16), (uint8_t)(len >> 8), (uint8_t)len, type,
                    (uint8_t)(stream >> 24), (uint8_t)(stream >> 16), (uint8_t)(stream >> 8), (uint8_t)stream};
    write_all(fd, h, 9);
    if (len) write_all(fd, payload, len);
}

void sendb(int fd, uint8_t type, uint32_t stream, const struct buf *b) { send_frame(fd, type, stream, b->d, b->n); }

/* Reads exactly n bytes within the deadline: 1, 0 at end of stream before any byte, -1 on timeout. */
int read_full(int fd, void *p, size_t n, int64_t deadline) {
    uint8_t *b = p;
    size_t got = 0;
    while (got < n) {
        int64_t left = deadline - mono_ms();
        if (left <= 0) return -1;
        struct pollfd pf = {.fd = fd, .events = POLLIN};
        int r = poll(&pf, 1, (int)left);
        if (r < 0 && errno == EINTR) continue;
        if (r == 0) return -1;
        ssize_t k = read(fd, b + got, n - got);
        if (k < 0 && (errno == EINTR || errno == EAGAIN)) continue;
        if (k <= 0) {
            CHECK(got == 0, "connection ended inside a frame");
            return 0;
        }
        got += (size_t)k;
    }
    return 1;
}

/* The next frame within ms: 1, 0 at end of stream, -1 on timeout. Checks the agent's own limits. */
int next_frame_in(int fd, struct frame *f, int ms) {
    uint8_t h[9];
    int64_t deadline = mono_ms() + ms;
    int r = read_full(fd, h, 9, deadline);
    if (r <= 0) return r;
    f->len = g32(h);
    f->type = h[4];
    f->stream = g32(h + 5);
    CHECK(f->len <= 65600, "agent frame of %u bytes", f->len);
    r = read_full(fd, f->p, f->len, deadline + WAIT_MS);
    CHECK(r == 1 || f->len == 0, "payload missing");
    return 1;
}

void next_frame_at(int fd, struct frame *f, int line) {
    int r = next_frame_in(fd, f, WAIT_MS);
    CHECK(r == 1, "no frame within %d ms (r=%d), waited at line %d", WAIT_MS, r, line);
}

/* The next frame on a stream, skipping CREDIT frames (and frames of other streams when skip_others). */
void expect_on_at(int fd, uint32_t stream, struct frame *f, int line) {
    for (;;) {
        next_frame_at(fd, f, line);
        if (f->stream == stream && f->type != 0x83) return;
    }
}

void expect_error(int fd, uint32_t stream, uint32_t code, struct frame *f) {
    expect_on(fd, stream, f);
    CHECK(f->type == 0xEE, "expected ERROR %u, got frame 0x%02x", code, f->type);
    CHECK(g32(f->p) == code, "expected ERROR %u, got %u: %.*s", code, g32(f->p), (int)g32(f->p + 4), f->p + 8);
}

/* Asserts the connection ends (after an optional ERROR with code). */
void expect_closed_after_error(int fd, uint32_t code) {
    struct frame *f = malloc(sizeof *f);
    do next_frame(fd, f); while (f->stream != 0); /* frames of streams answered before the bad one */
    CHECK(f->type == 0xEE && f->stream == 0 && g32(f->p) == code, "expected ERROR %u on stream 0, got 0x%02x %u",
          code, f->type, f->len >= 4 ? g32(f->p) : 0);
    int r;
    do r = next_frame_in(fd, f, WAIT_MS); while (r == 1);
    CHECK(r == 0, "connection still open after ERROR %u", code);
    free(f);
}

void hello(int fd) {
    struct buf b = {.n = 0};
    b_u16(&b, 1);
    b_u16(&b, 1);
    b_str(&b, "test_agent");
    sendb(fd, 0x01, 0, &b);
    struct frame *f = malloc(sizeof *f);
    next_frame(fd, f);
    CHECK(f->type == 0x81 && f->stream == 0, "expected HELLO, got 0x%02x", f->type);
    CHECK(f->p[0] == 0 && f->p[1] == 1, "version %u", f->p[0] << 8 | f->p[1]);
    free(f);
}

void ping(int fd, uint64_t token) {
    struct buf b = {.n = 0};
    b_u64(&b, token);
    sendb(fd, 0x02, 0, &b);
    struct frame *f = malloc(sizeof *f);
    expect_on(fd, 0, f);
    CHECK(f->type == 0x82 && f->len == 8 && g64(f->p) == token, "expected PONG %llu", (unsigned long long)token);
    free(f);
}

/* ---------- agents ---------- */

/* Agents this test process started: killed if a check fails, so no agent outlives its test. */
static pid_t started_agents[64];
static int nstarted_agents;

static void kill_agents(void) {
    for (int i = 0; i < nstarted_agents; i++)
        if (started_agents[i] > 0 && kill(started_agents[i], 0) == 0) kill(started_agents[i], SIGKILL);
}

void track(pid_t pid) {
    if (nstarted_agents == 0) atexit(kill_agents);
    if (nstarted_agents < 64) started_agents[nstarted_agents++] = pid;
}

struct agent start_stdio(void) {
    int sv[2];
    CHECK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == 0, "socketpair");
    struct agent a = {.fd = sv[0]};
    a.pid = fork();
    if (a.pid == 0) {
        dup2(sv[1], 0);
        dup2(sv[1], 1);
        execl(AGENT, AGENT, "stdio", (char *)NULL);
        _exit(127);
    }
    track(a.pid);
    close(sv[1]);
    return a;
}

int connect_to(const char *path) {
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    snprintf(a.sun_path, sizeof a.sun_path, "%s", path);
    int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    CHECK(s >= 0, "socket");
    if (connect(s, (struct sockaddr *)&a, sizeof a) == 0) return s;
    close(s);
    return -1;
}

struct agent start_init(const char *extra1, const char *extra2) {
    static int n;
    struct agent a = {.fd = -1};
    snprintf(a.sock, sizeof a.sock, "%s/agent%d.sock", tmpdir, n++);
    a.pid = fork();
    if (a.pid == 0) {
        execl(AGENT, AGENT, "init", "--socket", a.sock, extra1, extra2, (char *)NULL);
        _exit(127);
    }
    track(a.pid);
    /* the socket appears once the agent listens: poll for it, bounded */
    for (int i = 0; i < 2000; i++) {
        int s = connect_to(a.sock);
        if (s >= 0) {
            a.fd = s;
            return a;
        }
        struct timespec ts = {0, 5 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    CHECK(0, "agent did not listen on %s", a.sock);
    return a;
}

/* Waits for the agent to exit; its exit status. */
int wait_agent(struct agent *a, int ms) {
    int64_t deadline = mono_ms() + ms;
    for (;;) {
        int st;
        pid_t r = waitpid(a->pid, &st, WNOHANG);
        if (r == a->pid) {
            a->pid = 0;
            return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
        }
        CHECK(mono_ms() < deadline, "agent did not exit within %d ms", ms);
        struct timespec ts = {0, 2 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
}

/* Ends an agent the way its user would: the connection ends (stdio) or SIGTERM (init); it must exit 0. */
void stop_agent(struct agent *a) {
    if (a->fd >= 0) close(a->fd);
    a->fd = -1;
    if (a->sock[0]) kill(a->pid, SIGTERM);
    int rc = wait_agent(a, WAIT_MS);
    CHECK(rc == 0, "agent exited with %d", rc);
}

long rss_kb(pid_t pid) {
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
    FILE *f = fopen(path, "r");
    long kb = -1;
    if (!f) return -1;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "VmRSS: %ld", &kb) == 1) break;
    fclose(f);
    return kb;
}

/* ---------- process helpers ---------- */

void spawn_full(int fd, uint32_t id, uint32_t flags, uint32_t credit, uint32_t ring, uint8_t overflow,
                const char *cwd, const char *const *argv, const char *const *env) {
    struct buf *b = malloc(sizeof *b);
    b->n = 0;
    b_u32(b, flags);
    b_u16(b, 80);
    b_u16(b, 24);
    b_u32(b, credit);
    b_u32(b, ring);
    b_u8(b, overflow);
    b_str(b, cwd);
    size_t n = 0;
    while (argv[n]) n++;
    b_u32(b, (uint32_t)n);
    for (size_t i = 0; i < n; i++) b_str(b, argv[i]);
    n = 0;
    while (env && env[n]) n++;
    b_u32(b, (uint32_t)n);
    for (size_t i = 0; i < n; i++) b_str(b, env[i]);
    sendb(fd, 0x10, id, b);
    free(b);
}

void spawn(int fd, uint32_t id, uint32_t flags, const char *const *argv) {
    spawn_full(fd, id, flags, 1 << 20, 0, 0, "", argv, NULL);
}

/* Reads a stream's frames until EXIT (a STARTED not read yet gives the pid), checking offsets. */
void collect(int fd, uint32_t id, struct result *r) {
    struct frame *f = malloc(sizeof *f);
    for (;;) {
        expect_on(fd, id, f);
        if (f->type == 0x90) {
            r->pid = g32(f->p);
            continue;
        }
        if (f->type == 0x91) {
            uint8_t which = f->p[0];
            uint64_t off = g64(f->p + 1);
            size_t n = f->len - 9;
            CHECK(which == 1 || which == 2, "OUTPUT fd %u", which);
            size_t *have = which == 1 ? &r->nout : &r->nerr;
            char *dst = which == 1 ? r->out : r->err;
            CHECK(off == *have, "OUTPUT offset %llu, expected %zu", (unsigned long long)off, *have);
            if (*have + n < sizeof r->out) memcpy(dst + *have, f->p + 9, n);
            *have += n;
            continue;
        }
        CHECK(f->type == 0x92, "expected EXIT, got 0x%02x (%.*s)", f->type, f->type == 0xEE ? (int)g32(f->p + 4) : 0,
              f->p + 8);
        r->status = (int32_t)g32(f->p);
        r->signaled = f->p[4];
        r->oom = f->p[5];
        break;
    }
    if (r->nout < sizeof r->out) r->out[r->nout] = 0;
    if (r->nerr < sizeof r->err) r->err[r->nerr] = 0;
    free(f);
}

struct result *run(int fd, uint32_t id, const char *const *argv) {
    struct result *r = calloc(1, sizeof *r);
    spawn(fd, id, 0, argv);
    collect(fd, id, r);
    return r;
}

void credit(int fd, uint32_t id, uint8_t which, uint32_t bytes) {
    struct buf b = {.n = 0};
    b_u8(&b, which);
    b_u32(&b, bytes);
    sendb(fd, 0x15, id, &b);
}

void input(int fd, uint32_t id, const char *pid, uint8_t what, const void *bytes, size_t n) {
    struct buf b = {.n = 0};
    b_str(&b, pid);
    b_u8(&b, what);
    b_bytes(&b, bytes, n);
    sendb(fd, 0x32, id, &b);
}

int blocked_in_pipe_write(pid_t pid) {
    char path[64], w[64] = "";
    snprintf(path, sizeof path, "/proc/%d/wchan", (int)pid);
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    size_t n = fread(w, 1, sizeof w - 1, f);
    fclose(f);
    w[n] = 0;
    return strstr(w, "pipe_write") != NULL;
}

int alive(pid_t pid) {
    char path[64], st[512];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    size_t n = fread(st, 1, sizeof st - 1, f);
    fclose(f);
    st[n] = 0;
    char *p = strrchr(st, ')');
    return p && p[2] != 'Z' && p[2] != 'X';
}

/* `cat` fed with total bytes of DATA (more than the first credit: the agent must hand credit back as cat consumes),
 * read back through OUTPUT with offsets; frames go to wfd and come from rfd (one socket, or a relay's pipes). */
void cat_roundtrip(int wfd, int rfd, uint32_t id, uint64_t total) {
    const char *argv[] = {"cat", NULL};
    spawn(wfd, id, F_STDIN, argv);
    struct frame *f = malloc(sizeof *f);
    expect_on(rfd, id, f);
    CHECK(f->type == 0x90, "expected STARTED, got 0x%02x", f->type);
    uint32_t dc = g32(f->p + 4 + g32(f->p + 4) + 4);
    CHECK(dc == 256 * 1024, "stdin credit %u", dc);
    static char chunk[65536];
    uint64_t sent = 0, got = 0, credit_left = dc;
    for (size_t i = 0; i < sizeof chunk; i++) chunk[i] = (char)('a' + i % 26);
    while (got < total) {
        /* at most 128 KiB in flight: this test reads and writes on one thread, so it must not fill both ways */
        while (sent < total && credit_left >= sizeof chunk && sent - got < 128 * 1024) {
            send_frame(wfd, 0x11, id, chunk, sizeof chunk);
            sent += sizeof chunk;
            credit_left -= sizeof chunk;
            if (sent == total) send_frame(wfd, 0x12, id, NULL, 0);
        }
        int rr = next_frame_in(rfd, f, WAIT_MS);
        CHECK(rr == 1, "no frame: sent %llu got %llu credit %llu", (unsigned long long)sent, (unsigned long long)got,
              (unsigned long long)credit_left);
        CHECK(f->stream == id, "stream %u", f->stream);
        if (f->type == 0x83) {
            CHECK(f->p[0] == 0, "CREDIT fd %u", f->p[0]);
            credit_left += g32(f->p + 1);
            CHECK(credit_left <= dc, "credit %llu beyond the first", (unsigned long long)credit_left);
        } else {
            CHECK(f->type == 0x91 && f->p[0] == 1, "expected OUTPUT, got 0x%02x", f->type);
            CHECK(g64(f->p + 1) == got, "offset");
            for (uint32_t i = 9; i < f->len; i++)
                CHECK(f->p[i] == (uint8_t)('a' + (got + i - 9) % 65536 % 26), "byte %llu", (unsigned long long)got);
            got += f->len - 9;
            credit(wfd, id, 1, f->len - 9); /* the window stays at spawn()'s 1 MiB */
        }
    }
    CHECK(got == total, "got %llu of %llu", (unsigned long long)got, (unsigned long long)total);
    expect_on(rfd, id, f); /* CREDIT frames are skipped; nothing else may come before EXIT */
    CHECK(f->type == 0x92, "unexpected frame 0x%02x after all output", f->type);
    CHECK(g32(f->p) == 0, "cat status %u", g32(f->p));
    free(f);
}

void parse_started_id(const struct frame *f, char *id, size_t cap) {
    uint32_t n = g32(f->p + 4);
    CHECK(n < cap, "id length");
    memcpy(id, f->p + 8, n);
    id[n] = 0;
}

struct test {
    const char *name;
    void (*fn)(void);
};

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: test_agent PATH-TO-sandbox-agent [TEST-NAME]\n");
        return 2;
    }
    AGENT = argv[1];
    sanitized = strstr(AGENT, "-san") != NULL;
    signal(SIGPIPE, SIG_IGN);
    snprintf(tmpdir, sizeof tmpdir, "/tmp/test_agent.XXXXXX");
    CHECK(mkdtemp(tmpdir), "mkdtemp");
    /* in this order; one per line (agent_test.h: adding a test file) */
    struct test tests[] = {
        {"version", t_version},
        {"hello and version", t_hello_version},
        {"echo and exit", t_echo_exit},
        {"stdin with cat", t_stdin_cat},
        {"launch errors", t_launch_errors},
        {"signal and close", t_signal},
        {"credit", t_credit},
        {"malformed frames", t_malformed},
        {"pty and resize", t_pty},
        {"background", t_background},
        {"1000 streams", t_many_streams},
        {"timers", t_deadline},
        {"relay", t_relay},
        {"channel", t_channel},
        {"idle rss", t_idle_rss},
        {"files", t_files},
        {"limits", t_limits},
        {"unread connection", t_unread_connection},
        {"background pty", t_background_pty},
        {"fuzz", t_fuzz},
        {"orphans", t_orphans},
        {"sigterm", t_sigterm},
        {"background limit", t_background_limit},
        {"pid 1", t_pid1},
        {"throttle unread", t_throttle_unread},
        {"tunnel", t_tunnel},
        {"listen", t_listen},
        {"bench", t_bench},
    };
    for (size_t i = 0; i < sizeof tests / sizeof tests[0]; i++) {
        if (argc > 2 && strcmp(argv[2], tests[i].name) != 0) continue;
        if (argc <= 2 && tests[i].fn == t_bench) continue; /* a measurement, not a test: only when named */
        current = tests[i].name;
        int64_t t0 = mono_ms();
        pid_t pid = fork(); /* each test in its own process: a failure names itself and the rest still run */
        if (pid == 0) {
            tests[i].fn();
            exit(0);
        }
        int st;
        waitpid(pid, &st, 0);
        int ok = WIFEXITED(st) && WEXITSTATUS(st) == 0;
        printf("%s %s (%lld ms)\n", ok ? "ok  " : "FAIL", tests[i].name, (long long)(mono_ms() - t0));
        fflush(stdout);
        if (ok) passes++; else failures++;
    }
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", tmpdir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", tmpdir);
    printf("%d passed, %d failed\n", passes, failures);
    return failures ? 1 : 0;
}
