/*
 * test_listen.c: LISTEN (PROTOCOL.md "LISTEN"). The agent listens on a free port of 127.0.0.1 (found by binding
 * port 0 here and closing it); the agent runs in this network namespace, so the test connects to it as code in a
 * sandbox would, and plays the client on the agent's connection.
 */
#include "agent_test.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum { C_DATA = 0x11, C_EOF = 0x12, C_CLOSE = 0x1F, C_LISTEN = 0x34 };
enum { A_CREDIT = 0x83, A_DATA = 0x94, A_END = 0x95, A_READY = 0x98, A_ACCEPTED = 0x9A, A_ERROR = 0xEE };
#define AGENT_ID 0x80000000u /* the first id the agent opens */
#define WINDOW 65536u

static void sleep_ms(int ms) {
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000};
    nanosleep(&ts, NULL);
}

/* A port of 127.0.0.1 nothing listens on now. */
static uint16_t free_port(void) {
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof a;
    CHECK(fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof a) == 0, "bind: %s", strerror(errno));
    CHECK(getsockname(fd, (struct sockaddr *)&a, &len) == 0, "getsockname");
    close(fd);
    return ntohs(a.sin_port);
}

static void tlisten(int fd, uint32_t id, uint16_t port, uint32_t credit, uint16_t max_conns) {
    struct buf b = {.n = 0};
    b_u16(&b, port);
    b_u32(&b, credit);
    b_u16(&b, max_conns);
    sendb(fd, C_LISTEN, id, &b);
}

static void expect_listening(int fd, uint32_t id, struct frame *f) {
    expect_on(fd, id, f);
    CHECK(f->type == A_READY && f->len == 4 && g32(f->p) == 0, "expected READY(0) on %u, got 0x%02x %.*s", id, f->type,
          f->type == A_ERROR ? (int)g32(f->p + 4) : 0, f->p + 8);
}

/* A blocking connection to 127.0.0.1:port (-1 when refused); *local: its own port. */
static int tcp_connect(uint16_t port, uint16_t *local) {
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port), .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    CHECK(fd >= 0, "socket");
    if (connect(fd, (struct sockaddr *)&a, sizeof a) < 0) {
        int err = errno;
        close(fd);
        errno = err;
        return -1;
    }
    socklen_t len = sizeof a;
    CHECK(getsockname(fd, (struct sockaddr *)&a, &len) == 0, "getsockname");
    if (local) *local = ntohs(a.sin_port);
    return fd;
}

/* The next frame is ACCEPTED on id for listener, naming the peer's port and the 256 KiB DATA credit. */
static void expect_accepted(int fd, uint32_t id, uint32_t listener, uint16_t peer, struct frame *f) {
    next_frame(fd, f);
    CHECK(f->type == A_ACCEPTED && f->stream == id && f->len == 10, "expected ACCEPTED on %u, got 0x%02x on %u (%u bytes)",
          id, f->type, f->stream, f->len);
    CHECK(g32(f->p) == listener, "ACCEPTED names listener %u, not %u", g32(f->p), listener);
    uint16_t port = (uint16_t)(f->p[4] << 8 | f->p[5]);
    CHECK(port == peer, "ACCEPTED names peer port %u, the socket's is %u", port, peer);
    CHECK(g32(f->p + 6) == 256 * 1024, "ACCEPTED data_credit %u", g32(f->p + 6));
}

static uint8_t pattern(uint64_t i) { return (uint8_t)((i * 2654435761u) >> 13 ^ i >> 9); }

/* A socket that sees nothing more (end of file or reset) within ms: 1. */
static int ends_within(int s, int ms) {
    struct pollfd pf = {.fd = s, .events = POLLIN};
    if (poll(&pf, 1, ms) != 1) return 0;
    char b[16];
    ssize_t k = read(s, b, sizeof b);
    return k == 0 || (k < 0 && errno == ECONNRESET);
}

/*
 * 1 MiB from a connection in the sandbox through the agent to the client, which echoes it back on the stream: the
 * socket reads every byte back in order; the client's EOF is the socket's end of file; the socket's close is END.
 * A second connection gets the next agent id.
 */
static void roundtrip(void) {
    enum { TOTAL = 1 << 20 };
    struct agent a = start_stdio();
    hello(a.fd);
    struct frame *f = malloc(sizeof *f);
    uint16_t port = free_port(), peer;
    tlisten(a.fd, 1, port, WINDOW, 8);
    expect_listening(a.fd, 1, f);
    int s = tcp_connect(port, &peer);
    CHECK(s >= 0, "connect to the agent's port %u: %s", port, strerror(errno));
    expect_accepted(a.fd, AGENT_ID, 1, peer, f);
    pid_t child = fork(); /* the program in the sandbox: writes 1 MiB, reads it back, then its end of file */
    CHECK(child >= 0, "fork");
    if (child == 0) {
        static uint8_t b[TOTAL];
        for (size_t i = 0; i < TOTAL; i++) b[i] = pattern(i);
        alarm(60);
        write_all(s, b, TOTAL);
        memset(b, 0, TOTAL);
        if (read_full(s, b, TOTAL, mono_ms() + WAIT_MS) != 1) _exit(2);
        for (size_t i = 0; i < TOTAL; i++)
            if (b[i] != pattern(i)) _exit(3);
        if (read_full(s, b, 1, mono_ms() + WAIT_MS) != 0) _exit(4); /* the client's EOF */
        close(s);
        _exit(0);
    }
    track(child);
    close(s); /* the child's copy is the socket's only one: its close is the socket's end */
    static uint8_t got[TOTAL];
    uint64_t n = 0, echoed = 0, out = 256 * 1024;
    int eof = 0;
    for (;;) {
        while (echoed < n && out > 0) { /* echo what came, within the agent's credit */
            uint64_t k = n - echoed;
            if (k > out) k = out;
            if (k > 65536) k = 65536;
            send_frame(a.fd, C_DATA, AGENT_ID, got + echoed, (size_t)k);
            echoed += k, out -= k;
        }
        if (echoed == TOTAL && !eof) {
            send_frame(a.fd, C_EOF, AGENT_ID, NULL, 0);
            eof = 1;
        }
        next_frame(a.fd, f);
        CHECK(f->stream == AGENT_ID, "0x%02x on %u", f->type, f->stream);
        if (f->type == A_CREDIT) {
            CHECK(f->len == 5 && f->p[0] == 0, "CREDIT fd %u", f->p[0]);
            out += g32(f->p + 1);
            CHECK(out <= 256 * 1024, "credit outstanding %llu", (unsigned long long)out);
            continue;
        }
        if (f->type == A_END) break;
        CHECK(f->type == A_DATA && f->len >= 1 && n + f->len <= TOTAL, "0x%02x of %u bytes after %llu", f->type,
              f->len, (unsigned long long)n);
        for (uint32_t i = 0; i < f->len; i++)
            CHECK(f->p[i] == pattern(n + i), "byte %llu from the socket differs", (unsigned long long)(n + i));
        memcpy(got + n, f->p, f->len);
        n += f->len;
        credit(a.fd, AGENT_ID, 0, f->len);
    }
    CHECK(n == TOTAL && eof, "END after %llu bytes", (unsigned long long)n);
    int st;
    CHECK(waitpid(child, &st, 0) == child && WIFEXITED(st) && WEXITSTATUS(st) == 0,
          "the socket's side failed (status %d: 2 short echo, 3 wrong byte, 4 no end of file after EOF)", st);
    int s2 = tcp_connect(port, &peer);
    CHECK(s2 >= 0, "second connect: %s", strerror(errno));
    expect_accepted(a.fd, AGENT_ID + 1, 1, peer, f);
    close(s2);
    expect_on(a.fd, AGENT_ID + 1, f);
    CHECK(f->type == A_END, "END after the socket closed, got 0x%02x", f->type);
    ping(a.fd, 1);
    free(f);
    stop_agent(&a);
}

/* max_conns 2: a third connection is closed at once and the client hears nothing of it; once one of the two ended,
 * the next is accepted again. */
static void max_conns(void) {
    struct agent a = start_stdio();
    hello(a.fd);
    struct frame *f = malloc(sizeof *f);
    uint16_t port = free_port(), peer;
    tlisten(a.fd, 3, port, WINDOW, 2);
    expect_listening(a.fd, 3, f);
    int s[2];
    for (int i = 0; i < 2; i++) {
        s[i] = tcp_connect(port, &peer);
        CHECK(s[i] >= 0, "connect: %s", strerror(errno));
        expect_accepted(a.fd, AGENT_ID + (uint32_t)i, 3, peer, f);
    }
    int third = tcp_connect(port, NULL);
    CHECK(third >= 0, "the third connect: %s", strerror(errno));
    CHECK(ends_within(third, WAIT_MS), "the third connection was not closed at once");
    ping(a.fd, 7);
    CHECK(next_frame_in(a.fd, f, 300) == -1, "a frame (0x%02x on %u) for a connection beyond max_conns", f->type,
          f->stream);
    close(third);
    close(s[0]);
    expect_on(a.fd, AGENT_ID, f);
    CHECK(f->type == A_END, "END, got 0x%02x", f->type);
    int again = tcp_connect(port, &peer);
    CHECK(again >= 0, "connect: %s", strerror(errno));
    expect_accepted(a.fd, AGENT_ID + 2, 3, peer, f); /* the id skipped by the refused one is not used */
    close(again), close(s[1]);
    free(f);
    stop_agent(&a);
}

/* CLOSE of the LISTEN stream: a new connect is refused; an accepted connection still carries bytes both ways. */
static void close_listener(void) {
    struct agent a = start_stdio();
    hello(a.fd);
    struct frame *f = malloc(sizeof *f);
    uint16_t port = free_port(), peer;
    tlisten(a.fd, 1, port, WINDOW, 4);
    expect_listening(a.fd, 1, f);
    int s = tcp_connect(port, &peer);
    CHECK(s >= 0, "connect: %s", strerror(errno));
    expect_accepted(a.fd, AGENT_ID, 1, peer, f);
    send_frame(a.fd, C_CLOSE, 1, NULL, 0);
    ping(a.fd, 2);
    CHECK(tcp_connect(port, NULL) < 0 && errno == ECONNREFUSED, "connect after CLOSE: %s",
          errno ? strerror(errno) : "accepted");
    send_frame(a.fd, C_DATA, AGENT_ID, "to sandbox", 10);
    char b[16];
    CHECK(read_full(s, b, 10, mono_ms() + WAIT_MS) == 1 && memcmp(b, "to sandbox", 10) == 0, "DATA to the socket");
    write_all(s, "to host", 7);
    expect_on(a.fd, AGENT_ID, f);
    CHECK(f->type == A_DATA && f->len == 7 && memcmp(f->p, "to host", 7) == 0, "DATA from the socket: 0x%02x", f->type);
    send_frame(a.fd, C_CLOSE, AGENT_ID, NULL, 0);
    CHECK(ends_within(s, WAIT_MS), "the socket did not end after CLOSE");
    close(s);
    free(f);
    stop_agent(&a);
}

static void expect_error_saying(int fd, uint32_t id, uint32_t code, const char *needle, struct frame *f) {
    expect_error(fd, id, code, f);
    f->p[8 + g32(f->p + 4)] = 0;
    CHECK(strstr((char *)f->p + 8, needle), "ERROR %u message '%s' does not say '%s'", code, f->p + 8, needle);
}

/* A port in use, port 0, max_conns 0 and 1025; then a request on an agent id breaks the connection. */
static void errors(void) {
    struct agent a = start_stdio();
    hello(a.fd);
    struct frame *f = malloc(sizeof *f);
    int busy = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof sa;
    CHECK(bind(busy, (struct sockaddr *)&sa, sizeof sa) == 0 && listen(busy, 4) == 0, "listen");
    getsockname(busy, (struct sockaddr *)&sa, &len);
    char needle[32];
    snprintf(needle, sizeof needle, "port %u", ntohs(sa.sin_port));
    tlisten(a.fd, 1, ntohs(sa.sin_port), WINDOW, 4);
    expect_error_saying(a.fd, 1, EADDRINUSE, needle, f);
    tlisten(a.fd, 3, 0, WINDOW, 4);
    expect_error_saying(a.fd, 3, EINVAL, "port 0", f);
    uint16_t port = free_port();
    tlisten(a.fd, 5, port, WINDOW, 0);
    expect_error_saying(a.fd, 5, EINVAL, "max_conns 0", f);
    tlisten(a.fd, 7, port, WINDOW, 1025);
    expect_error_saying(a.fd, 7, EINVAL, "max_conns 1025", f);
    uint8_t bad[6] = {0};
    send_frame(a.fd, C_LISTEN, 9, bad, sizeof bad); /* a short payload */
    expect_closed_after_error(a.fd, 1000);
    close(a.fd);
    wait_agent(&a, WAIT_MS);
    a = start_stdio();
    hello(a.fd);
    tlisten(a.fd, AGENT_ID + 5, port, WINDOW, 4);
    next_frame(a.fd, f);
    f->p[f->len < MAXF ? f->len : MAXF - 1] = 0;
    CHECK(f->type == A_ERROR && f->stream == 0 && g32(f->p) == 1000 && strstr((char *)f->p + 8, "agent's range"),
          "a request on stream %u: 0x%02x on %u '%s'", AGENT_ID + 5, f->type, f->stream, (char *)f->p + 8);
    int r;
    do r = next_frame_in(a.fd, f, WAIT_MS); while (r == 1);
    CHECK(r == 0, "the connection stayed open after BAD_FRAME");
    close(a.fd);
    wait_agent(&a, WAIT_MS);
    close(busy);
    free(f);
}

/* An open LISTEN stream, and then an accepted connection alone, keep an agent with --idle-ms 300 alive. */
static void idle(void) {
    struct agent a = start_init("--idle-ms", "300");
    hello(a.fd);
    struct frame *f = malloc(sizeof *f);
    uint16_t port = free_port(), peer;
    tlisten(a.fd, 1, port, WINDOW, 4);
    expect_listening(a.fd, 1, f);
    sleep_ms(900);
    CHECK(alive(a.pid), "the agent ended with a LISTEN stream open");
    int s = tcp_connect(port, &peer);
    CHECK(s >= 0, "connect: %s", strerror(errno));
    expect_accepted(a.fd, AGENT_ID, 1, peer, f);
    send_frame(a.fd, C_CLOSE, 1, NULL, 0);
    sleep_ms(900);
    CHECK(alive(a.pid), "the agent ended with an accepted connection open");
    int64_t m0 = mono_ms();
    close(s);
    expect_on(a.fd, AGENT_ID, f);
    CHECK(f->type == A_END, "END after the socket's end, got 0x%02x", f->type);
    int rc = wait_agent(&a, WAIT_MS);
    int64_t took = mono_ms() - m0;
    printf("  idle 300 ms after the last accepted connection ended: the agent exited after %lld ms\n", (long long)took);
    CHECK(rc == 0 && took >= 250 && took < 3000, "idle exit %d after %lld ms", rc, (long long)took);
    close(a.fd);
    free(f);
}

/* 500 connections at once (max_conns 1024): 500 ACCEPTED on distinct ids, bounded RSS, each one's bytes and END. */
static void flood(void) {
    enum { N = 500 };
    struct agent a = start_stdio();
    hello(a.fd);
    long rss0 = rss_kb(a.pid);
    struct frame *f = malloc(sizeof *f);
    uint16_t port = free_port();
    tlisten(a.fd, 1, port, WINDOW, 1024);
    expect_listening(a.fd, 1, f);
    static int s[N];
    static uint8_t state[N]; /* 1 accepted, 2 its DATA came, 3 END */
    for (int i = 0; i < N; i++) {
        s[i] = tcp_connect(port, NULL);
        CHECK(s[i] >= 0, "connect %d: %s", i, strerror(errno));
    }
    for (int i = 0; i < N; i++) {
        next_frame(a.fd, f);
        CHECK(f->type == A_ACCEPTED && f->stream == AGENT_ID + (uint32_t)i && g32(f->p) == 1,
              "connection %d: 0x%02x on %u", i, f->type, f->stream);
        state[i] = 1;
    }
    long rss = rss_kb(a.pid);
    printf("  agent RSS: %ld KiB before, %ld KiB with %d accepted connections%s\n", rss0, rss, N,
           sanitized ? " (sanitized build: not checked)" : "");
    if (!sanitized) CHECK(rss < 8 * 1024 + N * 8, "RSS %ld KiB", rss);
    for (int i = 0; i < N; i++) {
        char b[16];
        int k = snprintf(b, sizeof b, "c%d", i);
        write_all(s[i], b, (size_t)k);
        close(s[i]);
    }
    for (int ended = 0; ended < N;) {
        next_frame(a.fd, f);
        uint32_t i = f->stream - AGENT_ID;
        CHECK(i < N && state[i] >= 1 && state[i] < 3, "0x%02x on %u", f->type, f->stream);
        if (f->type == A_DATA) {
            char b[16];
            int k = snprintf(b, sizeof b, "c%u", i);
            CHECK(state[i] == 1 && f->len == (uint32_t)k && memcmp(f->p, b, (size_t)k) == 0, "DATA of %u", i);
            state[i] = 2;
            continue;
        }
        CHECK(f->type == A_END && state[i] == 2, "connection %u: 0x%02x in state %u", i, f->type, state[i]);
        state[i] = 3;
        ended++;
    }
    ping(a.fd, 9);
    free(f);
    stop_agent(&a);
}

static int count_fds(pid_t pid) {
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/fd", (int)pid);
    DIR *d = opendir(path);
    CHECK(d, "%s", path);
    int n = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;) n += e->d_name[0] != '.';
    closedir(d);
    return n;
}

/* A client that does not read its connection: once the agent's output queue is full it accepts no more connections
 * (its fds do not grow while 100 more wait in the backlog); when the client reads again every one is accepted. */
static void unread(void) {
    enum { FIRST = 64, MORE = 100 };
    struct agent a = start_stdio();
    int small = 4096;
    setsockopt(a.fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
    hello(a.fd);
    struct frame *f = malloc(sizeof *f);
    uint16_t port = free_port();
    tlisten(a.fd, 1, port, 1 << 20, 1024);
    expect_listening(a.fd, 1, f);
    static int s[FIRST + MORE];
    static uint8_t chunk[65536];
    uint64_t written = 0;
    for (int i = 0; i < FIRST; i++) {
        s[i] = tcp_connect(port, NULL);
        CHECK(s[i] >= 0, "connect %d: %s", i, strerror(errno));
        next_frame(a.fd, f);
        CHECK(f->type == A_ACCEPTED && f->stream == AGENT_ID + (uint32_t)i, "0x%02x on %u", f->type, f->stream);
    }
    for (int i = 0; i < FIRST; i++) { /* 4 MiB for a client that reads nothing */
        fcntl(s[i], F_SETFL, O_NONBLOCK);
        ssize_t k = write(s[i], chunk, sizeof chunk);
        if (k > 0) written += (uint64_t)k;
    }
    sleep_ms(300);
    int fds0 = count_fds(a.pid);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(port), .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    for (int i = FIRST; i < FIRST + MORE; i++) {
        s[i] = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        CHECK(s[i] >= 0, "socket");
        CHECK(connect(s[i], (struct sockaddr *)&sa, sizeof sa) == 0 || errno == EINPROGRESS, "connect: %s",
              strerror(errno));
    }
    sleep_ms(500);
    int fds1 = count_fds(a.pid);
    printf("  %llu bytes written to a client that reads nothing: agent fds %d, then %d with %d more connecting\n",
           (unsigned long long)written, fds0, fds1, MORE);
    CHECK(fds1 == fds0, "the agent accepted while its output queue was full: %d fds, then %d", fds0, fds1);
    uint64_t got = 0;
    int accepted = FIRST;
    while (accepted < FIRST + MORE || got < written) {
        next_frame(a.fd, f);
        if (f->type == A_ACCEPTED) {
            CHECK(f->stream == AGENT_ID + (uint32_t)accepted, "ACCEPTED on %u, expected %u", f->stream,
                  AGENT_ID + (uint32_t)accepted);
            accepted++;
        } else {
            CHECK(f->type == A_DATA && f->stream - AGENT_ID < FIRST, "0x%02x on %u", f->type, f->stream);
            got += f->len;
        }
    }
    CHECK(got == written, "%llu bytes came of %llu", (unsigned long long)got, (unsigned long long)written);
    for (int i = 0; i < FIRST + MORE; i++) close(s[i]);
    free(f);
    stop_agent(&a);
}

void t_listen(void) {
    const char *base = current;
    struct {
        const char *name;
        void (*fn)(void);
    } parts[] = {{"listen: 1 MiB round trip", roundtrip}, {"listen: max_conns", max_conns},
                 {"listen: CLOSE", close_listener}, {"listen: errors", errors}, {"listen: idle", idle},
                 {"listen: 500 connections", flood},
                 {"listen: unread connection", unread}};
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++) {
        current = parts[i].name;
        int64_t t0 = mono_ms();
        parts[i].fn();
        printf("  %s: ok (%lld ms)\n", parts[i].name, (long long)(mono_ms() - t0));
    }
    current = base;
}
