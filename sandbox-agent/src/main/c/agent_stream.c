/*
 * agent_stream.c: the streams of a connection: the table by id, the ring of recently
 * ended ids that a new request may not reuse, ending a stream and releasing what it holds, and the frames a client
 * sends on an open stream (DATA, EOF, SIGNAL, RESIZE, CREDIT, CLOSE), whose effect each concern's file carries out.
 */
#include "agent.h"

#include <stdlib.h>
#include <unistd.h>

struct stream *stream_find(struct conn *c, uint32_t id) {
    if (!c->hash) return NULL;
    for (struct stream *s = c->hash[id % HASH_BUCKETS]; s; s = s->hnext)
        if (s->id == id) return s;
    return NULL;
}

int recent_has(struct conn *c, uint32_t id) {
    for (int i = c->rhead[id % HASH_BUCKETS]; i >= 0; i = c->rnext[i])
        if (c->recent[i] == id) return 1;
    return 0;
}

/* Remembers an ended id (bounded: the oldest is forgotten). */
void recent_add(struct conn *c, uint32_t id) {
    size_t i = c->recent_i;
    if (c->recent_n == RECENT_IDS) { /* unlink the id slot i held */
        int16_t *pp = &c->rhead[c->recent[i] % HASH_BUCKETS];
        while (*pp >= 0 && *pp != (int16_t)i) pp = &c->rnext[*pp];
        if (*pp >= 0) *pp = c->rnext[i];
    } else {
        c->recent_n++;
    }
    c->recent[i] = id;
    c->rnext[i] = c->rhead[id % HASH_BUCKETS];
    c->rhead[id % HASH_BUCKETS] = (int16_t)i;
    c->recent_i = (i + 1) % RECENT_IDS;
}

struct stream *stream_new(struct conn *c, uint32_t id, int kind) {
    struct stream *s = xcalloc(1, sizeof *s);
    s->task.kind = TK_STREAM;
    s->c = c;
    s->id = id;
    s->kind = kind;
    s->fd = -1;
    if (!c->hash) c->hash = xcalloc(HASH_BUCKETS, sizeof *c->hash);
    s->hnext = c->hash[id % HASH_BUCKETS];
    c->hash[id % HASH_BUCKETS] = s;
    s->next = c->streams;
    if (c->streams) c->streams->prev = s;
    c->streams = s;
    c->nstreams++;
    return s;
}

/* Ends a stream on our side: releases what it holds; the caller sent its last frame (or the client closed it). */
void stream_drop(struct stream *s) {
    struct conn *c = s->c;
    if (s->dead) return;
    s->dead = 1;
    task_cancel(&s->task);
    switch (s->kind) {
    case ST_SPAWN:
        if (s->proc) proc_orphan(s->proc);
        break;
    case ST_READ:
        if (s->fd >= 0) close(s->fd);
        break;
    case ST_WRITE:
        if (s->w) fs_write_abort(s->w);
        break;
    case ST_LIST:
        if (s->has_pend) fs_info_free(&s->pend);
        if (s->list) fs_list_close(s->list);
        break;
    case ST_WATCH:
        if (s->watch) {
            ep_del(fs_watch_fd(s->watch));
            fs_watch_close(s->watch);
        }
        free(s->ev_path);
        break;
    case ST_ATTACH:
        reader_detach(s);
        break;
    case ST_TUNNEL:
        tunnel_drop(s);
        break;
    case ST_LISTEN:
        listen_drop(s);
        break;
    }
    struct stream **pp = &c->hash[s->id % HASH_BUCKETS];
    while (*pp && *pp != s) pp = &(*pp)->hnext;
    if (*pp) *pp = s->hnext;
    if (s->prev) s->prev->next = s->next; else c->streams = s->next;
    if (s->next) s->next->prev = s->prev;
    c->nstreams--;
    recent_add(c, s->id);
    bury(s);
}

void stream_run(struct stream *s) {
    switch (s->kind) {
    case ST_READ: read_run(s); break;
    case ST_LIST: list_run(s); break;
    case ST_WATCH: watch_run(s); break;
    case ST_PROCS: procs_run(s); break;
    case ST_ATTACH: attach_run(s); break;
    case ST_TUNNEL: tunnel_run(s); break;
    case ST_LISTEN: listen_run(s); break;
    case ST_SPAWN: if (s->proc) task_ready(&s->proc->task); break;
    }
}

/* Frames on an open stream: DATA, EOF, SIGNAL, RESIZE, CREDIT, CLOSE. */
void h_stream_op(struct conn *c, uint8_t type, uint32_t id, struct rd *r) {
    uint8_t fd = 0;
    uint32_t v = 0;
    uint16_t cols = 0, rows = 0;
    size_t n = r->n;
    switch (type) {
    case T_DATA:
        if (n < 1 || n > CHUNK) {
            bad_frame(c, "DATA of %zu bytes on stream %u (1..65536)", n, id);
            return;
        }
        r->off = n;
        break;
    case T_SIGNAL: v = rd_u32(r); break;
    case T_RESIZE: cols = rd_u16(r); rows = rd_u16(r); break;
    case T_CREDIT:
        fd = rd_u8(r);
        v = rd_u32(r);
        if (fd > 2 && !r->err) {
            bad_frame(c, "CREDIT for fd %u on stream %u", fd, id);
            return;
        }
        break;
    }
    if (r->err || r->off != r->n) {
        bad_frame(c, "frame 0x%02x on stream %u: %s", type, id, r->err ? r->err : "bytes left over");
        return;
    }
    struct stream *s = stream_find(c, id);
    if (!s) return; /* it may have ended */
    struct proc *p = s->kind == ST_SPAWN ? s->proc : NULL;
    switch (type) {
    case T_DATA:
        if (n > s->data_credit) {
            bad_frame(c, "DATA of %zu bytes on stream %u beyond its credit of %llu", n, id,
                      (unsigned long long)s->data_credit);
            return;
        }
        s->data_credit -= n;
        if (p) spawn_data(s, r->p, n);
        else if (s->kind == ST_WRITE) write_data(s, r->p, n);
        else if (s->kind == ST_TUNNEL) tunnel_data(s, r->p, n);
        break;
    case T_EOF:
        if (p) spawn_eof(s);
        else if (s->kind == ST_WRITE) write_commit(s);
        else if (s->kind == ST_TUNNEL) tunnel_eof(s);
        break;
    case T_SIGNAL:
        if (p) proc_signal(p, v);
        break;
    case T_RESIZE:
        if (p) proc_resize(p, cols, rows);
        break;
    case T_CREDIT: {
        uint64_t *slot = (s->kind == ST_SPAWN || s->kind == ST_ATTACH) ? (fd ? &s->cred[fd] : NULL)
                                                                       : (fd == 0 ? &s->credit : NULL);
        if (slot) {
            *slot += v;
            if (*slot > UINT32_MAX * 4ull) *slot = UINT32_MAX * 4ull;
        }
        stream_run(s);
        break;
    }
    case T_CLOSE:
        stream_drop(s);
        break;
    }
}
