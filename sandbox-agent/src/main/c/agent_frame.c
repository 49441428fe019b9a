/*
 * agent_frame.c: frames (PROTOCOL.md "Frames"). The output queue of a connection and the agent frames every file
 * sends (ERROR, CREDIT, empty ones, a file's info); the reader of a client payload, which checks every length and
 * count against the bytes that are there before it allocates. The encoders of single fields are inline in agent.h.
 */
#include "agent.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Room for n more bytes at the tail of the output queue. */
uint8_t *out_reserve(struct conn *c, size_t n) {
    if (c->ob_cap - c->ob_tail < n) {
        if (c->ob_head > 0) {
            memmove(c->ob, c->ob + c->ob_head, pending(c));
            c->ob_tail -= c->ob_head;
            c->ob_head = 0;
        }
        if (c->ob_cap - c->ob_tail < n) {
            size_t cap = c->ob_cap ? c->ob_cap : 16384;
            while (cap - c->ob_tail < n) cap *= 2;
            uint8_t *nb = realloc(c->ob, cap);
            if (!nb) fatal("out of memory");
            c->ob = nb;
            c->ob_cap = cap;
        }
    }
    return c->ob + c->ob_tail;
}

void send_empty(struct conn *c, uint8_t type, uint32_t id) {
    struct fw f = fw_begin(c, type, id, 0);
    fw_end(&f);
}

void send_verror(struct conn *c, uint32_t id, uint32_t code, const char *fmt, va_list ap) {
    char msg[512];
    int n = vsnprintf(msg, sizeof msg, fmt, ap);
    if (n < 0) n = 0;
    if ((size_t)n >= sizeof msg) n = sizeof msg - 1;
    struct fw f = fw_begin(c, A_ERROR, id, 8 + (size_t)n);
    fw_u32(&f, code);
    fw_str(&f, msg, (size_t)n);
    fw_end(&f);
}

void send_error(struct conn *c, uint32_t id, uint32_t code, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    send_verror(c, id, code, fmt, ap);
    va_end(ap);
}

void send_credit(struct conn *c, uint32_t id, uint8_t fd, uint32_t bytes) {
    struct fw f = fw_begin(c, A_CREDIT, id, 5);
    fw_u8(&f, fd);
    fw_u32(&f, bytes);
    fw_end(&f);
}

size_t info_size(const struct fs_info *i) { return 1 + 4 + 4 + 4 + 8 + 8 + 4 + strlen(i->path) + 4 + strlen(i->link); }

void fw_info(struct fw *f, const struct fs_info *i) {
    fw_u8(f, i->type);
    fw_u32(f, i->mode);
    fw_u32(f, i->uid);
    fw_u32(f, i->gid);
    fw_u64(f, i->size);
    fw_u64(f, (uint64_t)i->mtime_ns);
    fw_str(f, i->path, strlen(i->path));
    fw_str(f, i->link, strlen(i->link));
}

static int rd_need(struct rd *r, size_t k, const char *what) {
    if (r->err) return 0;
    if (r->n - r->off < k) {
        r->err = what;
        return 0;
    }
    return 1;
}

uint8_t rd_u8(struct rd *r) { return rd_need(r, 1, "payload too short") ? r->p[r->off++] : 0; }

uint16_t rd_u16(struct rd *r) {
    if (!rd_need(r, 2, "payload too short")) return 0;
    uint16_t v = (uint16_t)(r->p[r->off] << 8 | r->p[r->off + 1]);
    r->off += 2;
    return v;
}

uint32_t rd_u32(struct rd *r) {
    if (!rd_need(r, 4, "payload too short")) return 0;
    const uint8_t *p = r->p + r->off;
    r->off += 4;
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

uint64_t rd_u64(struct rd *r) {
    uint64_t hi = rd_u32(r);
    return hi << 32 | rd_u32(r);
}

/* A str: pointer into the payload and its length; NULL if it does not parse. */
const char *rd_str(struct rd *r, size_t *len) {
    uint32_t n = rd_u32(r);
    if (r->err) return NULL;
    if (n > MAX_STR) {
        r->err = "string longer than 1 MiB";
        return NULL;
    }
    if (!rd_need(r, n, "string longer than its frame")) return NULL;
    const char *s = (const char *)r->p + r->off;
    r->off += n;
    *len = n;
    return s;
}

/* A C copy of a str; *nul set when it held a NUL byte. */
char *rd_cstr(struct rd *r, int *nul) {
    size_t n = 0;
    const char *s = rd_str(r, &n);
    if (!s) return NULL;
    if (memchr(s, 0, n)) *nul = 1;
    char *c = xmalloc(n + 1);
    memcpy(c, s, n);
    c[n] = 0;
    return c;
}

void free_strv(char **v) {
    if (!v) return;
    for (char **p = v; *p; p++) free(*p);
    free(v);
}

/* strs as a NULL-terminated array of C strings. */
char **rd_strs(struct rd *r, size_t *count, int *nul) {
    uint32_t n = rd_u32(r);
    if (r->err) return NULL;
    if (n > MAX_STRS) {
        r->err = "string list longer than 65536";
        return NULL;
    }
    /* each element needs at least its 4-byte length: refuse a count the payload cannot hold before allocating */
    if ((r->n - r->off) / 4 < n) {
        r->err = "string list longer than its frame";
        return NULL;
    }
    char **v = xcalloc((size_t)n + 1, sizeof *v);
    for (uint32_t i = 0; i < n; i++) {
        v[i] = rd_cstr(r, nul);
        if (!v[i]) {
            free_strv(v);
            return NULL;
        }
    }
    *count = n;
    return v;
}
