/*
 * test_agent_conn.c: connections and the agent's life: the deadline and idle timers, relay mode, the --channel socket,
 * a connection nobody reads, idle memory, SIGTERM, and process 1 of a PID namespace. The harness is agent_test.c
 * (agent_test.h).
 */
#include "agent_test.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

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

void t_idle_rss(void) {
    struct agent a = start_init(NULL, NULL);
    hello(a.fd);
    ping(a.fd, 1);
    long kb = rss_kb(a.pid);
    printf("  idle agent RSS: %ld KiB%s\n", kb, sanitized ? " (sanitized build: not checked)" : "");
    if (!sanitized) CHECK(kb > 0 && kb <= 4096, "idle RSS %ld KiB", kb);
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
