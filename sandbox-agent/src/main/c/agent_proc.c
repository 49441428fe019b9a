/*
 * agent_proc.c: a running process, whoever started it. Its stdin (buffered within the credit the client was given,
 * a terminal's end of input as its EOF character), a foreground process's stdout and stderr read into OUTPUT frames
 * while the client has credit and the connection has room, signals and terminal size, reaping (SIGCHLD), EXIT with
 * the OOM check, and freeing.
 */
#include "agent.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

uint64_t oom_kills(void) {
    const char *files[] = {"/sys/fs/cgroup/memory.events", "/sys/fs/cgroup/memory/memory.oom_control"};
    for (int i = 0; i < 2; i++) {
        int fd = open(files[i], O_RDONLY | O_CLOEXEC);
        if (fd < 0) continue;
        char buf[1024];
        ssize_t n = read(fd, buf, sizeof buf - 1);
        close(fd);
        if (n <= 0) continue;
        buf[n] = 0;
        char *p = strstr(buf, "oom_kill ");
        if (p) return strtoull(p + 9, NULL, 10);
    }
    return 0;
}

void proc_close_fd(struct proc *p, int i) {
    if (p->fd[i] >= 0) {
        ep_del(p->fd[i]);
        close(p->fd[i]);
        p->fd[i] = -1;
    }
}

void proc_free(struct proc *p) {
    if (p->dead) return;
    p->dead = 1;
    task_cancel(&p->task);
    for (int i = 0; i < 3; i++) {
        proc_close_fd(p, i);
        free(p->ring[i].buf);
    }
    free(p->inb);
    free_strv(p->argv);
    if (p->prev) p->prev->next = p->next; else G.procs = p->next;
    if (p->next) p->next->prev = p->prev;
    struct proc **pp = &G.phash[(unsigned)p->pid % 4096];
    while (*pp && *pp != p) pp = &(*pp)->hnext;
    if (*pp) *pp = p->hnext;
    if (p->bg) {
        if (p->bprev) p->bprev->bnext = p->bnext; else G.bg_head = p->bnext;
        if (p->bnext) p->bnext->bprev = p->bprev; else G.bg_tail = p->bprev;
        G.nbg--;
    }
    bury(p);
}

/* A foreground process whose stream went away: kill its group, keep it only until it is reaped. */
void proc_orphan(struct proc *p) {
    p->owner = NULL;
    kill(-p->pid, SIGKILL);
    for (int i = 0; i < 3; i++) proc_close_fd(p, i);
    if (p->reaped) proc_free(p);
}

int proc_ended(const struct proc *p) { return p->reaped && p->eof[1] && p->eof[2]; }

void send_exit(struct conn *c, uint32_t id, const struct proc *p) {
    struct fw f = fw_begin(c, A_EXIT, id, 15);
    fw_u32(&f, (uint32_t)p->status);
    fw_u8(&f, (uint8_t)p->signaled);
    fw_u8(&f, (uint8_t)p->oom);
    fw_u64(&f, (uint64_t)p->ended_ms);
    fw_end(&f);
}

/* Writes buffered stdin into the pipe; returns the bytes taken. Closes stdin once drained after EOF. */
size_t stdin_flush(struct proc *p) {
    size_t taken = 0;
    while (p->fd[0] >= 0 && p->inb_len > p->inb_off && p->writable) {
        ssize_t n = write(p->fd[0], p->inb + p->inb_off, p->inb_len - p->inb_off);
        if (n > 0) {
            p->inb_off += (size_t)n;
            taken += (size_t)n;
        } else if (n < 0 && errno == EINTR) {
            continue;
        } else if (n < 0 && errno == EAGAIN) {
            p->writable = 0;
        } else { /* EPIPE: the process closed its stdin; what is left is dropped (and credited back) */
            taken += p->inb_len - p->inb_off;
            p->inb_off = p->inb_len;
            proc_close_fd(p, 0);
        }
    }
    if (p->inb_off == p->inb_len) {
        free(p->inb);
        p->inb = NULL;
        p->inb_len = p->inb_off = 0;
        if (p->in_eof && p->pty && p->fd[0] >= 0) {
            /* closing one fd of the master hangs nothing up: a terminal's end of input is its EOF character
             * (^D unless the program changed it), typed once */
            struct termios t;
            uint8_t eof = tcgetattr(p->fd[0], &t) == 0 ? t.c_cc[VEOF] : 4;
            if (write(p->fd[0], &eof, 1) == 1 || errno != EAGAIN) {
                p->in_eof = 0;
                p->eof_sent = 1;
            }
        } else if (p->in_eof) {
            proc_close_fd(p, 0);
        }
    }
    return taken;
}

/* Queues stdin bytes: written at once where the pipe takes them, the rest buffered (the caller bounds it). */
size_t stdin_push(struct proc *p, const uint8_t *b, size_t n) {
    if (p->fd[0] < 0) return n; /* stdin is gone: the bytes are dropped and count as consumed */
    if (!p->inb) {
        p->inb = xmalloc(n);
        p->inb_len = p->inb_off = 0;
    } else {
        if (p->inb_off) {
            memmove(p->inb, p->inb + p->inb_off, p->inb_len - p->inb_off);
            p->inb_len -= p->inb_off;
            p->inb_off = 0;
        }
        uint8_t *nb = realloc(p->inb, p->inb_len + n);
        if (!nb) fatal("out of memory");
        p->inb = nb;
    }
    memcpy(p->inb + p->inb_len, b, n);
    p->inb_len += n;
    return stdin_flush(p);
}

/* Without credit a pipe cannot be read, yet its end must still be seen (a client that granted exactly the output's
 * size waits for EXIT): the writer is gone (POLLHUP) and nothing is left in it. No writer means nothing can come. */
static int drained_eof(int fd) {
    struct pollfd pf = {.fd = fd, .events = POLLIN};
    int avail = 0;
    return poll(&pf, 1, 0) == 1 && (pf.revents & POLLHUP) && ioctl(fd, FIONREAD, &avail) == 0 && avail == 0;
}

/* Foreground: pipe -> OUTPUT frames within credit and room, then EXIT once everything was read and it was reaped. */
void fg_run(struct proc *p) {
    struct stream *s = p->owner;
    if (!s) return;
    struct conn *c = s->c;
    int more = 0;
    size_t taken = stdin_flush(p);
    if (taken) {
        s->data_credit += taken;
        send_credit(c, s->id, 0, (uint32_t)taken);
    }
    for (int fd = 1; fd <= 2; fd++) {
        for (int k = 0; k < BURST; k++) {
            if (p->eof[fd] || !p->readable[fd] || s->cred[fd] == 0 || !room(c)) break;
            size_t want = s->cred[fd] < CHUNK ? (size_t)s->cred[fd] : CHUNK;
            uint8_t *o = out_reserve(c, 18 + want);
            ssize_t n = read(p->fd[fd], o + 18, want);
            if (n > 0) {
                put32(o, 9 + (uint32_t)n);
                o[4] = A_OUTPUT;
                put32(o + 5, s->id);
                o[9] = (uint8_t)fd;
                put64(o + 10, p->total[fd]);
                c->ob_tail += 18 + (size_t)n;
                mark_dirty(c);
                p->total[fd] += (uint64_t)n;
                s->cred[fd] -= (uint64_t)n;
                if (k == BURST - 1) more = 1;
            } else if (n < 0 && errno == EINTR) {
                continue;
            } else if (n < 0 && errno == EAGAIN && p->hup) {
                p->eof[fd] = 1; /* a reaped PTY's master with nothing left (see check_timers) */
                proc_close_fd(p, fd);
            } else if (n < 0 && errno == EAGAIN) {
                p->readable[fd] = 0;
            } else { /* 0, EIO on a PTY master once the terminal's last holder closed it, or a drained reaped PTY */
                p->eof[fd] = 1;
                proc_close_fd(p, fd);
            }
        }
        /* edge-triggered: the hangup may have been reported before the credit ran out on the last bytes */
        if (!p->eof[fd] && p->readable[fd] && s->cred[fd] == 0 && drained_eof(p->fd[fd])) {
            p->eof[fd] = 1;
            proc_close_fd(p, fd);
        }
    }
    if (proc_ended(p)) {
        send_exit(c, s->id, p);
        s->proc = NULL;
        stream_drop(s);
        proc_free(p);
        return;
    }
    if (more) task_ready(&p->task);
}

void reap(void) {
    for (;;) {
        int st;
        pid_t pid = waitpid(-1, &st, WNOHANG);
        if (pid <= 0) return;
        struct proc *p = G.phash[(unsigned)pid % 4096];
        while (p && (p->pid != pid || p->reaped)) p = p->hnext;
        if (!p) continue; /* an orphan reparented to us, or a child that failed to launch */
        p->reaped = 1;
        p->ended_ms = now_ms();
        if (p->pty && !p->eof[1]) {
            p->reaped_mono = mono_ms();
            G.pty_waiting++;
        }
        G.running--;
        G.last_activity = mono_ms();
        if (WIFSIGNALED(st)) {
            p->signaled = 1;
            p->status = WTERMSIG(st);
            if (p->status == SIGKILL && oom_kills() > p->oom0) p->oom = 1;
        } else {
            p->status = WEXITSTATUS(st);
        }
        if (p->fd[0] >= 0) proc_close_fd(p, 0);
        if (!p->bg && !p->owner) proc_free(p);
        else task_ready(&p->task);
    }
}

/* SIGNAL, or INPUT's signal: to the process group while the process runs. */
void proc_signal(struct proc *p, uint32_t sig) {
    if (!p->reaped && sig < NSIG) kill(-p->pid, (int)sig);
}

/* RESIZE, or INPUT's resize: a terminal's window size. */
void proc_resize(struct proc *p, uint16_t cols, uint16_t rows) {
    if (p->pty && p->fd[1] >= 0) {
        struct winsize ws = {.ws_row = rows, .ws_col = cols};
        ioctl(p->fd[1], TIOCSWINSZ, &ws);
    }
}

/* DATA on a SPAWN stream (within its credit): to stdin; what the pipe took is credited back at once. */
void spawn_data(struct stream *s, const uint8_t *b, size_t n) {
    size_t taken = stdin_push(s->proc, b, n);
    if (taken) {
        s->data_credit += taken;
        send_credit(s->c, s->id, 0, (uint32_t)taken);
    }
}

/* EOF on a SPAWN stream: stdin ends once what it holds is written. */
void spawn_eof(struct stream *s) {
    s->proc->in_eof = 1;
    s->data_credit = 0;
    stdin_flush(s->proc);
}
