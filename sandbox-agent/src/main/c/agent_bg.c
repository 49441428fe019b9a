/*
 * agent_bg.c: background processes (SPAWN with F_BACKGROUND). Their stdout and stderr go into output rings (DROP_OLDEST,
 * or THROTTLE: not read while the ring holds bytes a reader has not had); ATTACH reads a ring from an offset on any
 * connection, INPUT writes stdin, signals or resizes by process id, PROCS lists them.
 */
#include "agent.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static void ring_alloc(struct ring *r) {
    if (!r->buf) r->buf = xmalloc(r->cap);
}

/* Background: pipe -> ring. THROTTLE stops reading while the ring is full of bytes an attached reader lacks. */
void bg_run(struct proc *p) {
    int more = 0, progressed = 0;
    stdin_flush(p);
    for (int fd = 1; fd <= 2; fd++) {
        struct ring *r = &p->ring[fd];
        for (int k = 0; k < BURST; k++) {
            if (p->eof[fd] || !p->readable[fd]) break;
            uint64_t space = r->cap;
            if (p->overflow == 1) {
                /* bytes no reader has had yet are held even with no reader attached: a process started
                 * with THROTTLE and read later loses nothing; what a reader had may go. Once killed, only
                 * attached readers hold bytes: its EXIT must not wait for a reader that may never come. */
                uint64_t low = p->killed ? r->end : p->had[fd] < r->start ? r->start : p->had[fd];
                if (low > r->end) low = r->end;
                for (struct stream *s = p->readers; s; s = s->rnext) {
                    uint64_t pos = s->pos[fd] < r->start ? r->start : s->pos[fd];
                    if (pos < low) low = pos;
                }
                space = r->cap - (r->end - low);
                if (space == 0) break;
            }
            uint64_t w = r->end % r->cap;
            uint64_t want = r->cap - w;
            if (want > space) want = space;
            if (want > CHUNK) want = CHUNK;
            ring_alloc(r);
            ssize_t n = read(p->fd[fd], r->buf + w, (size_t)want);
            if (n > 0) {
                r->end += (uint64_t)n;
                if (r->end - r->start > r->cap) r->start = r->end - r->cap;
                p->total[fd] = r->end;
                progressed = 1;
                if (k == BURST - 1) more = 1;
            } else if (n < 0 && errno == EINTR) {
                continue;
            } else if (n < 0 && errno == EAGAIN && p->hup) {
                p->eof[fd] = 1; /* a reaped PTY's master with nothing left (see check_timers) */
                proc_close_fd(p, fd);
            } else if (n < 0 && errno == EAGAIN) {
                p->readable[fd] = 0;
            } else { /* end of file, EIO from a PTY master, or a drained reaped PTY */
                p->eof[fd] = 1;
                proc_close_fd(p, fd);
                progressed = 1;
            }
        }
    }
    if (progressed || proc_ended(p))
        for (struct stream *s = p->readers; s; s = s->rnext) task_ready(&s->task);
    if (more) task_ready(&p->task);
}

void reader_detach(struct stream *s) {
    struct proc *p = s->proc;
    if (!p) return;
    if (s->rprev) s->rprev->rnext = s->rnext; else p->readers = s->rnext;
    if (s->rnext) s->rnext->rprev = s->rprev;
    s->proc = NULL;
    if (p->overflow == 1) task_ready(&p->task); /* it may have been waiting for this reader */
}

/* ATTACH: ring -> OUTPUT frames within credit, then END (follow 0) or EXIT. */
void attach_run(struct stream *s) {
    struct proc *p = s->proc;
    struct conn *c = s->c;
    int more = 0, progressed = 0;
    for (int fd = 1; fd <= 2; fd++) {
        struct ring *r = &p->ring[fd];
        if (s->pos[fd] < r->start) s->pos[fd] = r->start; /* DROP_OLDEST overtook this reader: the offset jumps */
        for (int k = 0; k < BURST; k++) {
            uint64_t lim = s->follow ? r->end : (s->limit[fd] < r->end ? s->limit[fd] : r->end);
            if (s->pos[fd] >= lim || s->cred[fd] == 0 || !room(c)) break;
            uint64_t n = lim - s->pos[fd];
            uint64_t at = s->pos[fd] % r->cap;
            if (n > r->cap - at) n = r->cap - at;
            if (n > s->cred[fd]) n = s->cred[fd];
            if (n > CHUNK) n = CHUNK;
            struct fw f = fw_begin(c, A_OUTPUT, s->id, 9 + (size_t)n);
            fw_u8(&f, (uint8_t)fd);
            fw_u64(&f, s->pos[fd]);
            fw_bytes(&f, r->buf + at, (size_t)n);
            fw_end(&f);
            s->pos[fd] += n;
            s->cred[fd] -= n;
            /* a following reader consumes; one that reads what is there now (follow 0) only looks */
            if (s->follow && s->pos[fd] > p->had[fd]) p->had[fd] = s->pos[fd];
            progressed = 1;
            if (k == BURST - 1) more = 1;
        }
    }
    if (progressed && p->overflow == 1) task_ready(&p->task);
    if (proc_ended(p) && s->pos[1] >= p->ring[1].end && s->pos[2] >= p->ring[2].end) {
        send_exit(c, s->id, p);
        stream_drop(s);
        return;
    }
    if (!s->follow && s->pos[1] >= s->limit[1] && s->pos[2] >= s->limit[2]) {
        send_empty(c, A_END, s->id);
        stream_drop(s);
        return;
    }
    if (more) task_ready(&s->task);
}

static struct proc *bg_find(const char *id) {
    for (struct proc *p = G.bg_head; p; p = p->bnext)
        if (strcmp(p->id, id) == 0) return p;
    return NULL;
}

void h_attach(struct req *q) {
    struct rd *r = &q->r;
    int nul = 0;
    char *pid = req_cstr(q, &nul);
    uint64_t from1 = rd_u64(r), from2 = rd_u64(r);
    uint8_t follow = rd_u8(r);
    uint32_t credit = rd_u32(r);
    if (!req_begin(q, 1, NULL)) return;
    struct proc *p = nul ? NULL : bg_find(pid);
    if (!p) {
        req_fail(q, E_NO_PROCESS, "no background process %.100s", pid);
        return;
    }
    if (from1 < p->ring[1].start || from2 < p->ring[2].start) {
        int out = from1 < p->ring[1].start;
        req_fail(q, E_OFFSET_GONE, "%s %llu", out ? "stdout" : "stderr", (unsigned long long)p->ring[out ? 1 : 2].start);
        return;
    }
    struct stream *s = stream_new(q->c, q->id, ST_ATTACH);
    s->proc = p;
    s->pos[1] = from1;
    s->pos[2] = from2;
    s->limit[1] = p->ring[1].end;
    s->limit[2] = p->ring[2].end;
    s->follow = follow != 0;
    s->cred[1] = s->cred[2] = credit;
    s->rnext = p->readers;
    if (p->readers) p->readers->rprev = s;
    p->readers = s;
    struct fw f = fw_begin(q->c, A_STARTED, q->id, 12 + strlen(p->id));
    fw_u32(&f, (uint32_t)p->pid);
    fw_str(&f, p->id, strlen(p->id));
    fw_u32(&f, 0);
    fw_end(&f);
    task_ready(&s->task);
}

void h_input(struct req *q) {
    struct rd *r = &q->r;
    int nul = 0;
    char *pid = req_cstr(q, &nul);
    uint8_t what = rd_u8(r);
    size_t n = r->err ? 0 : r->n - r->off;
    const uint8_t *b = r->p + r->off;
    char why[80] = "";
    if (!r->err) {
        r->off = r->n; /* the rest of the payload is the bytes */
        if (what > 3 || (what == 0 && n > CHUNK) || (what == 1 && n != 0) || (what >= 2 && n != 4))
            snprintf(why, sizeof why, "bad what %u with %zu bytes", what, n);
    }
    if (!req_begin(q, 0, why[0] ? why : NULL)) return;
    struct conn *c = q->c;
    uint32_t id = q->id;
    struct proc *p = nul ? NULL : bg_find(pid);
    if (!p) {
        send_error(c, id, E_NO_PROCESS, "no background process %.100s", pid);
        return;
    }
    if (what == 0 || what == 1) {
        if (p->fd[0] < 0) {
            send_error(c, id, EPIPE, "stdin of %s is closed", p->id);
            return;
        }
        if (what == 1) {
            p->in_eof = 1;
            stdin_flush(p);
        } else if (n > 0) {
            /* what the pipe does not take now waits in the stdin buffer (at most one INPUT, 64 KiB); a pipe that takes
             * nothing, or a buffer still holding the last INPUT, is EAGAIN: the client retries later */
            ssize_t k = p->inb_len > p->inb_off ? -1 : write(p->fd[0], b, n);
            if (k < 0 && p->inb_len == p->inb_off && errno != EAGAIN) {
                send_error(c, id, (uint32_t)errno, "stdin of %s: %s", p->id, strerror(errno));
                proc_close_fd(p, 0);
                return;
            }
            if (k < 0) {
                p->writable = 0;
                send_error(c, id, EAGAIN, "stdin of %s is full", p->id);
                return;
            }
            if ((size_t)k < n) {
                p->writable = 0;
                stdin_push(p, b + k, n - (size_t)k);
            }
        }
    } else if (what == 2) {
        uint32_t sig = (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
        proc_signal(p, sig);
        if (sig == SIGKILL) {
            p->killed = 1;
            task_ready(&p->task);
        }
    } else {
        proc_resize(p, (uint16_t)(b[0] << 8 | b[1]), (uint16_t)(b[2] << 8 | b[3]));
    }
    send_empty(c, A_OK, id);
}

void h_procs(struct req *q) {
    uint32_t credit = rd_u32(&q->r);
    if (!req_begin(q, 1, NULL)) return;
    struct stream *s = stream_new(q->c, q->id, ST_PROCS);
    s->credit = credit;
    task_ready(&s->task);
}

/* One PROC frame; argv is cut to fit an agent frame (64 KiB + 64). */
static size_t proc_frame(struct conn *c, uint32_t id, const struct proc *p, int send) {
    size_t fixed = 4 + strlen(p->id) + 1 + 4 + 8 + 1 + 4 + 1 + 4 + 32;
    size_t budget = CHUNK - fixed, used = 0, cnt = 0;
    for (char **a = p->argv; a && *a; a++) {
        size_t l = strlen(*a);
        if (used + 4 + l > budget) break;
        used += 4 + l;
        cnt++;
    }
    if (!send) return fixed + used;
    struct fw f = fw_begin(c, A_PROC, id, fixed + used);
    fw_str(&f, p->id, strlen(p->id));
    fw_u8(&f, p->pty ? 1 : 0);
    fw_u32(&f, (uint32_t)p->pid);
    fw_u64(&f, (uint64_t)p->started_ms);
    fw_u8(&f, !p->reaped);
    fw_u32(&f, (uint32_t)p->status);
    fw_u8(&f, (uint8_t)p->signaled);
    fw_u32(&f, (uint32_t)cnt);
    for (size_t i = 0; i < cnt; i++) fw_str(&f, p->argv[i], strlen(p->argv[i]));
    fw_u64(&f, p->ring[1].start);
    fw_u64(&f, p->ring[1].end);
    fw_u64(&f, p->ring[2].start);
    fw_u64(&f, p->ring[2].end);
    fw_end(&f);
    return fixed + used;
}

void procs_run(struct stream *s) {
    struct conn *c = s->c;
    for (int k = 0; k < BURST; k++) {
        struct proc *p = G.bg_head;
        while (p && p->seq <= s->after_seq) p = p->bnext;
        if (!p) {
            send_empty(c, A_END, s->id);
            stream_drop(s);
            return;
        }
        size_t n = proc_frame(c, s->id, p, 0);
        if (s->credit < n || !room(c)) return;
        proc_frame(c, s->id, p, 1);
        s->credit -= n;
        s->after_seq = p->seq;
    }
    task_ready(&s->task);
}
