/*
 * test_agent_proc.c: processes through the protocol: output, exit status, environment and working directory; stdin
 * under credit; launch errors; SIGNAL and CLOSE; output credit; terminals and RESIZE; orphans reaped; and the bench
 * (a measurement, run only when named). The harness is agent_test.c (agent_test.h).
 */
#include "agent_test.h"

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

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
