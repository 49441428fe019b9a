/*
 * agent_test.h: the harness of sandbox-agent's protocol tests, one binary (`test_agent BINARY [TEST-NAME]`) run
 * against the agent binary it is given (the shipped build and the ASan/UBSan one). Each test starts the agent as a
 * child, in `stdio` mode over a socketpair or in `init` mode on a socket path in a temporary directory, speaks
 * PROTOCOL.md to it and checks what a client would see. Every wait is bounded (WAIT_MS); a failed CHECK prints where
 * and ends that test's process (each test runs in its own), killing the agents it started.
 *
 * agent_test.c holds the harness declared here and main, which runs the tests of its table `tests[]` in order.
 * The tests live in files by concern, all linked into the one binary:
 *   test_agent_proc.c    processes: output and exit, stdin, launch errors, signals, credit, terminals, orphans, bench
 *   test_agent_bg.c      background processes: attach, rings and OFFSET_GONE, THROTTLE, PROCS, the 1,024 limit
 *   test_agent_frames.c  the wire: --version and HELLO, malformed and random frames, 1,000 streams, limits
 *   test_agent_conn.c    connections and the agent's life: timers, relay, channel, an unread connection, idle RSS,
 *                        SIGTERM, process 1 of a PID namespace
 *   test_agent_files.c   file operations and watches through the protocol
 *   test_tunnel.c        CONNECT: TCP connections to a listener of the test, credit both ways, errors, a flood
 *   test_listen.c        LISTEN: the agent's listener, ACCEPTED streams, max_conns, CLOSE, errors, idle, a flood,
 *                        an unread connection
 *
 * Adding a test file (say test_x.c):
 *   1. write `void t_x(void)` in test_x.c, including this header; keep its own helpers `static`;
 *   2. declare t_x below, under a line naming the file;
 *   3. add `{"x", t_x}` to `tests[]` in agent_test.c (before "bench", which runs only when named) — the name is what
 *      `test_agent BINARY x` runs alone and what the result line prints;
 *   4. add test_x.c to AGENT_TEST_SRC in the Makefile (`make test` then builds and runs it, plain and sanitized).
 * A helper that two files need goes into agent_test.c and is declared here.
 */
#ifndef AGENT_TEST_H
#define AGENT_TEST_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/types.h>

#define WAIT_MS 20000
#define MAXF (65600 + 9)

extern const char *AGENT;   /* the agent binary under test (argv[1]) */
extern int sanitized;       /* it is the ASan/UBSan build: memory figures are printed, not checked */
extern char tmpdir[64];     /* a temporary directory for this run, removed at the end */
extern const char *current; /* the test (or part of one) running, named by a failed CHECK */

#define CHECK(cond, ...)                                                                                               \
    do {                                                                                                               \
        if (!(cond)) {                                                                                                 \
            fprintf(stderr, "FAIL %s (%s:%d): %s: ", current, __FILE__, __LINE__, #cond);                             \
            fprintf(stderr, __VA_ARGS__);                                                                              \
            fprintf(stderr, "\n");                                                                                     \
            exit(1);                                                                                                   \
        }                                                                                                              \
    } while (0)

int64_t mono_ms(void);
int64_t wall_ms(void);

/* ---------- payload building (big-endian, as PROTOCOL.md) ---------- */

struct buf {
    uint8_t d[1 << 16];
    size_t n;
};

void b_u8(struct buf *b, uint8_t v);
void b_u16(struct buf *b, uint16_t v);
void b_u32(struct buf *b, uint32_t v);
void b_u64(struct buf *b, uint64_t v);
void b_bytes(struct buf *b, const void *p, size_t n);
void b_str(struct buf *b, const char *s);
uint32_t g32(const uint8_t *p);
uint64_t g64(const uint8_t *p);

/* ---------- frames ---------- */

struct frame {
    uint8_t type;
    uint32_t stream;
    uint32_t len;
    uint8_t p[MAXF];
};

void write_all(int fd, const void *p, size_t n);
/* For connections the agent may have closed: 0 when the write failed. */
int try_frame(int fd, uint8_t type, uint32_t stream, const void *payload, size_t len);
void send_frame(int fd, uint8_t type, uint32_t stream, const void *payload, size_t len);
void sendb(int fd, uint8_t type, uint32_t stream, const struct buf *b);
/* Reads exactly n bytes within the deadline: 1, 0 at end of stream before any byte, -1 on timeout. */
int read_full(int fd, void *p, size_t n, int64_t deadline);
/* The next frame within ms: 1, 0 at end of stream, -1 on timeout. Checks the agent's own limits. */
int next_frame_in(int fd, struct frame *f, int ms);
void next_frame_at(int fd, struct frame *f, int line);
#define next_frame(fd, f) next_frame_at(fd, f, __LINE__)
/* The next frame on a stream, skipping CREDIT frames and frames of other streams. */
void expect_on_at(int fd, uint32_t stream, struct frame *f, int line);
#define expect_on(fd, stream, f) expect_on_at(fd, stream, f, __LINE__)
void expect_error(int fd, uint32_t stream, uint32_t code, struct frame *f);
/* Asserts the connection ends (after an optional ERROR with code). */
void expect_closed_after_error(int fd, uint32_t code);
void hello(int fd);
void ping(int fd, uint64_t token);

/* ---------- agents ---------- */

struct agent {
    pid_t pid;
    int fd;         /* stdio mode: our end of the socketpair */
    char sock[128]; /* init mode */
};

/* Kills pid (an agent, or what runs one) if a check fails, so that nothing outlives its test. */
void track(pid_t pid);
struct agent start_stdio(void);
/* A connection to a Unix socket path, -1 when nothing listens there. */
int connect_to(const char *path);
/* An agent in init mode on a new socket under tmpdir (extra1, extra2: more arguments or NULL), connected. */
struct agent start_init(const char *extra1, const char *extra2);
/* Waits for the agent to exit; its exit status. */
int wait_agent(struct agent *a, int ms);
/* Ends an agent the way its user would: the connection ends (stdio) or SIGTERM (init); it must exit 0. */
void stop_agent(struct agent *a);
long rss_kb(pid_t pid);

/* ---------- processes ---------- */

enum { F_PTY = 1, F_STDIN = 2, F_BACKGROUND = 4 };

void spawn_full(int fd, uint32_t id, uint32_t flags, uint32_t credit, uint32_t ring, uint8_t overflow,
                const char *cwd, const char *const *argv, const char *const *env);
void spawn(int fd, uint32_t id, uint32_t flags, const char *const *argv);

struct result {
    char out[1 << 16], err[1 << 16];
    size_t nout, nerr;
    uint32_t pid;
    int32_t status;
    int signaled, oom;
};

/* Reads a stream's frames until EXIT (a STARTED not read yet gives the pid), checking offsets. */
void collect(int fd, uint32_t id, struct result *r);
/* spawn and collect: the result, to free. */
struct result *run(int fd, uint32_t id, const char *const *argv);
void credit(int fd, uint32_t id, uint8_t which, uint32_t bytes);
void input(int fd, uint32_t id, const char *pid, uint8_t what, const void *bytes, size_t n);
int blocked_in_pipe_write(pid_t pid);
int alive(pid_t pid);
/* `cat` fed with total bytes of DATA, read back through OUTPUT with offsets; frames go to wfd, come from rfd. */
void cat_roundtrip(int wfd, int rfd, uint32_t id, uint64_t total);
/* The background id of a STARTED frame. */
void parse_started_id(const struct frame *f, char *id, size_t cap);

/* ---------- the tests, by file (agent_test.c runs them in the order of its table) ---------- */

/* test_agent_proc.c */
void t_echo_exit(void);
void t_stdin_cat(void);
void t_orphans(void);
void t_launch_errors(void);
void t_signal(void);
void t_credit(void);
void t_pty(void);
void t_bench(void);

/* test_agent_bg.c */
void t_throttle_unread(void);
void t_background(void);
void t_background_pty(void);
void t_background_limit(void);

/* test_agent_frames.c */
void t_hello_version(void);
void t_malformed(void);
void t_many_streams(void);
void t_version(void);
void t_limits(void);
void t_fuzz(void);

/* test_agent_conn.c */
void t_deadline(void);
void t_relay(void);
void t_idle_rss(void);
void t_unread_connection(void);
void t_sigterm(void);
void t_pid1(void);
void t_channel(void);

/* test_agent_files.c */
void t_files(void);

/* test_tunnel.c */
void t_tunnel(void);

/* test_listen.c */
void t_listen(void);

#endif
