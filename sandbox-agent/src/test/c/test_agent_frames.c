/*
 * test_agent_frames.c: the wire: --version and HELLO, malformed frames (each closes only its connection), random
 * frames, 1,000 concurrent streams on one connection, and the limits on connections and open streams. The harness is
 * agent_test.c (agent_test.h).
 */
#include "agent_test.h"

#include <string.h>
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
