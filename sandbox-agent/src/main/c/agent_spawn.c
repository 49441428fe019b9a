/*
 * agent_spawn.c: SPAWN. Pipes or a terminal, fork, and in the child: default signal dispositions and mask, the
 * original RLIMIT_NOFILE, a new session (the terminal its controlling one), the working directory and exec along the
 * environment's PATH; a launch failure comes back over a close-on-exec pipe with its errno.
 */
#include "agent.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <unistd.h>

/* Builds the child's environment: the agent's own with the request's NAME=VALUE entries laid over it. */
static char **make_env(char **over, size_t nover) {
    extern char **environ;
    size_t ne = 0;
    while (environ[ne]) ne++;
    char **env = xcalloc(ne + nover + 1, sizeof *env);
    size_t k = 0;
    for (size_t i = 0; i < ne; i++) {
        const char *eq = strchr(environ[i], '=');
        size_t nl = eq ? (size_t)(eq - environ[i]) : strlen(environ[i]);
        int replaced = 0;
        for (size_t j = 0; j < nover && !replaced; j++)
            if (strncmp(over[j], environ[i], nl) == 0 && over[j][nl] == '=') replaced = 1;
        if (!replaced) env[k++] = environ[i];
    }
    for (size_t j = 0; j < nover; j++) env[k++] = over[j];
    env[k] = NULL;
    return env; /* borrows the strings */
}

/* In the child: execve argv[0], searched on the environment's PATH unless it holds a '/'. Returns errno. */
static int child_exec(char **argv, char **env) {
    if (strchr(argv[0], '/')) {
        execve(argv[0], argv, env);
        return errno;
    }
    const char *path = DEFAULT_PATH;
    for (char **e = env; *e; e++)
        if (strncmp(*e, "PATH=", 5) == 0) path = *e + 5;
    size_t an = strlen(argv[0]);
    int err = ENOENT, eacces = 0;
    char buf[PATH_MAX];
    while (*path) {
        const char *colon = strchr(path, ':');
        size_t dl = colon ? (size_t)(colon - path) : strlen(path);
        if (dl + 1 + an < sizeof buf) {
            if (dl == 0) { /* an empty element is the current directory */
                memcpy(buf, argv[0], an + 1);
            } else {
                memcpy(buf, path, dl);
                buf[dl] = '/';
                memcpy(buf + dl + 1, argv[0], an + 1);
            }
            execve(buf, argv, env);
            if (errno == EACCES) eacces = 1;
            else if (errno != ENOENT && errno != ENOTDIR) err = errno;
        } else {
            err = ENAMETOOLONG;
        }
        if (!colon) break;
        path = colon + 1;
    }
    return eacces ? EACCES : err;
}

static void child_fail(int errfd, int stage, int err) {
    int32_t msg[2] = {stage, err};
    ssize_t rc = write(errfd, msg, sizeof msg);
    (void)rc;
    _exit(127);
}

/* Everything between fork and exec; runs in the child only. */
static void child(int pty, const char *slave, int in_r, int out_w, int err_w, const char *cwd, char **argv,
                  char **env, int errfd) {
    sigset_t none;
    sigemptyset(&none);
    for (int sig = 1; sig < NSIG; sig++) signal(sig, SIG_DFL); /* the agent ignores SIGPIPE; its children must not */
    sigprocmask(SIG_SETMASK, &none, NULL);                   /* the agent blocks signals for its signalfd */
    setrlimit(RLIMIT_NOFILE, &G.nofile);                     /* the agent raised its own for many streams */
    if (setsid() < 0) child_fail(errfd, 0, errno);
    if (pty) {
        /* O_NOCTTY, then TIOCSCTTY: Linux would make the terminal ours on open already, and gVisor's TIOCSCTTY
         * refuses (EINVAL) a session that has a controlling terminal, even that same one */
        int t = open(slave, O_RDWR | O_NOCTTY);
        if (t < 0) child_fail(errfd, 0, errno);
        if (ioctl(t, TIOCSCTTY, 0) < 0) child_fail(errfd, 0, errno);
        in_r = out_w = err_w = t;
    } else if (in_r < 0) {
        in_r = open("/dev/null", O_RDONLY);
        if (in_r < 0) child_fail(errfd, 0, errno);
    }
    if (dup2(in_r, 0) < 0 || dup2(out_w, 1) < 0 || dup2(err_w, 2) < 0) child_fail(errfd, 0, errno);
    if (in_r > 2) close(in_r);
    if (out_w > 2 && out_w != in_r) close(out_w);
    if (err_w > 2 && err_w != in_r && err_w != out_w) close(err_w);
    if (cwd[0] && chdir(cwd) < 0) child_fail(errfd, 1, errno);
    child_fail(errfd, 2, child_exec(argv, env));
}

static void proc_register(struct proc *p, int i) {
    p->tag[i].kind = EV_PROC;
    p->tag[i].fd = (uint8_t)i;
    p->tag[i].obj = p;
    uint32_t ev = i == 0 ? EPOLLOUT | EPOLLET : EPOLLIN | EPOLLRDHUP | EPOLLET;
    if (ep_add(p->fd[i], ev, &p->tag[i]) < 0) fatal("epoll_ctl");
}

void h_spawn(struct req *q) {
    struct rd *r = &q->r;
    struct conn *c = q->c;
    uint32_t id = q->id;
    uint32_t flags = rd_u32(r);
    uint16_t cols = rd_u16(r), rows = rd_u16(r);
    uint32_t credit = rd_u32(r), ring_bytes = rd_u32(r);
    uint8_t overflow = rd_u8(r);
    int nul = 0;
    size_t argc = 0, envc = 0;
    char *cwd = req_cstr(q, &nul);
    char **argv = cwd ? req_strs(q, &argc, &nul) : NULL;
    char **env = argv ? req_strs(q, &envc, &nul) : NULL;
    int bg = (flags & F_BACKGROUND) != 0, pty = (flags & F_PTY) != 0;
    if (!req_begin(q, !bg, flags & ~7u ? "unknown flags" : overflow > 1 ? "bad overflow" : NULL)) return;
    if (argc == 0 || nul) {
        req_fail(q, EINVAL, argc == 0 ? "SPAWN needs at least one argv element" : "NUL byte in cwd, argv or env");
        return;
    }
    for (size_t i = 0; i < envc; i++)
        if (!strchr(env[i], '=')) {
            req_fail(q, EINVAL, "env entry without '=': %.200s", env[i]);
            return;
        }
    if (bg && (ring_bytes < RING_MIN || ring_bytes > RING_MAX)) {
        req_fail(q, EINVAL, "ring_bytes %u outside %u..%u", ring_bytes, RING_MIN, RING_MAX);
        return;
    }
    if (bg && G.nbg >= MAX_BG) { /* drop the oldest ended process nobody reads */
        struct proc *old = G.bg_head;
        while (old && !(proc_ended(old) && !old->readers)) old = old->bnext;
        if (!old) {
            req_fail(q, E_LIMIT, "at most %d background processes", MAX_BG);
            return;
        }
        proc_free(old);
    }
    char **envp = make_env(env, envc);
    int pipes[3][2] = {{-1, -1}, {-1, -1}, {-1, -1}};
    int master = -1, errp[2] = {-1, -1};
    char slave[128] = "";
    if (pty) {
        master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
        if (master < 0 || grantpt(master) < 0 || unlockpt(master) < 0 || ptsname_r(master, slave, sizeof slave)) {
            req_fail(q, errno, "cannot open a terminal: %s", strerror(errno));
            goto out;
        }
        struct winsize ws = {.ws_row = rows, .ws_col = cols};
        ioctl(master, TIOCSWINSZ, &ws);
    } else {
        for (int i = 0; i < 3; i++) {
            if (i == 0 && !(flags & F_STDIN)) continue;
            if (pipe2(pipes[i], O_CLOEXEC) < 0) {
                req_fail(q, errno, "pipe: %s", strerror(errno));
                goto out;
            }
        }
    }
    if (pipe2(errp, O_CLOEXEC) < 0) {
        req_fail(q, errno, "pipe: %s", strerror(errno));
        goto out;
    }
    uint64_t oom0 = oom_kills();
    pid_t pid = fork();
    if (pid < 0) {
        req_fail(q, errno, "fork: %s", strerror(errno));
        goto out;
    }
    if (pid == 0) child(pty, slave, pipes[0][0], pipes[1][1], pipes[2][1], cwd, argv, envp, errp[1]);
    close(errp[1]);
    errp[1] = -1;
    /* the child reports a launch failure on the error pipe; exec closes it (CLOEXEC) on success */
    int32_t msg[2];
    struct pollfd pf = {.fd = errp[0], .events = POLLIN};
    int pr;
    do pr = poll(&pf, 1, LAUNCH_TIMEOUT_MS); while (pr < 0 && errno == EINTR);
    ssize_t got = pr > 0 ? read(errp[0], msg, sizeof msg) : -1;
    if (got != 0) { /* the child is reaped by the SIGCHLD loop like any unknown child */
        kill(pid, SIGKILL);
        if (got != (ssize_t)sizeof msg) {
            req_fail(q, ETIMEDOUT, "%.200s did not start within %d ms", argv[0], LAUNCH_TIMEOUT_MS);
        } else if (msg[0] == 1) {
            req_fail(q, (uint32_t)msg[1], "cannot change to directory %.300s: %s", cwd, strerror(msg[1]));
        } else if (msg[0] == 2) {
            req_fail(q, (uint32_t)msg[1], "cannot execute %.300s: %s", argv[0], strerror(msg[1]));
        } else {
            req_fail(q, (uint32_t)msg[1], "cannot set up %.300s: %s", argv[0], strerror(msg[1]));
        }
        goto out;
    }
    struct proc *p = xcalloc(1, sizeof *p);
    p->task.kind = TK_PROC;
    p->pid = pid;
    p->pty = pty;
    p->bg = bg;
    p->oom0 = oom0;
    p->started_ms = now_ms();
    p->overflow = overflow;
    p->writable = 1;
    p->fd[0] = p->fd[1] = p->fd[2] = -1;
    if (pty) {
        p->fd[1] = master;
        p->fd[0] = fcntl(master, F_DUPFD_CLOEXEC, 3); /* a second fd so stdin has its own epoll registration */
        master = -1;
        p->eof[2] = 1;
    } else {
        p->fd[0] = pipes[0][1];
        p->fd[1] = pipes[1][0];
        p->fd[2] = pipes[2][0];
        pipes[0][1] = pipes[1][0] = pipes[2][0] = -1;
    }
    for (int i = 0; i < 3; i++)
        if (p->fd[i] >= 0) {
            set_nonblock(p->fd[i]);
            proc_register(p, i);
            if (i > 0) p->readable[i] = 1;
        }
    p->next = G.procs;
    if (G.procs) G.procs->prev = p;
    G.procs = p;
    p->hnext = G.phash[(unsigned)pid % 4096];
    G.phash[(unsigned)pid % 4096] = p;
    G.running++;
    uint32_t dc = (flags & (F_STDIN | F_PTY)) && !bg ? STDIN_CREDIT : 0;
    if (bg) {
        p->seq = ++G.next_seq;
        snprintf(p->id, sizeof p->id, "p%llu", (unsigned long long)p->seq);
        for (int i = 1; i <= 2; i++) p->ring[i].cap = ring_bytes;
        p->argv = argv;
        req_keep(q, argv);
        p->bprev = G.bg_tail;
        if (G.bg_tail) G.bg_tail->bnext = p; else G.bg_head = p;
        G.bg_tail = p;
        G.nbg++;
    } else {
        struct stream *s = stream_new(c, id, ST_SPAWN);
        s->proc = p;
        p->owner = s;
        s->cred[1] = s->cred[2] = credit;
        s->data_credit = dc;
    }
    struct fw f = fw_begin(c, A_STARTED, id, 12 + strlen(p->id));
    fw_u32(&f, (uint32_t)pid);
    fw_str(&f, p->id, strlen(p->id));
    fw_u32(&f, dc);
    fw_end(&f);
    if (bg) send_empty(c, A_OK, id);
    task_ready(&p->task);
out:
    if (master >= 0) close(master);
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 2; j++)
            if (pipes[i][j] >= 0) close(pipes[i][j]);
    if (errp[0] >= 0) close(errp[0]);
    if (errp[1] >= 0) close(errp[1]);
    free(envp);
}
