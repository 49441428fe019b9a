/*
 * test_agent.c: the protocol tests of sandbox-agent (the harness that runs them is agent_test.c, described in
 * agent_test.h).
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

void t_hello_version(void) {
    struct agent a = start_stdio();
    hello(a.fd);
    ping(a.fd, 42);
    stop_agent(&a);

    a = start_stdio();
    struct buf b = {.n = 0};
    b_u16(&b, 2);
    b_u16(&b, 3);
    b_str(&b, "future client");
    sendb(a.fd, 0x01, 0, &b);
    expect_closed_after_error(a.fd, 1001);
    stop_agent(&a);

    a = start_stdio(); /* anything before HELLO */
    b.n = 0;
    b_u64(&b, 1);
    sendb(a.fd, 0x02, 0, &b);
    expect_closed_after_error(a.fd, 1000);
    stop_agent(&a);
}

void t_echo_exit(void) {
    struct agent a = start_stdio();
    hello(a.fd);
    const char *argv[] = {"sh", "-c", "echo hello; exit 3", NULL};
    struct result *r = run(a.fd, 1, argv);
    CHECK(strcmp(r->out, "hello\n") == 0, "stdout '%s'", r->out);
    CHECK(r->status == 3 && !r->signaled && !r->oom, "status %d signaled %d", r->status, r->signaled);
    CHECK(r->pid > 1, "pid %u", r->pid);
    free(r);
    const char *argv2[] = {"sh", "-c", "echo out; echo err >&2; echo \"$FOO\"", NULL};
    const char *env[] = {"FOO=bar baz", NULL};
    r = calloc(1, sizeof *r);
    spawn_full(a.fd, 2, 0, 1 << 20, 0, 0, "/", argv2, env);
    collect(a.fd, 2, r);
    CHECK(strcmp(r->out, "out\nbar baz\n") == 0, "stdout '%s'", r->out);
    CHECK(strcmp(r->err, "err\n") == 0, "stderr '%s'", r->err);
    CHECK(r->status == 0, "status %d", r->status);
    free(r);
    const char *argv3[] = {"sh", "-c", "pwd", NULL};
    r = calloc(1, sizeof *r);
    spawn_full(a.fd, 3, 0, 1 << 20, 0, 0, tmpdir, argv3, NULL);
    collect(a.fd, 3, r);
    CHECK(strncmp(r->out, tmpdir, strlen(tmpdir)) == 0, "pwd '%s' in %s", r->out, tmpdir);
    free(r);
    stop_agent(&a);
}

void t_stdin_cat(void) {
    struct agent a = start_stdio();
    hello(a.fd);
    cat_roundtrip(a.fd, a.fd, 1, 1024 * 1024);
    stop_agent(&a);
}

/* As process 1 would, the agent reaps the orphans of its children (init mode makes it their subreaper). */
void t_orphans(void) {
    struct agent a = start_init(NULL, NULL);
    hello(a.fd);
    const char *argv[] = {"sh", "-c", "sleep 0.2 & echo $!", NULL};
    struct result *r = run(a.fd, 1, argv);
    pid_t orphan = (pid_t)atoi(r->out);
    CHECK(orphan > 1 && r->status == 0, "orphan pid '%s'", r->out);
    char path[64];
    snprintf(path, sizeof path, "/proc/%d", (int)orphan);
    int64_t dl = mono_ms() + WAIT_MS;
    struct stat st;
    while (stat(path, &st) == 0) { /* a zombie nobody reaps stays in /proc */
        CHECK(mono_ms() < dl, "orphan %d not reaped", (int)orphan);
        struct timespec ts = {0, 5000000};
        nanosleep(&ts, NULL);
    }
    free(r);
    stop_agent(&a);
}

void t_launch_errors(void) {
    struct agent a = start_stdio();
    hello(a.fd);
    struct frame *f = malloc(sizeof *f);
    const char *argv[] = {"no-such-program-xyz", NULL};
    spawn(a.fd, 1, 0, argv);
    expect_error(a.fd, 1, ENOENT, f);
    CHECK(memmem(f->p + 8, g32(f->p + 4), "no-such-program-xyz", 19), "message names argv[0]: %.*s",
          (int)g32(f->p + 4), f->p + 8);
    const char *argv2[] = {"sh", "-c", "true", NULL};
    spawn_full(a.fd, 2, 0, 1024, 0, 0, "/no/such/dir", argv2, NULL);
    expect_error(a.fd, 2, ENOENT, f);
    CHECK(memmem(f->p + 8, g32(f->p + 4), "/no/such/dir", 12), "message names cwd");
    const char *argv3[] = {"/etc/passwd", NULL};
    spawn(a.fd, 3, 0, argv3);
    expect_error(a.fd, 3, EACCES, f);
    /* the connection lives on */
    const char *ok[] = {"true", NULL};
    struct result *r = run(a.fd, 4, ok);
    CHECK(r->status == 0, "status");
    free(r);
    free(f);
    stop_agent(&a);
}

void t_signal(void) {
    struct agent a = start_stdio();
    hello(a.fd);
    const char *argv[] = {"sleep", "100", NULL};
    spawn(a.fd, 1, 0, argv);
    struct frame *f = malloc(sizeof *f);
    expect_on(a.fd, 1, f);
    CHECK(f->type == 0x90, "STARTED");
    struct buf b = {.n = 0};
    b_u32(&b, SIGTERM);
    sendb(a.fd, 0x13, 1, &b);
    struct result *r = calloc(1, sizeof *r);
    int64_t t0 = mono_ms();
    collect(a.fd, 1, r);
    CHECK(r->signaled && r->status == SIGTERM, "signaled %d status %d", r->signaled, r->status);
    CHECK(mono_ms() - t0 < 5000, "took %lld ms", (long long)(mono_ms() - t0));
    /* CLOSE kills the group of a foreground process */
    spawn(a.fd, 2, 0, argv);
    expect_on(a.fd, 2, f);
    pid_t pid = (pid_t)g32(f->p);
    CHECK(alive(pid), "sleep alive");
    send_frame(a.fd, 0x1F, 2, NULL, 0);
    ping(a.fd, 7);
    int64_t dl = mono_ms() + WAIT_MS;
    while (alive(pid)) {
        CHECK(mono_ms() < dl, "sleep survived CLOSE");
        struct timespec ts = {0, 2000000};
        nanosleep(&ts, NULL);
    }
    free(r);
    free(f);
    stop_agent(&a);
}

void t_credit(void) {
    struct agent a = start_stdio();
    hello(a.fd);
    const char *argv[] = {"yes", NULL};
    spawn_full(a.fd, 1, 0, 1000, 0, 0, "", argv, NULL);
    struct frame *f = malloc(sizeof *f);
    expect_on(a.fd, 1, f);
    CHECK(f->type == 0x90, "STARTED");
    pid_t yes = (pid_t)g32(f->p);
    uint64_t got = 0;
    while (got < 1000) {
        expect_on(a.fd, 1, f);
        CHECK(f->type == 0x91, "OUTPUT, got 0x%02x", f->type);
        got += f->len - 9;
    }
    CHECK(got == 1000, "got %llu bytes with credit 1000", (unsigned long long)got);
    /* yes fills its pipe and blocks in write() */
    int64_t dl = mono_ms() + WAIT_MS;
    while (!blocked_in_pipe_write(yes)) {
        CHECK(mono_ms() < dl, "yes not blocked in pipe_write");
        struct timespec ts = {0, 2000000};
        nanosleep(&ts, NULL);
    }
    /* another stream on the same connection completes meanwhile */
    const char *echo[] = {"echo", "second", NULL};
    struct result *r = calloc(1, sizeof *r);
    spawn(a.fd, 2, 0, echo);
    for (;;) {
        next_frame(a.fd, f);
        CHECK(f->stream == 2, "frame 0x%02x on stream %u while stream 1 has no credit", f->type, f->stream);
        if (f->type == 0x91) memcpy(r->out + r->nout, f->p + 9, f->len - 9), r->nout += f->len - 9;
        if (f->type == 0x92) break;
    }
    CHECK(r->nout == 7 && memcmp(r->out, "second\n", 7) == 0, "second stream output");
    CHECK(blocked_in_pipe_write(yes), "yes still blocked");
    /* more credit: exactly that much more */
    credit(a.fd, 1, 1, 5000);
    got = 0;
    while (got < 5000) {
        expect_on(a.fd, 1, f);
        CHECK(f->type == 0x91 && g64(f->p + 1) == 1000 + got, "OUTPUT at %llu", (unsigned long long)(1000 + got));
        got += f->len - 9;
    }
    CHECK(got == 5000, "got %llu", (unsigned long long)got);
    ping(a.fd, 1); /* nothing else came before the PONG */
    send_frame(a.fd, 0x1F, 1, NULL, 0);
    ping(a.fd, 2);
    free(r);
    free(f);
    stop_agent(&a);
}

/* A malformed frame closes only its connection: a second connection keeps working. */
static void bad_case(const char *name, void (*send)(int fd)) {
    current = name;
    struct agent a = start_init(NULL, NULL);
    int other = connect_to(a.sock);
    CHECK(other >= 0, "second connection");
    hello(a.fd);
    hello(other);
    const char *argv[] = {"sleep", "100", NULL};
    spawn(a.fd, 1, 0, argv);
    struct frame *f = malloc(sizeof *f);
    expect_on(a.fd, 1, f);
    pid_t victim = (pid_t)g32(f->p);
    spawn(other, 1, 0, argv);
    expect_on(other, 1, f);
    pid_t survivor = (pid_t)g32(f->p);
    send(a.fd);
    expect_closed_after_error(a.fd, 1000);
    int64_t dl = mono_ms() + WAIT_MS;
    while (alive(victim)) {
        CHECK(mono_ms() < dl, "foreground process of the broken connection survived");
        struct timespec ts = {0, 2000000};
        nanosleep(&ts, NULL);
    }
    ping(other, 99);
    CHECK(alive(survivor), "the other connection's process was killed");
    const char *echo[] = {"echo", "alive", NULL};
    struct result *r = run(other, 2, echo);
    CHECK(strcmp(r->out, "alive\n") == 0, "other connection: '%s'", r->out);
    free(r);
    free(f);
    close(other);
    stop_agent(&a);
}

static void bad_huge(int fd) {
    uint8_t h[9] = {0x7f, 0xff, 0xff, 0xff, 0x10, 0, 0, 0, 5};
    write_all(fd, h, 9);
}
static void bad_type(int fd) { send_frame(fd, 0x7f, 3, "x", 1); }
static void bad_short(int fd) { send_frame(fd, 0x10, 5, "\0\0\0\0\0", 5); }
static void bad_leftover(int fd) {
    struct buf b = {.n = 0};
    b_u64(&b, 1);
    b_u8(&b, 0);
    sendb(fd, 0x02, 0, &b);
}
static void bad_reuse(int fd) {
    const char *argv[] = {"true", NULL};
    spawn(fd, 1, 0, argv); /* stream 1 is the open sleep */
}
static void bad_reuse_ended(int fd) {
    const char *argv[] = {"true", NULL};
    struct result *r = run(fd, 2, argv);
    free(r);
    spawn(fd, 2, 0, argv);
}
static void bad_data_credit(int fd) {
    /* sleep never reads its stdin: the pipe takes 64 KiB (credited back), the agent holds the first 256 KiB of
     * credit; a sixth 64 KiB frame is beyond anything the client could have been granted */
    const char *argv[] = {"sleep", "100", NULL};
    spawn(fd, 7, F_STDIN, argv);
    static char big[65536];
    for (int i = 0; i < 6; i++) send_frame(fd, 0x11, 7, big, sizeof big);
}
static void bad_data_no_stdin(int fd) { send_frame(fd, 0x11, 1, "x", 1); } /* sleep has no stdin: no credit */
static void bad_str(int fd) {
    struct buf b = {.n = 0};
    b_u32(&b, 0);
    b_u16(&b, 0);
    b_u16(&b, 0);
    b_u32(&b, 0);
    b_u32(&b, 0);
    b_u8(&b, 0);
    b_u32(&b, 1000); /* cwd longer than the frame */
    sendb(fd, 0x10, 9, &b);
}

void t_malformed(void) {
    bad_case("malformed: huge length", bad_huge);
    bad_case("malformed: unknown type", bad_type);
    bad_case("malformed: short payload", bad_short);
    bad_case("malformed: bytes left over", bad_leftover);
    bad_case("malformed: reused open stream id", bad_reuse);
    bad_case("malformed: reused ended stream id", bad_reuse_ended);
    bad_case("malformed: DATA beyond credit", bad_data_credit);
    bad_case("malformed: DATA without stdin", bad_data_no_stdin);
    bad_case("malformed: str beyond frame", bad_str);
}

void t_many_streams(void) {
    struct agent a = start_stdio();
    hello(a.fd);
    long rss0 = rss_kb(a.pid);
    enum { N = 1000 };
    const char *cat[] = {"cat", NULL};
    for (uint32_t i = 1; i <= N; i++) {
        spawn_full(a.fd, i, F_STDIN, 65536, 0, 0, "", cat, NULL);
    }
    struct frame *f = malloc(sizeof *f);
    static uint8_t started[N + 1], exited[N + 1];
    int nstarted = 0;
    /* PING answers only come after earlier frames: one more and every STARTED came before it */
    struct buf b = {.n = 0};
    b_u64(&b, 123456);
    sendb(a.fd, 0x02, 0, &b);
    for (;;) {
        next_frame(a.fd, f);
        if (f->type == 0x82 && g64(f->p) == 123456) break;
        if (f->type == 0x90) {
            CHECK(f->stream >= 1 && f->stream <= N && !started[f->stream], "STARTED %u", f->stream);
            started[f->stream] = 1;
            nstarted++;
        } else {
            CHECK(f->type == 0x82, "frame 0x%02x on %u", f->type, f->stream);
        }
    }
    CHECK(nstarted == N, "%d started", nstarted);
    long rss = rss_kb(a.pid);
    printf("  agent RSS: %ld KiB before, %ld KiB with %d concurrent cat streams%s\n", rss0, rss, N,
           sanitized ? " (sanitized build: not checked)" : "");
    if (!sanitized) CHECK(rss < 32 * 1024, "RSS %ld KiB with %d streams", rss, N);
    for (uint32_t i = 1; i <= N; i++) {
        char line[32];
        int n = snprintf(line, sizeof line, "%u\n", i);
        send_frame(a.fd, 0x11, i, line, (size_t)n);
        send_frame(a.fd, 0x12, i, NULL, 0);
    }
    int nexit = 0;
    while (nexit < N) {
        next_frame(a.fd, f);
        if (f->type == 0x91) {
            char want[32];
            int n = snprintf(want, sizeof want, "%u\n", f->stream);
            CHECK(f->len - 9 == (uint32_t)n && memcmp(f->p + 9, want, (size_t)n) == 0, "stream %u echoed", f->stream);
        } else if (f->type == 0x92) {
            CHECK(!exited[f->stream] && g32(f->p) == 0, "EXIT %u", f->stream);
            exited[f->stream] = 1;
            nexit++;
        } else {
            CHECK(f->type == 0x83, "frame 0x%02x", f->type);
        }
    }
    free(f);
    stop_agent(&a);
}

void t_pty(void) {
    struct agent a = start_stdio();
    hello(a.fd);
    const char *argv[] = {"sh", "-c", "stty size; read x; stty size", NULL};
    spawn(a.fd, 1, F_PTY, argv);
    struct frame *f = malloc(sizeof *f);
    expect_on(a.fd, 1, f);
    CHECK(f->type == 0x90, "STARTED");
    char out[4096];
    size_t n = 0;
    while (!memmem(out, n, "24 80", 5)) {
        expect_on(a.fd, 1, f);
        CHECK(f->type == 0x91 && f->p[0] == 1, "OUTPUT on fd 1, got 0x%02x", f->type);
        CHECK(n + f->len - 9 < sizeof out, "too much output");
        memcpy(out + n, f->p + 9, f->len - 9);
        n += f->len - 9;
    }
    struct buf b = {.n = 0};
    b_u16(&b, 100);
    b_u16(&b, 40);
    sendb(a.fd, 0x14, 1, &b);
    send_frame(a.fd, 0x11, 1, "\n", 1);
    n = 0;
    for (;;) {
        expect_on(a.fd, 1, f);
        if (f->type == 0x92) break;
        CHECK(f->type == 0x91, "0x%02x", f->type);
        CHECK(n + f->len - 9 < sizeof out, "too much output");
        memcpy(out + n, f->p + 9, f->len - 9);
        n += f->len - 9;
    }
    CHECK(memmem(out, n, "40 100", 6), "stty size after RESIZE: '%.*s'", (int)n, out);
    CHECK(g32(f->p) == 0, "status");
    /* EOF on a terminal is its EOF character: cat sees the end of its input and exits */
    const char *cat[] = {"cat", NULL};
    spawn(a.fd, 2, F_PTY, cat);
    send_frame(a.fd, 0x11, 2, "line\n", 5);
    send_frame(a.fd, 0x12, 2, NULL, 0);
    struct result *r = calloc(1, sizeof *r);
    collect(a.fd, 2, r);
    CHECK(r->status == 0 && !r->signaled && memmem(r->out, r->nout, "line", 4), "cat on a terminal: %d '%s'",
          r->status, r->out);
    free(r);
    free(f);
    stop_agent(&a);
}

/* The stdout ring [start, end) of background process id, as PROCS on stream sid reports it. */
static void stdout_ring(int fd, uint32_t sid, const char *id, uint64_t *start, uint64_t *end) {
    struct frame *f = malloc(sizeof *f);
    struct buf b = {.n = 0};
    b_u32(&b, 1 << 20);
    sendb(fd, 0x30, sid, &b);
    int found = 0;
    for (;;) {
        expect_on(fd, sid, f);
        if (f->type == 0x95) break;
        CHECK(f->type == 0x99, "PROC 0x%02x", f->type);
        uint32_t l = g32(f->p);
        const uint8_t *av = f->p + 4 + l + 1 + 4 + 8 + 1 + 4 + 1;
        uint32_t argc = g32(av);
        const uint8_t *e = av + 4;
        for (uint32_t i = 0; i < argc; i++) e += 4 + g32(e);
        if (l == strlen(id) && memcmp(f->p + 4, id, l) == 0) {
            *start = g64(e);
            *end = g64(e + 8);
            found = 1;
        }
    }
    CHECK(found, "no PROC %s", id);
    free(f);
}

/* Waits until a THROTTLE process is held at one ring: PROCS shows its stdout ring full from 0, and after that the
 * process blocks writing its pipe. The order is the point: the agent's read that fills the ring wakes a writer
 * blocked on a full pipe, so a writer seen blocked before the ring is full may be running again a moment later;
 * seen blocked after it, nothing reads that pipe any more and it stays blocked. */
static void wait_held(int fd, uint32_t *sid, const char *id, pid_t pid, uint64_t ring) {
    int64_t dl = mono_ms() + WAIT_MS;
    uint64_t start, end;
    for (;;) {
        stdout_ring(fd, ++*sid, id, &start, &end);
        CHECK(start == 0 && end <= ring, "%s: a held ring of %llu bytes holds %llu..%llu", id,
              (unsigned long long)ring, (unsigned long long)start, (unsigned long long)end);
        if (end == ring) break;
        CHECK(mono_ms() < dl, "%s: ring at %llu of %llu", id, (unsigned long long)end, (unsigned long long)ring);
        struct timespec ts = {0, 2000000};
        nanosleep(&ts, NULL);
    }
    while (!blocked_in_pipe_write(pid)) {
        CHECK(mono_ms() < dl, "%s: held, but pid %d not blocked in pipe_write", id, (int)pid);
        struct timespec ts = {0, 2000000};
        nanosleep(&ts, NULL);
    }
}

/* THROTTLE with nobody attached: output nobody read is held (the process blocks, the ring keeps offset 0); a reader
 * with follow 0 only looks; after SIGKILL a reader that wants no bytes (a watcher far past the end) gets the EXIT */
void t_throttle_unread(void) {
    struct agent a = start_init(NULL, NULL);
    hello(a.fd);
    struct frame *f = malloc(sizeof *f);
    struct buf b = {.n = 0};
    char id[32];
    const char *yes[] = {"yes", NULL};
    spawn_full(a.fd, 1, F_BACKGROUND, 0, 65536, 1, "", yes, NULL);
    expect_on(a.fd, 1, f);
    CHECK(f->type == 0x90, "STARTED");
    parse_started_id(f, id, sizeof id);
    pid_t pid = (pid_t)g32(f->p);
    expect_on(a.fd, 1, f);
    CHECK(f->type == 0x80, "OK");
    uint32_t sid = 1;
    wait_held(a.fd, &sid, id, pid, 65536);
    for (int look = 0; look < 2; look++) { /* twice: looking releases nothing */
        b.n = 0;
        b_str(&b, id);
        b_u64(&b, 0);
        b_u64(&b, 0);
        b_u8(&b, 0);
        b_u32(&b, 1 << 20);
        sendb(a.fd, 0x31, ++sid, &b);
        expect_on(a.fd, sid, f);
        CHECK(f->type == 0x90, "look %d: STARTED, got 0x%02x", look, f->type);
        uint64_t got = 0;
        for (;;) {
            expect_on(a.fd, sid, f);
            if (f->type == 0x95) break;
            CHECK(f->type == 0x91 && g64(f->p + 1) == got, "look %d: OUTPUT at %llu", look, (unsigned long long)got);
            got += f->len - 9;
        }
        CHECK(got == 65536, "look %d: the ring holds %llu bytes from 0", look, (unsigned long long)got);
        CHECK(blocked_in_pipe_write(pid), "look %d: yes still blocked", look);
    }
    uint32_t watch = ++sid;
    b.n = 0;
    b_str(&b, id);
    b_u64(&b, UINT64_MAX >> 1);
    b_u64(&b, UINT64_MAX >> 1);
    b_u8(&b, 1);
    b_u32(&b, 1 << 20);
    sendb(a.fd, 0x31, watch, &b);
    expect_on(a.fd, watch, f);
    CHECK(f->type == 0x90, "watcher STARTED");
    uint8_t sb[4] = {0, 0, 0, SIGKILL};
    input(a.fd, ++sid, id, 2, sb, 4);
    expect_on(a.fd, sid, f);
    CHECK(f->type == 0x80, "signal OK");
    expect_on(a.fd, watch, f);
    CHECK(f->type == 0x92 && f->p[4] == 1 && g32(f->p) == SIGKILL, "watcher: EXIT by SIGKILL, got 0x%02x", f->type);
    free(f);
    stop_agent(&a);
}

void t_background(void) {
    struct agent a = start_init(NULL, NULL);
    hello(a.fd);
    int b2 = connect_to(a.sock);
    hello(b2);
    struct frame *f = malloc(sizeof *f);
    char id[32], id2[32], id3[32];
    /* 1: prints, waits for a line, prints more */
    const char *argv[] = {"sh", "-c", "printf 0123456789; read x; printf abc; echo E >&2", NULL};
    spawn_full(a.fd, 1, F_BACKGROUND | F_STDIN, 0, 65536, 0, "", argv, NULL);
    expect_on(a.fd, 1, f);
    CHECK(f->type == 0x90, "STARTED 0x%02x", f->type);
    parse_started_id(f, id, sizeof id);
    CHECK(strcmp(id, "p1") == 0, "id %s", id);
    expect_on(a.fd, 1, f);
    CHECK(f->type == 0x80, "OK after STARTED");
    /* attach from the second connection, following */
    struct buf b = {.n = 0};
    b_str(&b, id);
    b_u64(&b, 0);
    b_u64(&b, 0);
    b_u8(&b, 1);
    b_u32(&b, 1 << 20);
    sendb(b2, 0x31, 1, &b);
    expect_on(b2, 1, f);
    CHECK(f->type == 0x90, "ATTACH STARTED");
    char out[256];
    size_t n = 0;
    while (n < 10) {
        expect_on(b2, 1, f);
        CHECK(f->type == 0x91 && f->p[0] == 1 && g64(f->p + 1) == n, "OUTPUT at %zu", n);
        memcpy(out + n, f->p + 9, f->len - 9);
        n += f->len - 9;
    }
    CHECK(n == 10 && memcmp(out, "0123456789", 10) == 0, "attached output");
    input(a.fd, 2, id, 0, "go\n", 3);
    expect_on(a.fd, 2, f);
    CHECK(f->type == 0x80, "INPUT OK");
    size_t nerr = 0;
    for (;;) {
        expect_on(b2, 1, f);
        if (f->type == 0x92) break;
        CHECK(f->type == 0x91, "0x%02x", f->type);
        if (f->p[0] == 1) {
            CHECK(g64(f->p + 1) == n, "offset");
            memcpy(out + n, f->p + 9, f->len - 9);
            n += f->len - 9;
        } else {
            nerr += f->len - 9;
        }
    }
    CHECK(n == 13 && memcmp(out + 10, "abc", 3) == 0 && nerr == 2, "rest of output: %zu/%zu", n, nerr);
    CHECK(g32(f->p) == 0, "exit");
    /* attach again with offsets, not following: from the ring */
    b.n = 0;
    b_str(&b, id);
    b_u64(&b, 5);
    b_u64(&b, 2);
    b_u8(&b, 0);
    b_u32(&b, 1 << 20);
    sendb(a.fd, 0x31, 3, &b);
    expect_on(a.fd, 3, f);
    CHECK(f->type == 0x90, "STARTED");
    n = 0;
    for (;;) {
        expect_on(a.fd, 3, f);
        if (f->type == 0x92) break;
        CHECK(f->type == 0x91 && f->p[0] == 1 && g64(f->p + 1) == 5 + n, "OUTPUT");
        memcpy(out + n, f->p + 9, f->len - 9);
        n += f->len - 9;
    }
    CHECK(n == 8 && memcmp(out, "56789abc", 8) == 0, "replay from 5: %.*s", (int)n, out);
    /* unknown id */
    b.n = 0;
    b_str(&b, "p999");
    b_u64(&b, 0);
    b_u64(&b, 0);
    b_u8(&b, 0);
    b_u32(&b, 100);
    sendb(a.fd, 0x31, 4, &b);
    expect_error(a.fd, 4, 1004, f);

    /* 2: OFFSET_GONE with drop-oldest: yes overflows a 64 KiB ring */
    const char *yes[] = {"yes", NULL};
    spawn_full(a.fd, 5, F_BACKGROUND, 0, 65536, 0, "", yes, NULL);
    expect_on(a.fd, 5, f);
    parse_started_id(f, id2, sizeof id2);
    expect_on(a.fd, 5, f);
    CHECK(f->type == 0x80, "OK");
    /* a reader from offset 65,536 with credit for one byte gets it once yes wrote more than the ring holds, that is
     * once the ring dropped its first byte (how soon depends on when yes runs: no fixed number of tries); if yes
     * already wrote past twice the ring, that offset is gone too */
    uint32_t sid = 6;
    b.n = 0;
    b_str(&b, id2);
    b_u64(&b, 65536);
    b_u64(&b, 0);
    b_u8(&b, 1);
    b_u32(&b, 1);
    sendb(a.fd, 0x31, sid, &b);
    expect_on(a.fd, sid, f);
    if (f->type == 0x90) {
        expect_on(a.fd, sid, f);
        CHECK(f->type == 0x91 && f->p[0] == 1 && g64(f->p + 1) >= 65536 && f->len == 10, "one byte at 65536 or later");
        send_frame(a.fd, 0x1F, sid, NULL, 0);
    } else {
        CHECK(f->type == 0xEE && g32(f->p) == 1003, "STARTED or OFFSET_GONE, got 0x%02x", f->type);
    }
    b.n = 0;
    b_str(&b, id2);
    b_u64(&b, 0);
    b_u64(&b, 0);
    b_u8(&b, 0);
    b_u32(&b, 0);
    sendb(a.fd, 0x31, ++sid, &b);
    expect_on(a.fd, sid, f);
    CHECK(f->type == 0xEE && g32(f->p) == 1003, "OFFSET_GONE, got 0x%02x %u", f->type, g32(f->p));
    CHECK(g32(f->p + 4) > 7 && memcmp(f->p + 8, "stdout ", 7) == 0, "message '%.*s'", (int)g32(f->p + 4), f->p + 8);
    uint32_t sig = SIGKILL;
    uint8_t sb[4] = {0, 0, 0, (uint8_t)sig};
    input(a.fd, ++sid, id2, 2, sb, 4);
    expect_on(a.fd, sid, f);
    CHECK(f->type == 0x80, "signal OK");

    /* 3: THROTTLE: a reader without credit holds yes at one ring of output */
    const char *tyes[] = {"sh", "-c", "read x; exec yes", NULL};
    spawn_full(a.fd, ++sid, F_BACKGROUND | F_STDIN, 0, 65536, 1, "", tyes, NULL);
    expect_on(a.fd, sid, f);
    parse_started_id(f, id3, sizeof id3);
    pid_t tpid = (pid_t)g32(f->p);
    expect_on(a.fd, sid, f);
    uint32_t att = ++sid;
    b.n = 0;
    b_str(&b, id3);
    b_u64(&b, 0);
    b_u64(&b, 0);
    b_u8(&b, 1);
    b_u32(&b, 0);
    sendb(b2, 0x31, att, &b);
    expect_on(b2, att, f);
    CHECK(f->type == 0x90, "STARTED");
    input(a.fd, ++sid, id3, 0, "\n", 1);
    expect_on(a.fd, sid, f);
    CHECK(f->type == 0x80, "INPUT");
    /* yes must end up blocked: the ring holds 64 KiB, the pipe 64 KiB, then write() blocks */
    wait_held(a.fd, &sid, id3, tpid, 65536);
    /* PROCS shows the three, oldest first, and the throttled ring full from 0 */
    b.n = 0;
    b_u32(&b, 1 << 20);
    sendb(a.fd, 0x30, ++sid, &b);
    int nproc = 0;
    for (;;) {
        expect_on(a.fd, sid, f);
        if (f->type == 0x95) break;
        CHECK(f->type == 0x99, "PROC 0x%02x", f->type);
        char pid_s[32];
        uint32_t l = g32(f->p);
        memcpy(pid_s, f->p + 4, l);
        pid_s[l] = 0;
        const uint8_t *q = f->p + 4 + l;
        uint8_t running = q[1 + 4 + 8];
        const uint8_t *av = q + 1 + 4 + 8 + 1 + 4 + 1;
        uint32_t argc = g32(av);
        const uint8_t *e = av + 4;
        for (uint32_t i = 0; i < argc; i++) e += 4 + g32(e);
        uint64_t out_start = g64(e), out_end = g64(e + 8);
        nproc++;
        if (nproc == 1) CHECK(strcmp(pid_s, id) == 0 && !running && argc == 3, "first PROC %s running %u", pid_s, running);
        if (nproc == 3) {
            CHECK(strcmp(pid_s, id3) == 0 && running, "third PROC %s", pid_s);
            CHECK(out_start == 0 && out_end == 65536, "throttled ring %llu..%llu", (unsigned long long)out_start,
                  (unsigned long long)out_end);
        }
    }
    CHECK(nproc == 3, "%d PROC frames", nproc);
    /* credit: the reader gets the ring from 0, yes moves on */
    credit(b2, att, 1, 200000);
    uint64_t got = 0;
    while (got < 200000) {
        expect_on(b2, att, f);
        CHECK(f->type == 0x91 && g64(f->p + 1) == got, "throttled OUTPUT at %llu", (unsigned long long)got);
        got += f->len - 9;
    }
    sb[3] = SIGKILL;
    input(a.fd, ++sid, id3, 2, sb, 4);
    expect_on(a.fd, sid, f);
    credit(b2, att, 1, 1 << 30); /* EXIT comes after the rest of the output: the ring, and what the pipe held */
    for (;;) {
        expect_on(b2, att, f);
        if (f->type == 0x92) break;
        CHECK(f->type == 0x91 && g64(f->p + 1) == got, "OUTPUT at %llu", (unsigned long long)got);
        got += f->len - 9;
    }
    CHECK(f->p[4] == 1 && g32(f->p) == SIGKILL, "killed by SIGKILL");
    free(f);
    close(b2);
    stop_agent(&a);
}

void t_deadline(void) {
    current = "timers: deadline";
    struct agent a = start_init(NULL, NULL);
    hello(a.fd);
    struct buf b = {.n = 0};
    int64_t t0 = wall_ms(), m0 = mono_ms();
    b_u64(&b, (uint64_t)(t0 + 400));
    b_u64(&b, 0);
    sendb(a.fd, 0x03, 1, &b);
    struct frame *f = malloc(sizeof *f);
    expect_on(a.fd, 1, f);
    CHECK(f->type == 0x80, "TIMERS OK");
    const char *argv[] = {"sleep", "100", NULL};
    spawn(a.fd, 2, 0, argv);
    expect_on(a.fd, 2, f);
    int rc = wait_agent(&a, WAIT_MS);
    int64_t took = mono_ms() - m0;
    printf("  deadline 400 ms: the agent exited after %lld ms\n", (long long)took);
    CHECK(rc == 0, "exit %d", rc);
    CHECK(took >= 380 && took < 3000, "ended after %lld ms", (long long)took);
    close(a.fd);

    current = "timers: idle";
    a = start_init("--idle-ms", "300");
    m0 = mono_ms(); /* before HELLO, the agent's last activity */
    hello(a.fd);
    rc = wait_agent(&a, WAIT_MS);
    took = mono_ms() - m0;
    CHECK(rc == 0 && took >= 300 && took < 3000, "idle exit %d after %lld ms", rc, (long long)took);
    close(a.fd);

    current = "timers: a running process is activity";
    a = start_init("--idle-ms", "300");
    hello(a.fd);
    const char *one[] = {"sleep", "1", NULL};
    m0 = mono_ms();
    spawn(a.fd, 1, F_BACKGROUND, one); /* ring_bytes 0 is refused: use a valid background spawn */
    expect_on(a.fd, 1, f);
    CHECK(f->type == 0xEE && g32(f->p) == EINVAL, "ring_bytes 0 refused");
    spawn_full(a.fd, 2, F_BACKGROUND, 0, 65536, 0, "", one, NULL);
    expect_on(a.fd, 2, f);
    CHECK(f->type == 0x90, "STARTED");
    rc = wait_agent(&a, WAIT_MS);
    took = mono_ms() - m0;
    printf("  idle 300 ms with a 1 s process: the agent exited after %lld ms\n", (long long)took);
    CHECK(rc == 0 && took >= 1250 && took < 3000, "idle exit %d after %lld ms", rc, (long long)took);
    close(a.fd);
    free(f);
}

void t_relay(void) {
    struct agent a = start_init(NULL, NULL);
    int to[2], from[2];
    CHECK(pipe2(to, O_CLOEXEC) == 0 && pipe2(from, O_CLOEXEC) == 0, "pipes");
    pid_t r = fork();
    if (r == 0) {
        dup2(to[0], 0);
        dup2(from[1], 1);
        execl(AGENT, AGENT, "relay", "--socket", a.sock, (char *)NULL);
        _exit(127);
    }
    close(to[0]);
    close(from[1]);
    /* frames through the relay: our writes go to its stdin, our reads come from its stdout */
    int w = to[1], rd = from[0];
    struct buf b = {.n = 0};
    b_u16(&b, 1);
    b_u16(&b, 1);
    b_str(&b, "relay test");
    sendb(w, 0x01, 0, &b);
    struct frame *f = malloc(sizeof *f);
    next_frame(rd, f);
    CHECK(f->type == 0x81, "HELLO through relay");
    const char *argv2[] = {"echo", "through the relay", NULL};
    spawn(w, 1, 0, argv2);
    struct result *res = calloc(1, sizeof *res);
    collect(rd, 1, res);
    CHECK(strcmp(res->out, "through the relay\n") == 0, "'%s'", res->out);
    cat_roundtrip(w, rd, 2, 4 * 1024 * 1024); /* both directions under load, through 64 KiB relay buffers */
    close(w); /* stdin EOF: the relay half-closes, the agent ends the connection, the relay exits 0 */
    int64_t dl = mono_ms() + WAIT_MS;
    int st;
    while (waitpid(r, &st, WNOHANG) != r) {
        CHECK(mono_ms() < dl, "relay did not exit");
        struct timespec ts = {0, 2000000};
        nanosleep(&ts, NULL);
    }
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "relay status %d", st);
    close(rd);
    /* a broken frame through a relay: the agent's ERROR comes back through it before the end */
    CHECK(pipe2(to, O_CLOEXEC) == 0 && pipe2(from, O_CLOEXEC) == 0, "pipes");
    r = fork();
    if (r == 0) {
        dup2(to[0], 0);
        dup2(from[1], 1);
        execl(AGENT, AGENT, "relay", "--socket", a.sock, (char *)NULL);
        _exit(127);
    }
    close(to[0]);
    close(from[1]);
    send_frame(to[1], 0x01, 0, "\0\1\0\1\0\0\0\0", 8);
    next_frame(from[0], f);
    CHECK(f->type == 0x81, "HELLO");
    uint8_t junk[9] = {0, 0, 0, 0, 0x77, 0, 0, 0, 1}; /* a frame of an unknown type */
    write_all(to[1], junk, 9);
    expect_closed_after_error(from[0], 1000);
    waitpid(r, &st, 0);
    CHECK(WIFEXITED(st), "relay status %d", st);
    close(to[1]);
    close(from[0]);
    /* no agent there: exit 1 with one line */
    r = fork();
    if (r == 0) {
        int null = open("/dev/null", O_RDWR);
        dup2(null, 0);
        dup2(null, 1);
        dup2(null, 2);
        execl(AGENT, AGENT, "relay", "--socket", "/nonexistent/sock", (char *)NULL);
        _exit(127);
    }
    waitpid(r, &st, 0);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 1, "relay without agent: %d", st);
    free(res);
    free(f);
    stop_agent(&a);
}

void t_version(void) {
    int p[2];
    CHECK(pipe(p) == 0, "pipe");
    pid_t r = fork();
    if (r == 0) {
        dup2(p[1], 1);
        execl(AGENT, AGENT, "--version", (char *)NULL);
        _exit(127);
    }
    close(p[1]);
    char out[256];
    ssize_t n = read(p[0], out, sizeof out - 1);
    close(p[0]);
    int st;
    waitpid(r, &st, 0);
    CHECK(n > 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0, "--version");
    out[n] = 0;
    CHECK(strstr(out, "protocol 1"), "'%s'", out);
}

void t_idle_rss(void) {
    struct agent a = start_init(NULL, NULL);
    hello(a.fd);
    ping(a.fd, 1);
    long kb = rss_kb(a.pid);
    printf("  idle agent RSS: %ld KiB%s\n", kb, sanitized ? " (sanitized build: not checked)" : "");
    if (!sanitized) CHECK(kb > 0 && kb <= 4096, "idle RSS %ld KiB", kb);
    stop_agent(&a);
}

/* File operations through the protocol (agent_fs.c does the work; its own tests are test_fs.c). Skipped while the
 * agent is built with the agent_fs stub, which answers ENOSYS. */
static void parse_info(const uint8_t *p, uint8_t *type, uint32_t *mode, uint64_t *size, char *path, size_t cap) {
    *type = p[0];
    *mode = g32(p + 1);
    *size = g64(p + 13);
    uint32_t n = g32(p + 29);
    CHECK(n < cap, "path length %u", n);
    memcpy(path, p + 33, n);
    path[n] = 0;
}

static void fs_req(int fd, uint8_t type, uint32_t id, const char *path, const void *rest, size_t n) {
    struct buf *b = malloc(sizeof *b);
    b->n = 0;
    b_str(b, path);
    b_bytes(b, rest, n);
    sendb(fd, type, id, b);
    free(b);
}

void t_files(void) {
    struct agent a = start_stdio();
    hello(a.fd);
    struct frame *f = malloc(sizeof *f);
    char dir[128], file[160], moved[160], sub[160], got_path[4096];
    snprintf(dir, sizeof dir, "%s/files", tmpdir);
    snprintf(file, sizeof file, "%s/a.txt", dir);
    snprintf(moved, sizeof moved, "%s/b.txt", dir);
    snprintf(sub, sizeof sub, "%s/sub", dir);
    uint8_t mk[5] = {0, 0, 0x01, 0xed, 1}; /* mode 0755, parents */
    fs_req(a.fd, 0x24, 1, dir, mk, 5);
    expect_on(a.fd, 1, f);
    if (f->type == 0xEE && g32(f->p) == ENOSYS) {
        printf("  skipped: the agent was built with the agent_fs stub\n");
        free(f);
        stop_agent(&a);
        return;
    }
    CHECK(f->type == 0x80, "MKDIR: 0x%02x", f->type);
    /* WATCH first, so the write below shows up */
    struct buf b = {.n = 0};
    b_u8(&b, 0);
    b_u32(&b, 4096);
    fs_req(a.fd, 0x27, 2, dir, b.d, b.n);
    expect_on(a.fd, 2, f);
    CHECK(f->type == 0x98 && g32(f->p) == 0, "WATCH READY: 0x%02x", f->type);
    /* WRITE */
    b.n = 0;
    b_u32(&b, 0640);
    b_u32(&b, 0);
    b_u32(&b, 0);
    fs_req(a.fd, 0x21, 3, file, b.d, b.n);
    expect_on(a.fd, 3, f);
    CHECK(f->type == 0x98 && g32(f->p) > 0, "WRITE READY: 0x%02x", f->type);
    send_frame(a.fd, 0x11, 3, "hello, file", 11);
    send_frame(a.fd, 0x12, 3, NULL, 0);
    expect_on(a.fd, 3, f);
    CHECK(f->type == 0x80, "WRITE OK: 0x%02x", f->type);
    uint8_t type;
    uint32_t mode;
    uint64_t size;
    parse_info(f->p, &type, &mode, &size, got_path, sizeof got_path);
    CHECK(type == 1 && mode == 0640 && size == 11 && strcmp(got_path, file) == 0, "info %u %o %llu %s", type, mode,
          (unsigned long long)size, got_path);
    expect_on(a.fd, 2, f);
    CHECK(f->type == 0x97 && f->p[0] == 1, "EVENT created: 0x%02x kind %u", f->type, f->p[0]);
    CHECK(g32(f->p + 1) == strlen(file) && memcmp(f->p + 5, file, strlen(file)) == 0, "event path");
    /* READ from offset 7 with a credit of 2, then more */
    b.n = 0;
    b_u64(&b, 7);
    b_u64(&b, UINT64_MAX);
    b_u32(&b, 2);
    fs_req(a.fd, 0x20, 4, file, b.d, b.n);
    expect_on(a.fd, 4, f);
    CHECK(f->type == 0x94 && f->len == 2 && memcmp(f->p, "fi", 2) == 0, "READ DATA 0x%02x len %u", f->type, f->len);
    ping(a.fd, 5); /* nothing more without credit */
    credit(a.fd, 4, 0, 100);
    expect_on(a.fd, 4, f);
    CHECK(f->type == 0x94 && f->len == 2 && memcmp(f->p, "le", 2) == 0, "READ rest");
    expect_on(a.fd, 4, f);
    CHECK(f->type == 0x95, "END");
    /* a ranged READ: 3 bytes from offset 2, then END; a range past the end: END at once */
    b.n = 0;
    b_u64(&b, 2);
    b_u64(&b, 3);
    b_u32(&b, 100);
    fs_req(a.fd, 0x20, 40, file, b.d, b.n);
    expect_on(a.fd, 40, f);
    CHECK(f->type == 0x94 && f->len == 3 && memcmp(f->p, "llo", 3) == 0, "ranged READ 0x%02x len %u", f->type,
          f->len);
    expect_on(a.fd, 40, f);
    CHECK(f->type == 0x95, "ranged READ END");
    b.n = 0;
    b_u64(&b, 1000);
    b_u64(&b, 5);
    b_u32(&b, 100);
    fs_req(a.fd, 0x20, 41, file, b.d, b.n);
    expect_on(a.fd, 41, f);
    CHECK(f->type == 0x95, "READ past the end: END, got 0x%02x", f->type);
    /* STAT, LIST, MOVE, REMOVE */
    fs_req(a.fd, 0x23, 5, file, NULL, 0);
    expect_on(a.fd, 5, f);
    CHECK(f->type == 0x80 && f->p[0] == 1, "STAT");
    fs_req(a.fd, 0x24, 6, sub, mk, 5);
    expect_on(a.fd, 6, f);
    CHECK(f->type == 0x80, "MKDIR sub");
    /* an empty directory lists as END alone, at any depth */
    b.n = 0;
    b_u32(&b, 3);
    b_u32(&b, 1 << 20);
    fs_req(a.fd, 0x22, 42, sub, b.d, b.n);
    expect_on(a.fd, 42, f);
    CHECK(f->type == 0x95, "LIST of an empty directory: END, got 0x%02x", f->type);
    b.n = 0;
    b_u32(&b, 1);
    b_u32(&b, 1 << 20);
    fs_req(a.fd, 0x22, 7, dir, b.d, b.n);
    int entries = 0;
    for (;;) {
        expect_on(a.fd, 7, f);
        if (f->type == 0x95) break;
        CHECK(f->type == 0x96, "ENTRY 0x%02x", f->type);
        entries++;
    }
    CHECK(entries == 2, "%d entries", entries);
    b.n = 0;
    b_str(&b, moved);
    fs_req(a.fd, 0x26, 8, file, b.d, b.n);
    expect_on(a.fd, 8, f);
    CHECK(f->type == 0x80, "MOVE");
    fs_req(a.fd, 0x23, 9, file, NULL, 0);
    expect_error(a.fd, 9, ENOENT, f);
    /* SYMLINK (a relative target, stored as given; an existing path is EEXIST), CHMOD (not through a link) */
    char link[180];
    snprintf(link, sizeof link, "%s/l", dir);
    b.n = 0;
    b_str(&b, "b.txt");
    fs_req(a.fd, 0x28, 13, link, b.d, b.n);
    expect_on(a.fd, 13, f);
    CHECK(f->type == 0x80, "SYMLINK: 0x%02x", f->type);
    fs_req(a.fd, 0x28, 14, link, b.d, b.n);
    expect_error(a.fd, 14, EEXIST, f);
    b.n = 0;
    b_str(&b, "");
    fs_req(a.fd, 0x28, 15, link, b.d, b.n);
    expect_error(a.fd, 15, EINVAL, f);
    b.n = 0;
    b_u32(&b, 0700);
    fs_req(a.fd, 0x29, 16, moved, b.d, b.n);
    expect_on(a.fd, 16, f);
    CHECK(f->type == 0x80, "CHMOD: 0x%02x", f->type);
    fs_req(a.fd, 0x29, 17, link, b.d, b.n); /* the link is left alone, and its target too */
    expect_on(a.fd, 17, f);
    CHECK(f->type == 0x80, "CHMOD of a link: 0x%02x", f->type);
    fs_req(a.fd, 0x23, 18, moved, NULL, 0);
    expect_on(a.fd, 18, f);
    parse_info(f->p, &type, &mode, &size, got_path, sizeof got_path);
    CHECK(f->type == 0x80 && mode == 0700, "mode after CHMOD %o", mode);
    b.n = 0;
    b_u32(&b, 010000);
    fs_req(a.fd, 0x29, 19, moved, b.d, b.n);
    expect_error(a.fd, 19, EINVAL, f);
    uint8_t rec = 1;
    fs_req(a.fd, 0x25, 10, dir, &rec, 1);
    expect_on(a.fd, 10, f);
    CHECK(f->type == 0x80, "REMOVE");
    fs_req(a.fd, 0x23, 11, "relative/path", NULL, 0);
    expect_error(a.fd, 11, EINVAL, f);
    b.n = 0;
    b_u32(&b, 1);
    b_u32(&b, 100);
    fs_req(a.fd, 0x22, 12, "/etc/passwd", b.d, b.n);
    expect_error(a.fd, 12, ENOTDIR, f);
    send_frame(a.fd, 0x1F, 2, NULL, 0);
    ping(a.fd, 6);
    free(f);
    stop_agent(&a);
}

/* 64 connections, 4,096 open streams: beyond, ERROR LIMIT, and everything else keeps working. */
void t_limits(void) {
    struct agent a = start_init(NULL, NULL);
    hello(a.fd);
    struct frame *f = malloc(sizeof *f);
    int conns[63];
    for (int i = 0; i < 63; i++) {
        conns[i] = connect_to(a.sock);
        CHECK(conns[i] >= 0, "connection %d", i + 2);
        hello(conns[i]);
    }
    int extra = connect_to(a.sock);
    CHECK(extra >= 0, "65th connect");
    expect_closed_after_error(extra, 1002);
    close(extra);
    for (int i = 0; i < 63; i++) close(conns[i]);
    /* one background process, so that PROCS streams without credit stay open */
    const char *argv[] = {"sleep", "100", NULL};
    spawn_full(a.fd, 1, F_BACKGROUND, 0, 65536, 0, "", argv, NULL);
    expect_on(a.fd, 1, f);
    expect_on(a.fd, 1, f);
    CHECK(f->type == 0x80, "background OK");
    struct buf b = {.n = 0};
    b_u32(&b, 0);
    for (uint32_t id = 2; id < 2 + 4096; id++) sendb(a.fd, 0x30, id, &b);
    sendb(a.fd, 0x30, 2 + 4096, &b);
    expect_error(a.fd, 2 + 4096, 1002, f);
    send_frame(a.fd, 0x1F, 2, NULL, 0); /* one closes: a new one fits */
    sendb(a.fd, 0x30, 3 + 4096, &b);
    b.n = 0;
    b_u32(&b, 1 << 20);
    credit(a.fd, 3 + 4096, 0, 1 << 20);
    expect_on(a.fd, 3 + 4096, f);
    CHECK(f->type == 0x99, "PROC after a stream closed: 0x%02x", f->type);
    ping(a.fd, 3);
    free(f);
    stop_agent(&a);
}

/* A client that stops reading its connection stops only that connection's sources; the agent's memory stays bounded. */
void t_unread_connection(void) {
    struct agent a = start_init(NULL, NULL);
    hello(a.fd);
    int other = connect_to(a.sock);
    hello(other);
    struct frame *f = malloc(sizeof *f);
    /* a small receive buffer, so the agent's own queue is what fills */
    int small = 4096;
    setsockopt(a.fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
    const char *yes[] = {"yes", NULL};
    spawn_full(a.fd, 1, 0, 0xffffffffu, 0, 0, "", yes, NULL);
    /* the first frame is STARTED: read it for the pid, then read nothing more on this connection */
    expect_on(a.fd, 1, f);
    CHECK(f->type == 0x90, "STARTED");
    pid_t pid = (pid_t)g32(f->p);
    int64_t dl = mono_ms() + WAIT_MS;
    while (!blocked_in_pipe_write(pid)) {
        CHECK(mono_ms() < dl, "yes not blocked although its connection is not read");
        struct timespec ts = {0, 2000000};
        nanosleep(&ts, NULL);
    }
    long rss = rss_kb(a.pid);
    printf("  agent RSS with an unread connection: %ld KiB\n", rss);
    if (!sanitized) CHECK(rss < 8 * 1024, "RSS %ld KiB", rss);
    const char *echo[] = {"echo", "still here", NULL};
    struct result *r = run(other, 1, echo);
    CHECK(strcmp(r->out, "still here\n") == 0, "other connection: '%s'", r->out);
    free(r);
    close(a.fd);
    a.fd = -1;
    dl = mono_ms() + WAIT_MS;
    while (alive(pid)) { /* the connection's end kills its process */
        CHECK(mono_ms() < dl, "yes survived its connection");
        struct timespec ts = {0, 2000000};
        nanosleep(&ts, NULL);
    }
    ping(other, 8);
    free(f);
    close(other);
    stop_agent(&a);
}

/* PTY|BACKGROUND: a terminal kept by the agent, fed with INPUT, resized, replayed to a late reader. */
void t_background_pty(void) {
    struct agent a = start_stdio();
    hello(a.fd);
    struct frame *f = malloc(sizeof *f);
    const char *argv[] = {"sh", "-c", "echo ready; read x; stty size; echo got $x", NULL};
    spawn_full(a.fd, 1, F_PTY | F_BACKGROUND, 0, 65536, 0, "", argv, NULL);
    expect_on(a.fd, 1, f);
    char id[32];
    parse_started_id(f, id, sizeof id);
    expect_on(a.fd, 1, f);
    CHECK(f->type == 0x80, "OK");
    uint8_t size[4] = {0, 120, 0, 50};
    input(a.fd, 2, id, 3, size, 4);
    expect_on(a.fd, 2, f);
    CHECK(f->type == 0x80, "resize OK");
    input(a.fd, 3, id, 0, "hi\n", 3);
    expect_on(a.fd, 3, f);
    CHECK(f->type == 0x80, "input OK");
    struct buf b = {.n = 0};
    b_str(&b, id);
    b_u64(&b, 0);
    b_u64(&b, 0);
    b_u8(&b, 1);
    b_u32(&b, 1 << 20);
    sendb(a.fd, 0x31, 4, &b);
    expect_on(a.fd, 4, f);
    CHECK(f->type == 0x90, "STARTED");
    char out[8192];
    size_t n = 0;
    for (;;) {
        expect_on(a.fd, 4, f);
        if (f->type == 0x92) break;
        CHECK(f->type == 0x91 && f->p[0] == 1 && g64(f->p + 1) == n, "OUTPUT at %zu", n);
        CHECK(n + f->len - 9 < sizeof out, "output size");
        memcpy(out + n, f->p + 9, f->len - 9);
        n += f->len - 9;
    }
    CHECK(memmem(out, n, "ready", 5) && memmem(out, n, "50 120", 6) && memmem(out, n, "got hi", 6),
          "terminal output: '%.*s'", (int)n, out);
    free(f);
    stop_agent(&a);
}

/* Random frames (fixed seed): each connection gets garbage of every kind of request; the agent answers or closes
 * that connection, and stays alive and clean (the sanitized build checks memory) for the next. */
static uint32_t rnd_state = 12345;
static uint32_t rnd(void) {
    rnd_state ^= rnd_state << 13;
    rnd_state ^= rnd_state >> 17;
    rnd_state ^= rnd_state << 5;
    return rnd_state;
}

/* A well-formed payload of a type with random field values (paths only under the test's directory, nothing that
 * could end the agent: TIMERS only clears the timers, SPAWN only runs `true`, `sleep 1`, `cat` or a missing name). */
static void fuzz_payload(struct buf *b, uint8_t type) {
    char path[128];
    snprintf(path, sizeof path, "%s/fz%u", tmpdir, rnd() % 3);
    static const char *const progs[] = {"true", "cat", "/no/such", "sleep"};
    switch (type) {
    case 0x02: b_u64(b, rnd()); break;
    case 0x03: b_u64(b, 0); b_u64(b, 0); break;
    case 0x10: {
        b_u32(b, rnd() % 8);
        b_u16(b, (uint16_t)rnd());
        b_u16(b, (uint16_t)rnd());
        b_u32(b, rnd() % 3 ? rnd() % 100000 : 0);
        b_u32(b, rnd() % 2 ? 65536 : rnd());
        b_u8(b, (uint8_t)(rnd() % 2));
        b_str(b, rnd() % 4 ? "" : "/no/dir");
        const char *prog = progs[rnd() % 4];
        b_u32(b, strcmp(prog, "sleep") == 0 ? 2 : 1);
        b_str(b, prog);
        if (strcmp(prog, "sleep") == 0) b_str(b, "1");
        b_u32(b, 1);
        b_str(b, rnd() % 2 ? "A=b" : "NOEQUALS");
        break;
    }
    case 0x11: { uint32_t n = 1 + rnd() % 40; for (uint32_t i = 0; i < n; i++) b_u8(b, (uint8_t)rnd()); break; }
    case 0x13: b_u32(b, rnd() % 20); break;
    case 0x14: b_u16(b, (uint16_t)rnd()); b_u16(b, (uint16_t)rnd()); break;
    case 0x15: b_u8(b, (uint8_t)(rnd() % 3)); b_u32(b, rnd()); break;
    case 0x20: b_str(b, path); b_u64(b, rnd() % 10); b_u64(b, rnd()); b_u32(b, rnd() % 1000); break;
    case 0x21: b_str(b, path); b_u32(b, 0644); b_u32(b, rnd() % 2); b_u32(b, 0); break;
    case 0x22: b_str(b, tmpdir); b_u32(b, rnd() % 3); b_u32(b, rnd() % 1000); break;
    case 0x23: b_str(b, rnd() % 2 ? path : "rel"); break;
    case 0x24: b_str(b, path); b_u32(b, 0755); b_u8(b, (uint8_t)(rnd() % 2)); break;
    case 0x25: b_str(b, path); b_u8(b, (uint8_t)(rnd() % 2)); break;
    case 0x26: b_str(b, path); b_str(b, path); break;
    case 0x27: b_str(b, tmpdir); b_u8(b, 0); b_u32(b, rnd() % 100); break;
    case 0x28: b_str(b, path); b_str(b, rnd() % 2 ? "x" : ""); break;
    case 0x29: b_str(b, path); b_u32(b, rnd() % 2 ? 0644 : rnd()); break;
    case 0x30: b_u32(b, rnd() % 500); break;
    case 0x31: {
        char id[8];
        snprintf(id, sizeof id, "p%u", rnd() % 4);
        b_str(b, id); b_u64(b, rnd() % 100); b_u64(b, rnd() % 100); b_u8(b, (uint8_t)(rnd() % 2)); b_u32(b, rnd() % 1000);
        break;
    }
    case 0x32: {
        char id[8];
        snprintf(id, sizeof id, "p%u", rnd() % 4);
        b_str(b, id);
        uint8_t what = (uint8_t)(rnd() % 4);
        b_u8(b, what);
        if (what == 0) b_bytes(b, "xyz", 3);
        if (what == 2) b_u32(b, rnd() % 20);
        if (what == 3) b_u32(b, rnd());
        break;
    }
    }
}

void t_fuzz(void) {
    static const uint8_t types[] = {0x02, 0x03, 0x10, 0x11, 0x12, 0x13, 0x14, 0x15, 0x1F, 0x20, 0x21, 0x22,
                                    0x23, 0x24, 0x25, 0x26, 0x27, 0x28, 0x29, 0x30, 0x31, 0x32};
    struct agent a = start_init(NULL, NULL);
    struct frame *f = malloc(sizeof *f);
    struct buf *b = malloc(sizeof *b);
    int closed = 0, rounds = 200;
    if (getenv("FUZZ_SEED")) rnd_state = (uint32_t)strtoul(getenv("FUZZ_SEED"), NULL, 10) | 1;
    for (int round = 0; round < rounds; round++) {
        int fd = round == 0 ? a.fd : connect_to(a.sock);
        CHECK(fd >= 0, "connect in round %d", round);
        hello(fd);
        uint32_t next_id = 0;
        for (int k = 0; k < 12; k++) {
            uint8_t type = types[rnd() % sizeof types];
            b->n = 0;
            fuzz_payload(b, type);
            /* now and then a broken one: a byte changed, cut short, or one byte too many */
            uint32_t m = type == 0x03 ? 99 : rnd() % 64; /* a broken TIMERS could set a deadline: never */
            /* a changed byte could turn a path into one outside the test's directory (MKDIR with parents would
             * create it): file requests are only cut or extended, which never parses into another path */
            if (m == 0 && b->n && type < 0x20) b->d[rnd() % b->n] = (uint8_t)rnd();
            if (m == 1 && b->n) b->n = rnd() % b->n;
            if (m == 2) b->d[b->n++] = 0;
            if (m == 3) type = (uint8_t)rnd() == 0x03 ? 0x7f : (uint8_t)rnd();
            /* requests on new ids (now and then a reused one), the other frames on recent ids */
            int request = type == 0x03 || type == 0x10 || type >= 0x20;
            uint32_t stream = type == 0x02 ? 0 : request && rnd() % 32 ? ++next_id : 1 + (next_id ? rnd() % next_id : 0);
            if (!try_frame(fd, type, stream, b->d, b->n)) break;
        }
        b->n = 0;
        b_u64(b, (uint64_t)round + 1000000);
        try_frame(fd, 0x02, 0, b->d, b->n);
        int r;
        for (;;) { /* our PONG: the connection survived; end of stream: it was closed after a BAD_FRAME */
            r = next_frame_in(fd, f, WAIT_MS);
            CHECK(r >= 0, "no answer in round %d", round);
            if (r == 0 || (f->type == 0x82 && g64(f->p) == (uint64_t)round + 1000000)) break;
            if (f->type == 0xEE && f->stream == 0) CHECK(g32(f->p) == 1000, "stream 0 error %u", g32(f->p));
            if (getenv("FUZZ_VERBOSE") && f->type == 0xEE && f->stream == 0) printf("    %.*s\n", (int)g32(f->p + 4), f->p + 8);
        }
        if (r == 0) closed++;
        if (fd != a.fd) close(fd);
    }
    printf("  %d connections of random frames: %d closed with BAD_FRAME, %d survived\n", rounds, closed,
           rounds - closed);
    int fd = connect_to(a.sock);
    hello(fd);
    const char *echo[] = {"echo", "ok", NULL};
    struct result *r = run(fd, 1, echo);
    CHECK(strcmp(r->out, "ok\n") == 0, "agent still serves");
    free(r);
    close(fd);
    free(b);
    free(f);
    stop_agent(&a);
}

/* A measurement, run only when named (`test_agent BINARY bench`): spawn-to-EXIT latency of `true`, and stdout
 * throughput of `cat /dev/zero` with a 1 MiB credit window handed back as the bytes arrive. */
void t_bench(void) {
    struct agent a = start_stdio();
    hello(a.fd);
    const char *t[] = {"true", NULL};
    enum { N = 200 };
    int64_t t0 = mono_ms();
    for (uint32_t i = 1; i <= N; i++) {
        struct result *r = run(a.fd, i, t);
        free(r);
    }
    double lat = (double)(mono_ms() - t0) / N;
    const char *cat[] = {"cat", "/dev/zero", NULL};
    spawn_full(a.fd, N + 1, 0, 1 << 20, 0, 0, "", cat, NULL);
    struct frame *f = malloc(sizeof *f);
    uint64_t total = 0, owed = 0, want = 1ull << 30;
    t0 = mono_ms();
    while (total < want) {
        expect_on(a.fd, N + 1, f);
        if (f->type != 0x91) continue;
        total += f->len - 9;
        owed += f->len - 9;
        if (owed >= 256 * 1024) {
            credit(a.fd, N + 1, 1, (uint32_t)owed);
            owed = 0;
        }
    }
    double secs = (double)(mono_ms() - t0) / 1000;
    send_frame(a.fd, 0x1F, N + 1, NULL, 0);
    printf("  spawn..EXIT of true: %.2f ms; stdout: %llu MiB in %.2f s = %.0f MiB/s\n", lat,
           (unsigned long long)(total >> 20), secs, (double)(total >> 20) / secs);
    free(f);
    stop_agent(&a);
}

/* SIGTERM ends the agent with 0 and takes every process it started along; --workdir is the default cwd. */
void t_sigterm(void) {
    struct agent a = start_init("--workdir", tmpdir);
    hello(a.fd);
    struct frame *f = malloc(sizeof *f);
    const char *pwd[] = {"sh", "-c", "pwd", NULL};
    struct result *r = run(a.fd, 1, pwd);
    CHECK(strncmp(r->out, tmpdir, strlen(tmpdir)) == 0, "pwd '%s', workdir %s", r->out, tmpdir);
    free(r);
    const char *sl[] = {"sleep", "100", NULL};
    spawn_full(a.fd, 2, F_BACKGROUND, 0, 65536, 0, "", sl, NULL);
    expect_on(a.fd, 2, f);
    pid_t bg = (pid_t)g32(f->p);
    spawn(a.fd, 3, 0, sl);
    expect_on(a.fd, 3, f);
    pid_t fg = (pid_t)g32(f->p);
    CHECK(alive(bg) && alive(fg), "processes");
    kill(a.pid, SIGTERM);
    int rc = wait_agent(&a, WAIT_MS);
    CHECK(rc == 0, "exit %d after SIGTERM", rc);
    int64_t dl = mono_ms() + WAIT_MS;
    while (alive(bg) || alive(fg)) {
        CHECK(mono_ms() < dl, "processes survived the agent");
        struct timespec ts = {0, 2000000};
        nanosleep(&ts, NULL);
    }
    close(a.fd);
    free(f);
}

/* PROCS of a connection: the ids, oldest first, and how many are running. */
static int procs_list(int fd, uint32_t id, char first[32], int *running) {
    struct frame *f = malloc(sizeof *f);
    struct buf b = {.n = 0};
    b_u32(&b, 0xffffffffu);
    sendb(fd, 0x30, id, &b);
    int n = 0;
    *running = 0;
    for (;;) {
        expect_on(fd, id, f);
        if (f->type == 0x95) break;
        CHECK(f->type == 0x99, "PROC 0x%02x", f->type);
        uint32_t l = g32(f->p);
        if (n == 0) {
            CHECK(l < 32, "id length");
            memcpy(first, f->p + 4, l);
            first[l] = 0;
        }
        *running += f->p[4 + l + 1 + 4 + 8];
        n++;
    }
    free(f);
    return n;
}

/* At most 1,024 background processes are kept: beyond, the oldest ended one goes. */
void t_background_limit(void) {
    struct agent a = start_stdio();
    hello(a.fd);
    struct frame *f = malloc(sizeof *f);
    const char *t[] = {"true", NULL};
    uint32_t id = 1;
    for (int i = 0; i < 1024; i++) {
        spawn_full(a.fd, id, F_BACKGROUND, 0, 65536, 0, "", t, NULL);
        expect_on(a.fd, id, f);
        CHECK(f->type == 0x90, "STARTED %d: 0x%02x", i, f->type);
        expect_on(a.fd, id++, f);
    }
    char first[32];
    int running, n;
    int64_t dl = mono_ms() + WAIT_MS;
    while ((n = procs_list(a.fd, id++, first, &running)), running > 0) { /* until every `true` has ended */
        CHECK(mono_ms() < dl, "%d still running", running);
        struct timespec ts = {0, 10000000};
        nanosleep(&ts, NULL);
    }
    CHECK(n == 1024 && strcmp(first, "p1") == 0, "%d processes, first %s", n, first);
    spawn_full(a.fd, id, F_BACKGROUND, 0, 65536, 0, "", t, NULL);
    expect_on(a.fd, id, f);
    CHECK(f->type == 0x90, "the 1,025th: 0x%02x", f->type);
    char id1025[32];
    parse_started_id(f, id1025, sizeof id1025);
    CHECK(strcmp(id1025, "p1025") == 0, "id %s", id1025);
    expect_on(a.fd, id++, f);
    n = procs_list(a.fd, id++, first, &running);
    CHECK(n == 1024 && strcmp(first, "p2") == 0, "after the 1,025th: %d processes, first %s", n, first);
    free(f);
    stop_agent(&a);
}

/* As process 1 of a new PID namespace (util-linux `unshare`; skipped where it is missing or not permitted): HELLO
 * says pid 1, orphans are reaped, and SIGTERM — which process 1 would ignore without a handler — ends it with 0. */
void t_pid1(void) {
    char sock[128];
    snprintf(sock, sizeof sock, "%s/pid1.sock", tmpdir);
    pid_t u = fork();
    if (u == 0) {
        int null = open("/dev/null", O_RDWR);
        dup2(null, 2);
        execlp("unshare", "unshare", "-p", "-f", "--kill-child", "--mount-proc", AGENT, "init", "--socket", sock,
               (char *)NULL);
        _exit(127);
    }
    track(u);
    int fd = -1;
    for (int i = 0; i < 2000 && fd < 0; i++) {
        int st;
        if (waitpid(u, &st, WNOHANG) == u) {
            printf("  skipped: unshare -p is not available here (status %d)\n", st);
            return;
        }
        fd = connect_to(sock);
        if (fd < 0) {
            struct timespec ts = {0, 5000000};
            nanosleep(&ts, NULL);
        }
    }
    CHECK(fd >= 0, "agent in a PID namespace did not listen");
    struct buf b = {.n = 0};
    b_u16(&b, 1);
    b_u16(&b, 1);
    b_str(&b, "pid1");
    sendb(fd, 0x01, 0, &b);
    struct frame *f = malloc(sizeof *f);
    next_frame(fd, f);
    CHECK(f->type == 0x81, "HELLO");
    uint32_t n = g32(f->p + 2);
    CHECK(g32(f->p + 6 + n) == 1, "HELLO pid %u", g32(f->p + 6 + n));
    const char *orphan[] = {"sh", "-c", "sleep 0.1 & echo $!", NULL};
    struct result *r = run(fd, 1, orphan);
    int opid = atoi(r->out);
    free(r);
    CHECK(opid > 1, "orphan pid '%d'", opid);
    char script[128];
    snprintf(script, sizeof script, "test -e /proc/%d && echo there || echo gone", opid);
    const char *check[] = {"sh", "-c", script, NULL};
    uint32_t id = 2;
    int64_t dl = mono_ms() + WAIT_MS;
    for (;;) { /* a zombie nobody reaps stays in /proc */
        r = run(fd, id++, check);
        int gone = strcmp(r->out, "gone\n") == 0;
        free(r);
        if (gone) break;
        CHECK(mono_ms() < dl, "orphan %d of process 1 never reaped", opid);
        struct timespec ts = {0, 10000000};
        nanosleep(&ts, NULL);
    }
    /* the agent is unshare's child (--kill-child: a failed test that kills unshare takes the agent along) */
    char path[96], kids[64] = "";
    snprintf(path, sizeof path, "/proc/%d/task/%d/children", (int)u, (int)u);
    FILE *k = fopen(path, "r");
    CHECK(k && fgets(kids, sizeof kids, k), "children of unshare");
    fclose(k);
    pid_t agent = (pid_t)atoi(kids);
    CHECK(agent > 1, "agent pid");
    kill(agent, SIGTERM);
    struct agent a = {.pid = u, .fd = fd};
    int rc = wait_agent(&a, WAIT_MS);
    CHECK(rc == 0, "process 1 after SIGTERM: %d", rc);
    close(fd);
    free(f);
}

/* --channel: a path socket next to the abstract one, that anyone may connect to, whose peer is never a relay */
void t_channel(void) {
    char chan[160];
    snprintf(chan, sizeof chan, "%s/channel.sock", tmpdir);
    struct agent a = start_init("--channel", chan);
    struct stat st;
    CHECK(lstat(chan, &st) == 0 && S_ISSOCK(st.st_mode), "no socket at %s", chan);
    CHECK((st.st_mode & 0777) == 0777, "channel socket mode %o", (unsigned)(st.st_mode & 0777));
    int c = connect_to(chan);
    CHECK(c >= 0, "connect to the channel");
    hello(c);
    const char *argv2[] = {"echo", "through the channel", NULL};
    spawn(c, 1, 0, argv2);
    struct result *res = calloc(1, sizeof *res);
    collect(c, 1, res);
    CHECK(strcmp(res->out, "through the channel\n") == 0, "'%s'", res->out);
    cat_roundtrip(c, c, 2, 4 * 1024 * 1024);
    close(c);
    /* a relay's handoff is not taken on the channel: pipes passed there are never read or written by the agent */
    int in[2], out[2];
    CHECK(pipe2(in, O_CLOEXEC) == 0 && pipe2(out, O_CLOEXEC) == 0, "pipes");
    c = connect_to(chan);
    CHECK(c >= 0, "connect to the channel");
    uint8_t byte = 0xFD;
    int fds[2] = {in[0], out[1]};
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
    CHECK(sendmsg(c, &m, MSG_NOSIGNAL) == 1, "sendmsg");
    close(in[0]);
    close(out[1]);
    /* a HELLO into the pipe: it has no reader once the agent dropped the descriptors it never took (EPIPE then) */
    static const uint8_t hello_frame[] = {0, 0, 0, 8, 0x01, 0, 0, 0, 0, 0, 1, 0, 1, 0, 0, 0, 0};
    ssize_t wr = write(in[1], hello_frame, sizeof hello_frame);
    (void)wr;
    struct pollfd pf = {.fd = out[0], .events = POLLIN};
    int r = poll(&pf, 1, 300);
    uint8_t got;
    CHECK(r == 0 || read(out[0], &got, 1) == 0, "the agent answered on pipes handed over the channel");
    close(c);
    close(in[1]);
    close(out[0]);
    hello(a.fd); /* the first connection is unaffected */
    free(res);
    stop_agent(&a);
    /* a channel that cannot be made leaves the agent serving its own socket */
    struct agent b = start_init("--channel", "/nonexistent-dir/channel.sock");
    hello(b.fd);
    stop_agent(&b);
}
