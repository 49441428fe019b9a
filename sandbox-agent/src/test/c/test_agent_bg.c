/*
 * test_agent_bg.c: background processes: ATTACH from another connection and from an offset, INPUT, rings that
 * drop their oldest bytes (OFFSET_GONE) or THROTTLE the process, PROCS, a background terminal, and the limit of 1,024
 * kept processes. The harness is agent_test.c (agent_test.h).
 */
#include "agent_test.h"

#include <signal.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

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
