/*
 * agent_request.c: a frame's way to its handler. HELLO and PING on stream 0; the frames on an open stream to
 * agent_stream.c; every request that names a new stream through one prologue (req_begin: the payload parsed to its
 * last byte, the handler's own check, the id new, the open-stream bound), with req_fail and req_path for the answers
 * every handler gives; and TIMERS.
 */
#include "agent.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int path_ok(struct conn *c, uint32_t id, const char *path, int nul) {
    if (nul || path[0] != '/') {
        send_error(c, id, EINVAL, "path must be absolute and without NUL bytes: %.200s", path);
        return 0;
    }
    return 1;
}

/* Checks a new stream id: reuse breaks the connection, too many open streams is LIMIT. 1 when it may open. */
static int open_check(struct conn *c, uint32_t id, int opens_stream) {
    if (stream_find(c, id) || recent_has(c, id)) {
        bad_frame(c, "stream id %u reused", id);
        return 0;
    }
    if (opens_stream && c->nstreams >= MAX_STREAMS) {
        send_error(c, id, E_LIMIT, "at most %d open streams per connection", MAX_STREAMS);
        recent_add(c, id);
        return 0;
    }
    return 1;
}

/* The id of a request that keeps no stream open is used up. */
static void req_answered(struct req *q) {
    if (!q->answered) {
        q->answered = 1;
        recent_add(q->c, q->id);
    }
}

/* How BAD_FRAME names a request; STAT .. CHMOD go by their number. */
static const char *req_name(uint8_t type) {
    switch (type) {
    case T_TIMERS: return "TIMERS";
    case T_SPAWN: return "SPAWN";
    case T_READ: return "READ";
    case T_WRITE: return "WRITE";
    case T_LIST: return "LIST";
    case T_WATCH: return "WATCH";
    case T_PROCS: return "PROCS";
    case T_ATTACH: return "ATTACH";
    case T_INPUT: return "INPUT";
    case T_CONNECT: return "CONNECT";
    case T_LISTEN: return "LISTEN";
    }
    return NULL;
}

/* A str field as a C string (*nul set when it held a NUL byte), freed when the handler returns. */
char *req_cstr(struct req *q, int *nul) {
    if (q->nstr == REQ_STRS) abort(); /* a handler decodes at most REQ_STRS */
    return q->str[q->nstr++] = rd_cstr(&q->r, nul);
}

/* A strs field, freed when the handler returns unless the handler keeps it (req_keep). */
char **req_strs(struct req *q, size_t *count, int *nul) {
    if (q->nstrv == REQ_STRS) abort();
    return q->strv[q->nstrv++] = rd_strs(&q->r, count, nul);
}

/* The handler keeps v: the request does not free it. */
void req_keep(struct req *q, char **v) {
    for (int i = 0; i < q->nstrv; i++)
        if (q->strv[i] == v) q->strv[i] = NULL;
}

/*
 * What every request checks once its handler decoded the payload:
 * - the payload parsed to its last byte and the handler's own check passed (why is NULL), else BAD_FRAME (the
 *   connection closes);
 * - the stream id is new (neither open nor one of the recently ended), else BAD_FRAME;
 * - opens: the request keeps a stream open when it succeeds, so the MAX_STREAMS bound applies (else LIMIT). A request
 *   that keeps none uses its id up from here on.
 * 1 when the handler goes on.
 */
int req_begin(struct req *q, int opens, const char *why) {
    struct rd *r = &q->r;
    if (r->err || r->off != r->n || why) {
        const char *reason = r->err ? r->err : r->off != r->n ? "bytes left over" : why;
        const char *name = req_name(q->type);
        if (name) bad_frame(q->c, "%s on stream %u: %s", name, q->id, reason);
        else bad_frame(q->c, "request 0x%02x on stream %u: %s", q->type, q->id, reason);
        return 0;
    }
    if (!open_check(q->c, q->id, opens)) return 0;
    if (!opens) req_answered(q);
    return 1;
}

/* Answers the request with ERROR code; its id is used up. */
void req_fail(struct req *q, uint32_t code, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    send_verror(q->c, q->id, code, fmt, ap);
    va_end(ap);
    req_answered(q);
}

/* A path field: absolute and without NUL bytes, else ERROR EINVAL. 1 when it is. */
int req_path(struct req *q, const char *path, int nul) {
    if (path_ok(q->c, q->id, path, nul)) return 1;
    req_answered(q);
    return 0;
}

static void h_hello(struct conn *c, struct rd *r) {
    uint16_t lo = rd_u16(r), hi = rd_u16(r);
    size_t n;
    rd_str(r, &n);
    if (r->err || r->off != r->n) {
        bad_frame(c, "HELLO: %s", r->err ? r->err : "bytes left over");
        return;
    }
    if (lo > hi || hi < PROTO_MIN || lo > PROTO_MAX) {
        send_error(c, 0, E_VERSION, "client speaks versions %u..%u, agent speaks %d..%d", lo, hi, PROTO_MIN, PROTO_MAX);
        conn_close(c);
        return;
    }
    c->hello = 1;
    const char *agent = "sandbox-agent " AGENT_VERSION;
    struct fw f = fw_begin(c, A_HELLO, 0, 2 + 4 + strlen(agent) + 4 + 24);
    fw_u16(&f, hi < PROTO_MAX ? hi : PROTO_MAX);
    fw_str(&f, agent, strlen(agent));
    fw_u32(&f, (uint32_t)getpid());
    fw_u64(&f, (uint64_t)G.deadline_ms);
    fw_u64(&f, (uint64_t)G.idle_ms);
    fw_u64(&f, (uint64_t)now_ms());
    fw_end(&f);
}

static void h_timers(struct req *q) {
    int64_t d = (int64_t)rd_u64(&q->r), i = (int64_t)rd_u64(&q->r);
    if (!req_begin(q, 0, NULL)) return;
    if (d < 0 || i < 0) {
        req_fail(q, EINVAL, "TIMERS: negative deadline_ms %lld or idle_ms %lld", (long long)d, (long long)i);
        return;
    }
    G.deadline_ms = d;
    G.idle_ms = i;
    send_empty(q->c, A_OK, q->id);
}

int known_type(uint8_t t) {
    switch (t) {
    case T_HELLO: case T_PING: case T_TIMERS: case T_SPAWN: case T_DATA: case T_EOF: case T_SIGNAL: case T_RESIZE:
    case T_CREDIT: case T_CLOSE: case T_READ: case T_WRITE: case T_LIST: case T_STAT: case T_MKDIR: case T_REMOVE:
    case T_MOVE: case T_WATCH: case T_SYMLINK: case T_CHMOD: case T_PROCS: case T_ATTACH: case T_INPUT:
    case T_CONNECT: case T_LISTEN:
        return 1;
    }
    return 0;
}

/* Runs the handler of a request on a new stream, then frees what it decoded. */
static void handle_request(struct conn *c, uint8_t type, uint32_t id, const uint8_t *payload, size_t len) {
    struct req q = {.c = c, .id = id, .type = type, .r = {payload, len, 0, NULL}};
    switch (type) {
    case T_TIMERS: h_timers(&q); break;
    case T_SPAWN: h_spawn(&q); break;
    case T_READ: h_read(&q); break;
    case T_WRITE: h_write(&q); break;
    case T_LIST: h_list(&q); break;
    case T_STAT: case T_MKDIR: case T_REMOVE: case T_MOVE: case T_SYMLINK: case T_CHMOD: h_fs_simple(&q); break;
    case T_WATCH: h_watch(&q); break;
    case T_PROCS: h_procs(&q); break;
    case T_ATTACH: h_attach(&q); break;
    case T_INPUT: h_input(&q); break;
    case T_CONNECT: h_connect(&q); break;
    case T_LISTEN: h_listen(&q); break;
    }
    for (int i = 0; i < q.nstr; i++) free(q.str[i]);
    for (int i = 0; i < q.nstrv; i++) free_strv(q.strv[i]);
}

void handle_frame(struct conn *c, uint8_t type, uint32_t id, const uint8_t *payload, size_t len) {
    struct rd r = {payload, len, 0, NULL};
    G.last_activity = mono_ms();
    if (!c->hello) {
        if (type != T_HELLO || id != 0) bad_frame(c, "first frame must be HELLO on stream 0, got 0x%02x on %u", type, id);
        else h_hello(c, &r);
        return;
    }
    if (type == T_HELLO) {
        bad_frame(c, "HELLO again");
        return;
    }
    if (type == T_PING) {
        uint64_t token = rd_u64(&r);
        if (id != 0 || r.err || r.off != r.n) {
            bad_frame(c, "PING must be 8 bytes on stream 0");
            return;
        }
        struct fw f = fw_begin(c, A_PONG, 0, 8);
        fw_u64(&f, token);
        fw_end(&f);
        return;
    }
    if (id == 0) {
        bad_frame(c, "frame 0x%02x on stream 0", type);
        return;
    }
    /* frames on an open stream may name the agent's ids (LISTEN's connections); a request may not open one */
    if (type == T_DATA || type == T_EOF || type == T_SIGNAL || type == T_RESIZE || type == T_CREDIT || type == T_CLOSE)
        h_stream_op(c, type, id, &r);
    else if (id > 0x7fffffffu)
        bad_frame(c, "stream id %u is in the agent's range", id);
    else
        handle_request(c, type, id, payload, len);
}
