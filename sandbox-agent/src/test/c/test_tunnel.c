/*
 * test_tunnel.c: CONNECT (PROTOCOL.md "CONNECT"). Each test listens on 127.0.0.1 (port 0: the kernel picks one) in
 * this process or in a forked echo server; the agent runs in the same network namespace and connects to it.
 */
#include "agent_test.h"

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

enum { C_DATA = 0x11, C_EOF = 0x12, C_CLOSE = 0x1F, C_CONNECT = 0x33 };
enum { A_CREDIT = 0x83, A_DATA = 0x94, A_END = 0x95, A_READY = 0x98, A_ERROR = 0xEE };
#define WINDOW 65536u /* the read credit the tests keep outstanding: below the agent's output bound */

static void sleep_ms(int ms) {
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000};
    nanosleep(&ts, NULL);
}

/* A listening socket on 127.0.0.1 and a port the kernel picked. */
static int listen_any(uint16_t *port, int backlog) {
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof a;
    CHECK(fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof a) == 0, "bind: %s", strerror(errno));
    CHECK(listen(fd, backlog) == 0, "listen: %s", strerror(errno));
    CHECK(getsockname(fd, (struct sockaddr *)&a, &len) == 0, "getsockname");
    *port = ntohs(a.sin_port);
    return fd;
}

static int accept_within(int lfd, int ms) {
    struct pollfd pf = {.fd = lfd, .events = POLLIN};
    CHECK(poll(&pf, 1, ms) == 1, "nothing connected within %d ms", ms);
    int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
    CHECK(fd >= 0, "accept: %s", strerror(errno));
    return fd;
}

static void tconnect(int fd, uint32_t id, uint16_t port, uint32_t credit) {
    uint8_t p[6] = {(uint8_t)(port >> 8), (uint8_t)port, (uint8_t)(credit >> 24), (uint8_t)(credit >> 16),
                    (uint8_t)(credit >> 8), (uint8_t)credit};
    send_frame(fd, C_CONNECT, id, p, sizeof p);
}

/* READY on stream id: its DATA credit, which PROTOCOL.md sets at 256 KiB. */
static uint32_t expect_ready(int fd, uint32_t id, struct frame *f) {
    expect_on(fd, id, f);
    CHECK(f->type == A_READY && f->len == 4, "expected READY on %u, got 0x%02x %.*s", id, f->type,
          f->type == A_ERROR ? (int)g32(f->p + 4) : 0, f->p + 8);
    CHECK(g32(f->p) == 256 * 1024, "READY credit %u", g32(f->p));
    return g32(f->p);
}

/* The bytes a test sends: position i of stream `seed`, not a repeating short pattern. */
static uint8_t pattern(uint64_t i, uint32_t seed) {
    uint64_t x = (i >> 3) * 0x9E3779B97F4A7C15ull ^ seed * 0xBF58476D1CE4E5B9ull;
    x ^= x >> 29;
    return (uint8_t)(x >> (8 * (i & 7)));
}

static uint64_t fnv(uint64_t h, const uint8_t *p, size_t n) {
    for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 0x100000001b3ull;
    return h;
}
#define FNV0 0xcbf29ce484222325ull

/*
 * A forked echo server on lfd: every connection's bytes go back to it; at a connection's end of file it shuts its
 * own sending side, writes "<bytes received> <their fnv>" to report and closes. It ends after `conns` connections.
 */
static pid_t echo_server(int lfd, int conns, int report) {
    pid_t pid = fork();
    CHECK(pid >= 0, "fork");
    if (pid > 0) {
        track(pid);
        return pid;
    }
    enum { MAXC = 256 };
    struct pollfd pf[MAXC + 1];
    uint64_t got[MAXC + 1], sum[MAXC + 1];
    static uint8_t b[65536];
    int n = 1, done = 0;
    pf[0] = (struct pollfd){.fd = lfd, .events = POLLIN};
    alarm(60); /* never outlives a test that forgot it */
    while (done < conns) {
        CHECK(poll(pf, (nfds_t)n, -1) >= 0 || errno == EINTR, "poll");
        if ((pf[0].revents & POLLIN) && n <= MAXC) {
            int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
            if (fd >= 0) {
                pf[n] = (struct pollfd){.fd = fd, .events = POLLIN};
                got[n] = 0, sum[n] = FNV0;
                n++;
            }
        }
        for (int i = 1; i < n; i++) {
            if (!pf[i].revents) continue;
            ssize_t k = read(pf[i].fd, b, sizeof b);
            if (k > 0) {
                got[i] += (uint64_t)k;
                sum[i] = fnv(sum[i], b, (size_t)k);
                write_all(pf[i].fd, b, (size_t)k);
                continue;
            }
            if (k < 0 && errno == EINTR) continue;
            char line[64];
            int len = snprintf(line, sizeof line, "%llu %016llx\n", (unsigned long long)got[i],
                               (unsigned long long)(k == 0 ? sum[i] : 0));
            write_all(report, line, (size_t)len);
            shutdown(pf[i].fd, SHUT_WR);
            close(pf[i].fd);
            pf[i--] = pf[--n];
            got[i + 1] = got[n], sum[i + 1] = sum[n];
            done++;
        }
    }
    _exit(0); /* not exit: the harness's atexit would kill the agents the parent tracked */
}

static void reap_server(pid_t pid) {
    int64_t dl = mono_ms() + WAIT_MS;
    int st = 0;
    while (waitpid(pid, &st, WNOHANG) == 0) {
        CHECK(mono_ms() < dl, "echo server did not end");
        sleep_ms(2);
    }
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "echo server failed (status %d)", st);
}

/*
 * Sends total bytes of pattern(seed) on stream id within the agent's DATA credit, then EOF, and reads the echo back
 * through DATA with a window of read credit, until END. Checks the echo byte by byte; the fnv of what was sent.
 */
static uint64_t echo_roundtrip(int fd, uint32_t id, uint64_t total, uint32_t seed, uint32_t data_credit) {
    struct frame *f = malloc(sizeof *f);
    static uint8_t chunk[65536];
    uint64_t sent = 0, got = 0, sum = FNV0, credit_out = data_credit;
    int eof = 0;
    for (;;) {
        while (credit_out > 0 && sent < total) {
            size_t n = total - sent < sizeof chunk ? (size_t)(total - sent) : sizeof chunk;
            if (n > credit_out) n = (size_t)credit_out;
            for (size_t i = 0; i < n; i++) chunk[i] = pattern(sent + i, seed);
            sum = fnv(sum, chunk, n);
            send_frame(fd, C_DATA, id, chunk, n);
            sent += n, credit_out -= n;
        }
        if (sent == total && !eof) {
            send_frame(fd, C_EOF, id, NULL, 0);
            eof = 1;
        }
        next_frame(fd, f);
        if (f->stream != id) continue;
        if (f->type == A_CREDIT) {
            CHECK(f->len == 5 && f->p[0] == 0, "CREDIT on a CONNECT stream: fd %u", f->p[0]);
            credit_out += g32(f->p + 1);
            CHECK(credit_out <= 256 * 1024, "the agent credited %llu bytes outstanding", (unsigned long long)credit_out);
            continue;
        }
        if (f->type == A_END) break;
        CHECK(f->type == A_DATA, "expected DATA, got 0x%02x: %.*s", f->type,
              f->type == A_ERROR ? (int)g32(f->p + 4) : 0, f->p + 8);
        CHECK(f->len >= 1 && f->len <= 65536 && got + f->len <= sent, "DATA of %u bytes at %llu (%llu sent)", f->len,
              (unsigned long long)got, (unsigned long long)sent);
        for (uint32_t i = 0; i < f->len; i++)
            CHECK(f->p[i] == pattern(got + i, seed), "byte %llu of the echo differs", (unsigned long long)(got + i));
        got += f->len;
        credit(fd, id, 0, f->len);
    }
    CHECK(got == total, "END after %llu of %llu bytes", (unsigned long long)got, (unsigned long long)total);
    free(f);
    return sum;
}

/* One line of the echo server's report: bytes and fnv of what it received. */
static void read_report(int report, uint64_t *bytes, uint64_t *sum) {
    char line[64];
    size_t n = 0;
    int64_t dl = mono_ms() + WAIT_MS;
    while (n == 0 || line[n - 1] != '\n') {
        CHECK(n < sizeof line - 1 && read_full(report, line + n, 1, dl) == 1, "no report from the echo server");
        n++;
    }
    line[n] = 0;
    unsigned long long b, s;
    CHECK(sscanf(line, "%llu %llx", &b, &s) == 2, "report '%s'", line);
    *bytes = b, *sum = s;
}

/* 1 MiB both ways through an echo server: every byte back in order, the server got exactly what was sent. */
static void roundtrip(void) {
    struct agent a = start_stdio();
    hello(a.fd);
    uint16_t port;
    int lfd = listen_any(&port, 16), rep[2];
    CHECK(pipe(rep) == 0, "pipe");
    pid_t server = echo_server(lfd, 1, rep[1]);
    struct frame *f = malloc(sizeof *f);
    tconnect(a.fd, 1, port, WINDOW);
    uint32_t dc = expect_ready(a.fd, 1, f);
    uint64_t sum = echo_roundtrip(a.fd, 1, 1 << 20, 7, dc), rbytes, rsum;
    read_report(rep[0], &rbytes, &rsum);
    CHECK(rbytes == 1 << 20 && rsum == sum, "the server got %llu bytes (fnv %016llx), sent 1 MiB (fnv %016llx)",
          (unsigned long long)rbytes, (unsigned long long)rsum, (unsigned long long)sum);
    reap_server(server);
    ping(a.fd, 1);
    close(lfd), close(rep[0]), close(rep[1]);
    free(f);
    stop_agent(&a);
}

/* The client's EOF reaches the server as its end of file; the server's reply still comes, then END. */
static void client_eof(void) {
    struct agent a = start_stdio();
    hello(a.fd);
    uint16_t port;
    int lfd = listen_any(&port, 16);
    struct frame *f = malloc(sizeof *f);
    tconnect(a.fd, 1, port, WINDOW);
    expect_ready(a.fd, 1, f);
    int s = accept_within(lfd, WAIT_MS);
    send_frame(a.fd, C_DATA, 1, "GET / HTTP/1.0\r\n\r\n", 18);
    send_frame(a.fd, C_EOF, 1, NULL, 0);
    char req[64];
    size_t n = 0;
    int64_t dl = mono_ms() + WAIT_MS;
    for (int r; (r = read_full(s, req + n, 1, dl)) != 0; n++) CHECK(r == 1 && n < 18, "request: %d, %zu bytes", r, n);
    CHECK(n == 18 && memcmp(req, "GET / HTTP/1.0\r\n\r\n", 18) == 0, "the server read %zu bytes then end of file", n);
    write_all(s, "HTTP/1.0 200 OK\r\n\r\nhi", 21);
    close(s);
    expect_on(a.fd, 1, f);
    CHECK(f->type == A_DATA && f->len == 21 && memcmp(f->p, "HTTP/1.0 200 OK\r\n\r\nhi", 21) == 0,
          "reply: 0x%02x of %u bytes", f->type, f->len);
    expect_on(a.fd, 1, f);
    CHECK(f->type == A_END, "expected END after the reply, got 0x%02x", f->type);
    close(lfd);
    free(f);
    stop_agent(&a);
}

/* Reads DATA on id until END: its byte count (each byte checked against pattern(seed)), granting what it reads. */
static uint64_t drain(int fd, uint32_t id, uint32_t seed, int regrant) {
    struct frame *f = malloc(sizeof *f);
    uint64_t got = 0;
    for (;;) {
        expect_on(fd, id, f);
        if (f->type == A_END) break;
        CHECK(f->type == A_DATA, "expected DATA or END, got 0x%02x", f->type);
        for (uint32_t i = 0; i < f->len; i++)
            CHECK(f->p[i] == pattern(got + i, seed), "byte %llu differs", (unsigned long long)(got + i));
        got += f->len;
        if (regrant) credit(fd, id, 0, f->len);
    }
    free(f);
    return got;
}

/* The server writes and closes at once: every byte comes before END, also with exactly that much credit (the
 * agent sees the end while it may not read) and with credit given a little at a time. */
static void server_close(void) {
    struct agent a = start_stdio();
    hello(a.fd);
    uint16_t port;
    int lfd = listen_any(&port, 16);
    struct frame *f = malloc(sizeof *f);
    static uint8_t data[300000];
    for (size_t i = 0; i < sizeof data; i++) data[i] = pattern(i, 3);
    for (int exact = 1; exact >= 0; exact--) {
        uint32_t id = exact ? 1 : 3;
        tconnect(a.fd, id, port, exact ? (uint32_t)sizeof data : 1000);
        expect_ready(a.fd, id, f);
        int s = accept_within(lfd, WAIT_MS);
        pid_t w = fork(); /* the server writes and closes while this process grants credit */
        if (w == 0) {
            write_all(s, data, sizeof data);
            _exit(0);
        }
        track(w);
        close(s);
        uint64_t got = drain(a.fd, id, 3, !exact);
        int st;
        CHECK(waitpid(w, &st, 0) == w && WIFEXITED(st) && WEXITSTATUS(st) == 0, "the server's writer failed");
        CHECK(got == sizeof data, "END after %llu of %zu bytes (exact credit: %d)", (unsigned long long)got,
              sizeof data, exact);
    }
    close(lfd);
    free(f);
    stop_agent(&a);
}

static void expect_connect_error(int fd, uint32_t id, uint32_t code, const char *needle, struct frame *f) {
    expect_error(fd, id, code, f);
    f->p[8 + g32(f->p + 4)] = 0;
    CHECK(strstr((char *)f->p + 8, needle), "ERROR %u message '%s' does not say '%s'", code, f->p + 8, needle);
}

/* Refused (a port bound but not listening), port 0, and a connect that never completes (a full backlog). */
static void errors(void) {
    struct agent a = start_stdio();
    hello(a.fd);
    struct frame *f = malloc(sizeof *f);
    int closed = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof sa;
    CHECK(bind(closed, (struct sockaddr *)&sa, sizeof sa) == 0, "bind");
    getsockname(closed, (struct sockaddr *)&sa, &len);
    char needle[32];
    snprintf(needle, sizeof needle, "port %u", ntohs(sa.sin_port));
    tconnect(a.fd, 1, ntohs(sa.sin_port), WINDOW);
    expect_connect_error(a.fd, 1, ECONNREFUSED, needle, f);
    tconnect(a.fd, 3, 0, WINDOW);
    expect_connect_error(a.fd, 3, EINVAL, "port 0", f);
    /* a listener whose accept queue is full drops the SYN: the connect hangs until the agent's 5 s */
    uint16_t port;
    int lfd = listen_any(&port, 0), fill[4];
    for (int i = 0; i < 4; i++) {
        fill[i] = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        sa.sin_port = htons(port);
        connect(fill[i], (struct sockaddr *)&sa, sizeof sa);
    }
    sleep_ms(200);
    int64_t t0 = mono_ms();
    tconnect(a.fd, 5, port, WINDOW);
    ping(a.fd, 5); /* the loop does not wait for the connect */
    snprintf(needle, sizeof needle, "port %u", port);
    expect_connect_error(a.fd, 5, ETIMEDOUT, needle, f);
    int64_t took = mono_ms() - t0;
    printf("  CONNECT to a full backlog: ETIMEDOUT after %lld ms\n", (long long)took);
    CHECK(took >= 4900 && took < 9000, "ETIMEDOUT after %lld ms (5 s)", (long long)took);
    for (int i = 0; i < 4; i++) close(fill[i]);
    close(lfd), close(closed);
    ping(a.fd, 6);
    free(f);
    stop_agent(&a);
}

/* A server that resets the connection (SO_LINGER 0): ERROR ECONNRESET naming the port, not END. */
static void reset(void) {
    struct agent a = start_stdio();
    hello(a.fd);
    uint16_t port;
    int lfd = listen_any(&port, 16);
    struct frame *f = malloc(sizeof *f);
    tconnect(a.fd, 1, port, WINDOW);
    expect_ready(a.fd, 1, f);
    int s = accept_within(lfd, WAIT_MS);
    struct linger l = {1, 0};
    CHECK(setsockopt(s, SOL_SOCKET, SO_LINGER, &l, sizeof l) == 0, "SO_LINGER");
    close(s);
    char needle[32];
    snprintf(needle, sizeof needle, "port %u", port);
    expect_connect_error(a.fd, 1, ECONNRESET, needle, f);
    ping(a.fd, 1);
    close(lfd);
    free(f);
    stop_agent(&a);
}

/* Without credit the agent reads nothing (the server blocks), the connection still answers; credit resumes it. */
static void no_credit(void) {
    struct agent a = start_stdio();
    hello(a.fd);
    uint16_t port;
    int lfd = listen_any(&port, 16);
    struct frame *f = malloc(sizeof *f);
    tconnect(a.fd, 1, port, 0);
    expect_ready(a.fd, 1, f);
    int s = accept_within(lfd, WAIT_MS);
    fcntl(s, F_SETFL, O_NONBLOCK);
    static uint8_t chunk[65536];
    uint64_t written = 0;
    int64_t dl = mono_ms() + WAIT_MS;
    for (;;) { /* until the socket takes nothing for 300 ms: the agent is not reading */
        for (ssize_t k; (k = write(s, chunk, sizeof chunk)) > 0;) written += (uint64_t)k;
        CHECK(errno == EAGAIN, "write: %s", strerror(errno));
        struct pollfd pf = {.fd = s, .events = POLLOUT};
        if (poll(&pf, 1, 300) == 0) break;
        CHECK(mono_ms() < dl, "the server never blocked: %llu bytes taken", (unsigned long long)written);
    }
    printf("  the server blocked after %llu bytes (socket buffers) without credit\n", (unsigned long long)written);
    ping(a.fd, 1);
    CHECK(next_frame_in(a.fd, f, 200) == -1, "a frame (0x%02x on %u) without credit", f->type, f->stream);
    close(s); /* FIN after the bytes in flight */
    credit(a.fd, 1, 0, 1000);
    uint64_t got = 0;
    while (got < 1000) {
        expect_on(a.fd, 1, f);
        CHECK(f->type == A_DATA && got + f->len <= 1000, "0x%02x of %u bytes after %llu (credit 1000)", f->type,
              f->len, (unsigned long long)got);
        got += f->len;
    }
    CHECK(next_frame_in(a.fd, f, 200) == -1, "a frame (0x%02x) beyond the credit", f->type);
    credit(a.fd, 1, 0, (uint32_t)(written - 1000));
    for (;;) {
        expect_on(a.fd, 1, f);
        if (f->type == A_END) break;
        CHECK(f->type == A_DATA, "0x%02x", f->type);
        got += f->len;
    }
    CHECK(got == written, "END after %llu of %llu bytes", (unsigned long long)got, (unsigned long long)written);
    close(lfd);
    free(f);
    stop_agent(&a);
}

/* CLOSE closes the agent's socket: the server sees its end; the connection goes on. */
static void client_close(void) {
    struct agent a = start_stdio();
    hello(a.fd);
    uint16_t port;
    int lfd = listen_any(&port, 16);
    struct frame *f = malloc(sizeof *f);
    tconnect(a.fd, 1, port, WINDOW);
    expect_ready(a.fd, 1, f);
    int s = accept_within(lfd, WAIT_MS);
    send_frame(a.fd, C_DATA, 1, "abc", 3);
    send_frame(a.fd, C_CLOSE, 1, NULL, 0);
    char b[8];
    int r = read_full(s, b, 3, mono_ms() + WAIT_MS);
    CHECK(r == 1 && memcmp(b, "abc", 3) == 0, "the bytes before CLOSE: %d", r);
    struct pollfd pf = {.fd = s, .events = POLLIN};
    CHECK(poll(&pf, 1, WAIT_MS) == 1, "the server's socket did not end after CLOSE");
    ssize_t k = read(s, b, sizeof b);
    CHECK(k == 0 || (k < 0 && errno == ECONNRESET), "read after CLOSE: %zd %s", k, strerror(errno));
    (void)!send(s, "late", 4, MSG_NOSIGNAL); /* what the server says after CLOSE goes nowhere */
    ping(a.fd, 2);
    CHECK(next_frame_in(a.fd, f, 200) == -1, "a frame (0x%02x on %u) after CLOSE", f->type, f->stream);
    close(s), close(lfd);
    free(f);
    stop_agent(&a);
}

/* An open CONNECT stream is activity, as a running process is: a quiet one keeps an agent with an idle timeout alive,
 * and the idle time counts from its end. */
static void idle(void) {
    struct agent a = start_init("--idle-ms", "300");
    hello(a.fd);
    uint16_t port;
    int lfd = listen_any(&port, 4);
    struct frame *f = malloc(sizeof *f);
    tconnect(a.fd, 1, port, WINDOW);
    expect_ready(a.fd, 1, f);
    int s = accept_within(lfd, WAIT_MS);
    sleep_ms(900); /* three idle periods with a quiet connection and no frame */
    CHECK(alive(a.pid), "the agent ended with a CONNECT stream open");
    int64_t m0 = mono_ms();
    close(s); /* the server's end: END, the stream closes, the idle time starts */
    expect_on(a.fd, 1, f);
    CHECK(f->type == 0x95, "END after the server's end, got 0x%02x", f->type);
    int rc = wait_agent(&a, WAIT_MS);
    int64_t took = mono_ms() - m0;
    printf("  idle 300 ms after the last tunnel ended: the agent exited after %lld ms\n", (long long)took);
    CHECK(rc == 0 && took >= 250 && took < 3000, "idle exit %d after %lld ms", rc, (long long)took);
    close(lfd);
    close(a.fd);
    free(f);
}

/* 200 CONNECT streams at once on one connection, each its own bytes through the echo server. */
static void many(void) {
    enum { N = 200, SIZE = 3000 };
    struct agent a = start_stdio();
    hello(a.fd);
    uint16_t port;
    int lfd = listen_any(&port, 512), rep[2];
    CHECK(pipe(rep) == 0, "pipe");
    pid_t server = echo_server(lfd, N, rep[1]);
    struct frame *f = malloc(sizeof *f);
    for (uint32_t i = 0; i < N; i++) tconnect(a.fd, 1 + 2 * i, port, SIZE);
    static uint8_t chunk[SIZE];
    static uint32_t got[N];
    static uint8_t ready[N];
    for (int ended = 0; ended < N;) {
        next_frame(a.fd, f);
        CHECK(f->stream % 2 == 1 && f->stream < 2 * N, "0x%02x on %u", f->type, f->stream);
        uint32_t i = f->stream / 2;
        if (f->type == A_READY) { /* its bytes, then EOF: the echo server ends it once it sent them back */
            CHECK(!ready[i], "stream %u: READY twice", f->stream);
            ready[i] = 1;
            for (uint32_t k = 0; k < SIZE; k++) chunk[k] = pattern(k, f->stream);
            send_frame(a.fd, C_DATA, f->stream, chunk, SIZE);
            send_frame(a.fd, C_EOF, f->stream, NULL, 0);
            continue;
        }
        CHECK(ready[i], "stream %u: 0x%02x before READY", f->stream, f->type);
        if (f->type == A_CREDIT) continue;
        if (f->type == A_END) {
            CHECK(got[i] == SIZE, "stream %u: END after %u bytes", f->stream, got[i]);
            ended++;
            continue;
        }
        CHECK(f->type == A_DATA && got[i] + f->len <= SIZE, "stream %u: 0x%02x", f->stream, f->type);
        for (uint32_t k = 0; k < f->len; k++)
            CHECK(f->p[k] == pattern(got[i] + k, f->stream), "stream %u byte %u", f->stream, got[i] + k);
        got[i] += f->len;
    }
    reap_server(server);
    ping(a.fd, 3);
    close(lfd), close(rep[0]), close(rep[1]);
    free(f);
    stop_agent(&a);
}

/*
 * A flood both ways on 16 tunnels: servers that write without end to a client that does not read its connection,
 * and a client that sends all its credit to servers that do not read. The agent holds its output bound and at most
 * the credit it gave per tunnel.
 */
static void flood(void) {
    enum { N = 16 };
    struct agent a = start_stdio();
    int small = 4096;
    setsockopt(a.fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
    hello(a.fd);
    long rss0 = rss_kb(a.pid);
    uint16_t port;
    int lfd = listen_any(&port, 64), s[N];
    setsockopt(lfd, SOL_SOCKET, SO_RCVBUF, &small, sizeof small); /* accepted sockets take little: a short test */
    struct frame *f = malloc(sizeof *f);
    uint64_t out[N], sent = 0;
    for (uint32_t i = 0; i < N; i++) {
        tconnect(a.fd, 1 + 2 * i, port, 0xffffffffu);
        out[i] = expect_ready(a.fd, 1 + 2 * i, f);
        s[i] = accept_within(lfd, WAIT_MS);
        fcntl(s[i], F_SETFL, O_NONBLOCK);
    }
    /* first the client's side: DATA as long as credit comes back, to servers that read nothing; the agent's credit
     * stops once the sockets' buffers are full, and what it holds is within the credit it gave */
    static uint8_t chunk[65536];
    memset(chunk, 'x', sizeof chunk);
    for (;;) {
        for (uint32_t i = 0; i < N; i++) {
            while (out[i] > 0) {
                size_t n = out[i] < sizeof chunk ? (size_t)out[i] : sizeof chunk;
                send_frame(a.fd, C_DATA, 1 + 2 * i, chunk, n);
                out[i] -= n, sent += n;
            }
        }
        CHECK(sent < (uint64_t)N << 26, "the agent credited %llu bytes to servers that read nothing",
              (unsigned long long)sent);
        if (next_frame_in(a.fd, f, 300) != 1) break; /* no credit for 300 ms: the agent holds what it may */
        CHECK(f->type == A_CREDIT && f->stream % 2 == 1 && f->stream < 2 * N, "0x%02x", f->type);
        out[f->stream / 2] += g32(f->p + 1);
    }
    uint64_t held = 0;
    for (int i = 0; i < N; i++) held += 256 * 1024 - out[i];
    printf("  %llu bytes sent to servers that read nothing, %llu of them not credited back\n",
           (unsigned long long)sent, (unsigned long long)held);
    /* then the servers' side: writing without end to a client that reads nothing */
    pid_t writer = fork(); /* the servers' writing side: as fast as the agent takes it */
    if (writer == 0) {
        static uint8_t junk[65536];
        alarm(60);
        for (;;) {
            struct pollfd pf[N];
            for (int i = 0; i < N; i++) pf[i] = (struct pollfd){.fd = s[i], .events = POLLOUT};
            if (poll(pf, N, -1) < 0) _exit(1);
            for (int i = 0; i < N; i++)
                if (pf[i].revents & POLLOUT) (void)!write(s[i], junk, sizeof junk);
        }
    }
    track(writer);
    sleep_ms(1500);
    long rss = rss_kb(a.pid);
    printf("  agent RSS: %ld KiB before, %ld KiB with %d tunnels flooded both ways%s\n", rss0, rss, N,
           sanitized ? " (sanitized build: not checked)" : "");
    if (!sanitized) CHECK(rss < 8 * 1024 + N * 256, "RSS %ld KiB", rss);
    kill(writer, SIGKILL);
    waitpid(writer, NULL, 0);
    for (int i = 0; i < N; i++) close(s[i]);
    close(lfd);
    free(f);
    stop_agent(&a);
}

void t_tunnel(void) {
    const char *base = current;
    struct {
        const char *name;
        void (*fn)(void);
    } parts[] = {{"tunnel: 1 MiB round trip", roundtrip}, {"tunnel: client EOF", client_eof},
                 {"tunnel: server close", server_close}, {"tunnel: errors", errors}, {"tunnel: reset", reset},
                 {"tunnel: no credit", no_credit}, {"tunnel: CLOSE", client_close},
                 {"tunnel: 200 streams", many}, {"tunnel: flood", flood}, {"tunnel: idle", idle}};
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++) {
        current = parts[i].name;
        int64_t t0 = mono_ms();
        parts[i].fn();
        printf("  %s: ok (%lld ms)\n", parts[i].name, (long long)(mono_ms() - t0));
    }
    current = base;
}
