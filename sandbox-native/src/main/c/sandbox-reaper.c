/*
 * sandbox-reaper: ends expired and unleased Docker sessions when no client is alive.
 *
 * Sessions are Docker containers labelled dev.sandbox.session=<id>. Code inside a sandbox is hostile, so the decision
 * to end a session is made outside it, by this program, running in its own container (the binary is the image's only
 * file) with the Docker socket bind-mounted and a volume holding a small state store.
 *
 * Usage: sandbox-reaper [--socket PATH] [--state DIR] [--interval-ms N] [--once] [--filter-label KEY=VALUE]
 *   defaults /var/run/docker.sock, /state, 1000. Runs one round per interval until SIGTERM/SIGINT (exit 0); --once
 *   runs one round (exit 0, or 1 on a Docker error). --filter-label narrows the listing to containers that also carry
 *   that label (tests on a shared daemon). --session-label KEY names sessions by the label KEY instead of
 *   dev.sandbox.session: a test that runs its own reaper on a shared daemon labels its sessions so, and the daemon's
 *   reaper (which lists dev.sandbox.session) never sees them. One line per action on stdout, errors on stderr, at most
 *   one line per container per round.
 *
 * One round:
 *  1. GET /v1.41/containers/json?all=1&filters={"label":["dev.sandbox.session"]} over the Unix socket, HTTP/1.1,
 *     Content-Length or chunked, body capped at 64 MiB; a non-200 status fails the round (retried next round).
 *  2. A strict JSON scan of the array; per object: Id (64 hex), State, Created (epoch s), and the labels
 *     dev.sandbox.session, dev.sandbox.expires-at (epoch s or "never"), dev.sandbox.lease-seconds (positive integer).
 *  3. For a session id matching [A-Za-z0-9][A-Za-z0-9_.-]{0,127} (others are skipped, logged once):
 *     deadline = <state>/deadlines/<session> if it parses (0 = none), else the expires-at label; remove if now >= it.
 *     With a lease label (whatever the deadline): lease expiry = <state>/leases/<session> if it parses, else
 *     Created + lease-seconds; remove if now >= it. Remove when State is exited or dead, or created for 300 s.
 *     State files: opened with O_NOFOLLOW, regular, at most 64 bytes, digits and optional trailing whitespace.
 *     A malformed expires-at or lease-seconds label counts as absent.
 *  4. Remove = DELETE /v1.41/containers/<Id>?force=1&v=1; 204, 404 and 409 are success. A paused container is
 *     unpaused first (POST /v1.41/containers/<Id>/unpause): the daemon cannot kill a paused gVisor sandbox.
 *     Logged as "removed <session> (deadline|lease|exited|never-started)".
 *  5. Files in deadlines/ and leases/ whose session was not listed and whose mtime is over 600 s old are deleted.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#define MAX_BODY (64u << 20)
#define MAX_HEADER 16384
#define MAX_DEPTH 64
#define MAX_CONTAINERS 65536
#define MAX_SESSION 128
#define IO_TIMEOUT_S 30       /* per read or write */
#define REQUEST_TIMEOUT_S 120 /* per request */
#define NEVER_STARTED_S 300
#define GARBAGE_AGE_S 600

static volatile sig_atomic_t g_stop;
/* the label whose value names a session (--session-label); at most 63 bytes of [A-Za-z0-9_.-] */
static const char *g_session_label = "dev.sandbox.session";

/* ---------- a growable byte buffer with a hard cap ---------- */
struct buf {
    char *p;
    size_t len, cap;
};

static int buf_add(struct buf *b, const char *d, size_t n) {
    if (n > MAX_BODY - b->len) return -1;
    if (b->len + n + 1 > b->cap) {
        size_t c = b->cap ? b->cap : 65536;
        while (c < b->len + n + 1) c *= 2;
        if (c > MAX_BODY + 1) c = MAX_BODY + 1;
        char *q = realloc(b->p, c);
        if (!q) return -1;
        b->p = q;
        b->cap = c;
    }
    memcpy(b->p + b->len, d, n);
    b->len += n;
    b->p[b->len] = 0;
    return 0;
}

/* ---------- incremental HTTP/1.1 response reader (fed arbitrary slices) ---------- */
enum { H_HEAD, H_LENGTH, H_CHUNKED, H_EOF, H_DONE };
enum { C_SIZE, C_DATA, C_CR, C_LF, C_TRAILER };

struct resp {
    int state, status, cstate;
    char head[MAX_HEADER];
    size_t hlen;
    unsigned long long remaining;
    char line[256];
    size_t llen;
    struct buf body;
};

static int hexval(char h) {
    return h >= '0' && h <= '9' ? h - '0' : h >= 'a' && h <= 'f' ? h - 'a' + 10 : h >= 'A' && h <= 'F' ? h - 'A' + 10 : -1;
}

static int ieq_prefix(const char *s, const char *end, const char *lit) {
    size_t n = strlen(lit);
    return (size_t)(end - s) >= n && strncasecmp(s, lit, n) == 0;
}

static int parse_head(struct resp *r) {
    char *p = r->head, *end = r->head + r->hlen;
    if (r->hlen < 12 || memcmp(p, "HTTP/1.", 7) || p[8] != ' ') return -1;
    for (int i = 9; i < 12; i++)
        if (p[i] < '0' || p[i] > '9') return -1;
    r->status = (p[9] - '0') * 100 + (p[10] - '0') * 10 + (p[11] - '0');
    int chunked = 0, has_len = 0;
    unsigned long long len = 0;
    char *l = memchr(p, '\n', (size_t)(end - p));
    while (l && ++l < end) {
        char *eol = memchr(l, '\n', (size_t)(end - l));
        if (!eol) break;
        char *v = memchr(l, ':', (size_t)(eol - l));
        if (v) {
            char *ve = eol;
            for (v++; v < ve && (*v == ' ' || *v == '\t'); v++) {}
            while (ve > v && (ve[-1] == '\r' || ve[-1] == ' ' || ve[-1] == '\t')) ve--;
            if (ieq_prefix(l, v, "content-length:")) {
                if (v == ve) return -1;
                for (len = 0; v < ve; v++) {
                    if (*v < '0' || *v > '9' || len > MAX_BODY) return -1;
                    len = len * 10 + (unsigned)(*v - '0');
                }
                if (len > MAX_BODY) return -1;
                has_len = 1;
            } else if (ieq_prefix(l, v, "transfer-encoding:")) {
                if (ve - v != 7 || strncasecmp(v, "chunked", 7)) return -1;
                chunked = 1;
            }
        }
        l = eol;
    }
    if (r->status / 100 == 1 || r->status == 204 || r->status == 304) r->state = H_DONE;
    else if (chunked) r->state = H_CHUNKED, r->cstate = C_SIZE;
    else if (has_len) r->state = len ? H_LENGTH : H_DONE, r->remaining = len;
    else r->state = H_EOF;
    return 0;
}

/* one chunked-framing step over d[0..n); returns bytes consumed or -1 */
static long chunk_step(struct resp *r, const char *d, size_t n) {
    if (r->cstate == C_DATA) {
        size_t k = n < r->remaining ? n : (size_t)r->remaining;
        if (buf_add(&r->body, d, k)) return -1;
        if ((r->remaining -= k) == 0) r->cstate = C_CR;
        return (long)k;
    }
    char c = d[0];
    if (r->cstate == C_CR || r->cstate == C_LF) { /* the CRLF after a chunk's data */
        if (c != (r->cstate == C_CR ? '\r' : '\n')) return -1;
        r->cstate = r->cstate == C_CR ? C_LF : C_SIZE;
    } else if (c != '\n') {
        if (r->llen >= sizeof r->line - 1) return -1;
        r->line[r->llen++] = c;
    } else {
        if (r->llen && r->line[r->llen - 1] == '\r') r->llen--;
        r->line[r->llen] = 0;
        size_t ll = r->llen;
        r->llen = 0;
        if (r->cstate == C_TRAILER) {
            if (ll == 0) r->state = H_DONE;
            return 1;
        }
        unsigned long long sz = 0;
        size_t i = 0;
        for (int v; i < ll && (v = hexval(r->line[i])) >= 0; i++)
            if ((sz = sz * 16 + (unsigned)v) > MAX_BODY) return -1;
        if (i == 0 || (i < ll && r->line[i] != ';' && r->line[i] != ' ' && r->line[i] != '\t')) return -1;
        if (sz == 0) r->cstate = C_TRAILER;
        else r->remaining = sz, r->cstate = C_DATA;
    }
    return 1;
}

/* feeds bytes; returns 1 when the response is complete, 0 for more, -1 on a protocol error */
static int resp_feed(struct resp *r, const char *d, size_t n) {
    while (n > 0 && r->state != H_DONE) {
        long used = 1;
        if (r->state == H_HEAD) {
            if (r->hlen >= sizeof r->head - 1) return -1;
            r->head[r->hlen++] = *d;
            r->head[r->hlen] = 0;
            if (r->hlen >= 4 && !memcmp(r->head + r->hlen - 4, "\r\n\r\n", 4) && parse_head(r)) return -1;
        } else if (r->state == H_LENGTH) {
            size_t k = n < r->remaining ? n : (size_t)r->remaining;
            if (buf_add(&r->body, d, k)) return -1;
            if ((r->remaining -= k) == 0) r->state = H_DONE;
            used = (long)k;
        } else if (r->state == H_EOF) {
            if (buf_add(&r->body, d, n)) return -1;
            used = (long)n;
        } else if ((used = chunk_step(r, d, n)) < 0) {
            return -1;
        }
        d += used;
        n -= (size_t)used;
    }
    return r->state == H_DONE;
}

/* at end of stream: 0 if the response is complete, -1 if it was cut short */
static int resp_finish(struct resp *r) {
    if (r->state == H_EOF) r->state = H_DONE;
    return r->state == H_DONE ? 0 : -1;
}

/* ---------- the Docker Engine API over a Unix socket ---------- */
static int docker_request(const char *sock, const char *method, const char *path, struct resp *r) {
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    if (strlen(sock) >= sizeof a.sun_path) return fprintf(stderr, "error: socket path too long\n"), -1;
    strcpy(a.sun_path, sock);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return perror("error: socket"), -1;
    struct timeval tv = {.tv_sec = IO_TIMEOUT_S};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    char req[1024]; /* the list path is at most 85 + 63 + 459 + 6 bytes */
    int rn = snprintf(req, sizeof req, "%s %s HTTP/1.1\r\nHost: docker\r\nConnection: close\r\n\r\n", method, path);
    int rc = -1;
    if (connect(fd, (struct sockaddr *)&a, sizeof a) < 0) {
        fprintf(stderr, "error: connect %s: %s\n", sock, strerror(errno));
        goto out;
    }
    if (rn < 0 || (size_t)rn >= sizeof req) goto out;
    for (int off = 0; off < rn;) {
        ssize_t w = send(fd, req + off, (size_t)(rn - off), MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR && !g_stop) continue;
        if (w <= 0) {
            fprintf(stderr, "error: write to docker: %s\n", strerror(errno));
            goto out;
        }
        off += (int)w;
    }
    static char chunk[65536];
    for (time_t start = time(NULL);;) {
        if (time(NULL) - start > REQUEST_TIMEOUT_S) {
            fprintf(stderr, "error: docker took over %d s to answer %s\n", REQUEST_TIMEOUT_S, method);
            goto out;
        }
        ssize_t n = recv(fd, chunk, sizeof chunk, 0);
        if (n < 0 && errno == EINTR && !g_stop) continue;
        if (n < 0) {
            fprintf(stderr, "error: read from docker: %s\n", errno == EAGAIN ? "timed out" : strerror(errno));
            goto out;
        }
        int f = n == 0 ? (resp_finish(r) ? -1 : 1) : resp_feed(r, chunk, (size_t)n);
        if (f < 0) {
            fprintf(stderr, "error: bad or oversized response from docker to %s %s\n", method, path);
            goto out;
        }
        if (f == 1) break;
    }
    rc = 0;
out:
    close(fd);
    return rc;
}

/* ---------- a small strict JSON scanner ---------- */
struct js {
    const char *p, *e;
    int depth;
};

static void js_ws(struct js *j) {
    while (j->p < j->e && (*j->p == ' ' || *j->p == '\t' || *j->p == '\n' || *j->p == '\r')) j->p++;
}

static int js_lit(struct js *j, const char *s) {
    size_t n = strlen(s);
    if ((size_t)(j->e - j->p) < n || memcmp(j->p, s, n)) return -1;
    j->p += n;
    return 0;
}

static int js_hex4(struct js *j, unsigned *v) {
    if (j->e - j->p < 4) return -1;
    *v = 0;
    for (int i = 0, d; i < 4; i++) {
        if ((d = hexval(*j->p++)) < 0) return -1;
        *v = *v * 16 + (unsigned)d;
    }
    return 0;
}

/* decodes a string at j->p into out (cap bytes incl. NUL; out may be NULL); returns the full decoded length, or -1.
 * A result longer than cap - 1 is cut in out; callers compare the length. */
static long js_str(struct js *j, char *out, size_t cap) {
    size_t n = 0;
#define PUT(b) do { if (out && n + 1 < cap) out[n] = (char)(b); n++; } while (0)
    if (j->p >= j->e || *j->p != '"') return -1;
    j->p++;
    for (;;) {
        if (j->p >= j->e) return -1;
        unsigned char c = (unsigned char)*j->p++;
        if (c == '"') break;
        if (c < 0x20) return -1;
        if (c != '\\') {
            PUT(c);
            continue;
        }
        static const char esc[] = "\"\\/bfnrt", val[] = "\"\\/\b\f\n\r\t";
        const char *k = j->p < j->e && *j->p ? strchr(esc, *j->p) : NULL;
        unsigned cp;
        if (k) {
            j->p++;
            PUT(val[k - esc]);
            continue;
        }
        if (j->p >= j->e || *j->p++ != 'u' || js_hex4(j, &cp)) return -1;
        if (cp >= 0xDC00 && cp <= 0xDFFF) return -1;
        if (cp >= 0xD800 && cp <= 0xDBFF) {
            unsigned lo;
            if (js_lit(j, "\\u") || js_hex4(j, &lo) || lo < 0xDC00 || lo > 0xDFFF) return -1;
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
        }
        if (cp < 0x80) PUT(cp);
        else if (cp < 0x800) { PUT(0xC0 | cp >> 6); PUT(0x80 | (cp & 0x3F)); }
        else if (cp < 0x10000) { PUT(0xE0 | cp >> 12); PUT(0x80 | (cp >> 6 & 0x3F)); PUT(0x80 | (cp & 0x3F)); }
        else { PUT(0xF0 | cp >> 18); PUT(0x80 | (cp >> 12 & 0x3F)); PUT(0x80 | (cp >> 6 & 0x3F)); PUT(0x80 | (cp & 0x3F)); }
    }
    if (out && cap) out[n < cap ? n : cap - 1] = 0;
#undef PUT
    return n > (size_t)MAX_BODY ? -1 : (long)n;
}

/* a number; *is_int says it was a plain integer that fits a long long (its value in *iv) */
static int js_num(struct js *j, long long *iv, int *is_int) {
    int neg = 0, ok = 1;
    unsigned long long v = 0;
    if (j->p < j->e && *j->p == '-') neg = 1, j->p++;
    if (j->p >= j->e || *j->p < '0' || *j->p > '9') return -1;
    if (*j->p == '0') j->p++;
    else
        for (; j->p < j->e && *j->p >= '0' && *j->p <= '9'; j->p++) {
            if (v > (unsigned long long)9e17) ok = 0;
            v = v * 10 + (unsigned)(*j->p - '0');
        }
    if (j->p < j->e && *j->p == '.') {
        ok = 0;
        if (++j->p >= j->e || *j->p < '0' || *j->p > '9') return -1;
        while (j->p < j->e && *j->p >= '0' && *j->p <= '9') j->p++;
    }
    if (j->p < j->e && (*j->p == 'e' || *j->p == 'E')) {
        ok = 0;
        if (++j->p < j->e && (*j->p == '+' || *j->p == '-')) j->p++;
        if (j->p >= j->e || *j->p < '0' || *j->p > '9') return -1;
        while (j->p < j->e && *j->p >= '0' && *j->p <= '9') j->p++;
    }
    if (iv) *iv = !ok ? 0 : neg ? -(long long)v : (long long)v;
    if (is_int) *is_int = ok;
    return 0;
}

static int js_skip(struct js *j);

/* iterates a container: call with j->p at '{' or '['; *first must start at 1. Returns 1 with j->p at the next value
 * (after the key and ':' for objects, the key decoded into key), 0 at the end, -1 on error. */
static int js_next(struct js *j, char open, int *first, char *key, size_t kcap, long *klen) {
    js_ws(j);
    if (*first) {
        if (j->p >= j->e || *j->p != open || ++j->depth > MAX_DEPTH) return -1;
        j->p++;
        js_ws(j);
    }
    if (j->p < j->e && *j->p == (open == '{' ? '}' : ']')) {
        j->p++, j->depth--;
        return 0;
    }
    if (!*first) {
        if (j->p >= j->e || *j->p != ',') return -1;
        j->p++;
        js_ws(j);
    }
    *first = 0;
    if (open == '{') {
        if ((*klen = js_str(j, key, kcap)) < 0) return -1;
        js_ws(j);
        if (j->p >= j->e || *j->p != ':') return -1;
        j->p++;
    }
    js_ws(j);
    return 1;
}

static int js_skip(struct js *j) {
    js_ws(j);
    if (j->p >= j->e) return -1;
    int first = 1, r;
    long kl;
    switch (*j->p) {
    case '{':
    case '[': {
        char open = *j->p;
        while ((r = js_next(j, open, &first, NULL, 0, &kl)) == 1)
            if (js_skip(j)) return -1;
        return r;
    }
    case '"': return js_str(j, NULL, 0) < 0 ? -1 : 0;
    case 't': return js_lit(j, "true");
    case 'f': return js_lit(j, "false");
    case 'n': return js_lit(j, "null");
    default: return js_num(j, NULL, NULL);
    }
}

/* ---------- one listed container ---------- */
struct container {
    char id[72], state[16];
    long id_len;
    long long created;
    int has_created;
    char session[MAX_SESSION + 2], expires[24], lease[24];
    long session_len, expires_len, lease_len; /* -1 = label absent */
};

static int key_is(const char *k, long kl, const char *want) {
    return kl == (long)strlen(want) && !memcmp(k, want, (size_t)kl);
}

/* a string value into dst, or skips any other value (length -1); -1 on malformed JSON */
static int take_str(struct js *j, char *dst, size_t cap, long *len) {
    js_ws(j);
    if (j->p < j->e && *j->p == '"') return (*len = js_str(j, dst, cap)) < 0 ? -1 : 0;
    *len = -1;
    return js_skip(j);
}

static int parse_labels(struct js *j, struct container *c) {
    js_ws(j);
    if (j->p < j->e && *j->p == 'n') return js_lit(j, "null");
    char k[64];
    long kl;
    int first = 1, r;
    while ((r = js_next(j, '{', &first, k, sizeof k, &kl)) == 1) {
        int e = key_is(k, kl, g_session_label)             ? take_str(j, c->session, sizeof c->session, &c->session_len)
                : key_is(k, kl, "dev.sandbox.expires-at")    ? take_str(j, c->expires, sizeof c->expires, &c->expires_len)
                : key_is(k, kl, "dev.sandbox.lease-seconds") ? take_str(j, c->lease, sizeof c->lease, &c->lease_len)
                                                             : js_skip(j);
        if (e) return -1;
    }
    return r;
}

/* parses the list into *out (malloc'd, *n entries; *more set when entries past MAX_CONTAINERS were dropped) */
static int parse_list(const char *body, size_t len, struct container **out, size_t *n, int *more) {
    struct js j = {body, body + len, 0};
    int first = 1, r;
    long kl;
    size_t cap = 0;
    *out = NULL, *n = 0, *more = 0;
    while ((r = js_next(&j, '[', &first, NULL, 0, &kl)) == 1) {
        struct container c = {.id_len = -1, .session_len = -1, .expires_len = -1, .lease_len = -1};
        char k[32];
        int f2 = 1, r2;
        long long iv;
        int is_int;
        while ((r2 = js_next(&j, '{', &f2, k, sizeof k, &kl)) == 1) {
            js_ws(&j);
            long sl;
            int e = 0;
            if (key_is(k, kl, "Id")) e = take_str(&j, c.id, sizeof c.id, &c.id_len);
            else if (key_is(k, kl, "State")) {
                e = take_str(&j, c.state, sizeof c.state, &sl);
                if (sl < 0 || sl >= (long)sizeof c.state) c.state[0] = 0;
            } else if (key_is(k, kl, "Created") && j.p < j.e && (*j.p == '-' || (*j.p >= '0' && *j.p <= '9'))) {
                e = js_num(&j, &iv, &is_int);
                c.created = iv, c.has_created = is_int;
            } else if (key_is(k, kl, "Labels")) e = parse_labels(&j, &c);
            else e = js_skip(&j);
            if (e) goto bad;
        }
        if (r2 < 0) goto bad;
        if (*n == MAX_CONTAINERS) {
            *more = 1;
            continue;
        }
        if (*n == cap) {
            cap = cap ? cap * 2 : 64;
            struct container *q = realloc(*out, cap * sizeof *q);
            if (!q) goto bad;
            *out = q;
        }
        (*out)[(*n)++] = c;
    }
    js_ws(&j);
    if (r == 0 && j.p == j.e) return 0;
bad:
    free(*out);
    *out = NULL, *n = 0;
    return -1;
}

/* ---------- the decision ---------- */
enum { KEEP, R_DEADLINE, R_LEASE, R_EXITED, R_NEVER_STARTED };
/* A state file that does not parse and is younger than this is taken as a write under way. */
#define WRITE_SETTLE_S 10

static const char *const REASON[] = {"keep", "deadline", "lease", "exited", "never-started"};

/* [A-Za-z0-9][A-Za-z0-9_.-]{0,127}, with len the decoded length (a NUL inside fails) */
static int valid_name(const char *s, long len) {
    if (len < 1 || len > MAX_SESSION) return 0;
    for (long i = 0; i < len; i++) {
        char ch = s[i];
        int alnum = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9');
        if (!alnum && (i == 0 || (ch != '_' && ch != '.' && ch != '-'))) return 0;
    }
    return 1;
}

static int valid_session(const struct container *c) {
    return valid_name(c->session, c->session_len);
}

static int valid_id(const struct container *c) {
    if (c->id_len != 64) return 0;
    for (int i = 0; i < 64; i++)
        if (!((c->id[i] >= '0' && c->id[i] <= '9') || (c->id[i] >= 'a' && c->id[i] <= 'f'))) return 0;
    return 1;
}

/* digits, then (when trailing_ws) optional whitespace; 0 and the value, or -1 */
static int parse_epoch(const char *s, size_t n, int trailing_ws, long long *v) {
    size_t i = 0;
    *v = 0;
    for (; i < n && s[i] >= '0' && s[i] <= '9'; i++) {
        if (*v > 922337203685477580LL) return -1;
        *v = *v * 10 + (s[i] - '0');
    }
    if (i == 0 || i > 18) return -1;
    for (; trailing_ws && i < n && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r'); i++) {}
    return i == n ? 0 : -1;
}

/* <state>/<sub>/<session>: 1 with the value when it exists, is a regular file (not a symlink) and parses; else 0 */
/* 1: parsed into *v; 0: absent (or not a regular file); -1: a regular file that does not parse, *mtime set.
 * Clients write these files through Docker's archive API, which truncates and then writes: a reader can see one
 * empty or cut short, so the caller treats a recent unparsable file as a write under way. */
static int read_state(const char *state, const char *sub, const char *session, long long *v, long long *mtime) {
    char path[4096], d[65];
    if (snprintf(path, sizeof path, "%s/%s/%s", state, sub, session) >= (int)sizeof path) return 0;
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) return 0;
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return 0;
    }
    ssize_t n = read(fd, d, sizeof d);
    close(fd);
    if (n > 0 && n < (ssize_t)sizeof d && parse_epoch(d, (size_t)n, 1, v) == 0) return 1;
    *mtime = (long long)st.st_mtime;
    return -1;
}

/* a label's value as a number: digits only, and whole in its buffer (labels are cut at 23 bytes) */
static int label_number(const char *s, long len, long long *v) {
    return len > 0 && len < 24 ? parse_epoch(s, (size_t)len, 0, v) : -1;
}

/* what to do with a container whose Id and session are valid */
static int decide(const struct container *c, const char *state, long long now) {
    long long deadline = 0, v, mtime = 0;
    int has_deadline = 0;
    int found = read_state(state, "deadlines", c->session, &v, &mtime);
    if (found < 0 && now - mtime < WRITE_SETTLE_S) return KEEP; /* being written: decide next round */
    if (found > 0) has_deadline = v != 0, deadline = v;
    else if (label_number(c->expires, c->expires_len, &v) == 0) has_deadline = 1, deadline = v; /* "never": none */
    if (has_deadline && now >= deadline) return R_DEADLINE;
    long long secs;
    if (label_number(c->lease, c->lease_len, &secs) == 0 && secs > 0) {
        long long expiry;
        int known = read_state(state, "leases", c->session, &expiry, &mtime);
        if (known < 0 && now - mtime < WRITE_SETTLE_S) return KEEP;
        /* an old file that does not parse was a renewal at its mtime */
        if (known < 0) known = !__builtin_add_overflow(mtime, secs, &expiry);
        if (!known && c->has_created && !__builtin_add_overflow(c->created, secs, &expiry)) known = 1;
        if (known && now >= expiry) return R_LEASE;
    }
    if (!strcmp(c->state, "exited") || !strcmp(c->state, "dead")) return R_EXITED;
    if (!strcmp(c->state, "created") && c->has_created && c->created <= now - NEVER_STARTED_S) return R_NEVER_STARTED;
    return KEEP;
}

/* ---------- garbage in the state store ---------- */
static int cmp_str(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* sessions: sorted array of listed session ids */
static void collect_garbage(const char *state, char **sessions, size_t ns, long long now) {
    static const char *const subs[] = {"deadlines", "leases"};
    for (int s = 0; s < 2; s++) {
        char path[4096];
        if (snprintf(path, sizeof path, "%s/%s", state, subs[s]) >= (int)sizeof path) return;
        DIR *d = opendir(path);
        if (!d) continue;
        struct dirent *e;
        while ((e = readdir(d)) != NULL) {
            const char *name = e->d_name;
            struct stat st;
            if (!strcmp(name, ".") || !strcmp(name, "..")) continue;
            if (bsearch(&name, sessions, ns, sizeof *sessions, cmp_str)) continue;
            if (fstatat(dirfd(d), name, &st, AT_SYMLINK_NOFOLLOW) || S_ISDIR(st.st_mode)) continue;
            if (now - (long long)st.st_mtime <= GARBAGE_AGE_S) continue;
            if (unlinkat(dirfd(d), name, 0) == 0)
                printf("collected %s/%s\n", subs[s], valid_name(name, (long)strlen(name)) ? name : "(invalid name)");
        }
        closedir(d);
    }
}

/* ---------- one round ---------- */
struct opts {
    const char *socket, *state;
    long interval_ms;
    int once;
    long idle_exit_s;      /* exit after this long without any session; 0: never */
    char list_path[1024];
};

/* How many sessions the last round listed; -1 when the round failed. */
static long g_last_sessions = -1;

/* Ids skipped for a bad session label, logged once each (a small ring) */
static char g_skipped[256][65];
static unsigned g_skipped_next;

static void log_skip_once(const struct container *c) {
    for (unsigned i = 0; i < 256; i++)
        if (!strcmp(g_skipped[i], c->id)) return;
    memcpy(g_skipped[g_skipped_next++ % 256], c->id, 65); /* a valid Id: 64 hex and a NUL */
    printf("skipped %.12s (invalid session label)\n", c->id);
}

static int reap_round(const struct opts *o) {
    struct resp *r = calloc(1, sizeof *r);
    struct container *cs = NULL;
    char **sessions = NULL;
    size_t n = 0, ns = 0;
    int more = 0, rc = 1;
    if (!r) return 1;
    if (docker_request(o->socket, "GET", o->list_path, r)) goto out;
    if (r->status != 200) {
        fprintf(stderr, "error: docker answered %d to the container list\n", r->status);
        goto out;
    }
    if (parse_list(r->body.p ? r->body.p : "", r->body.len, &cs, &n, &more)) {
        fprintf(stderr, "error: malformed container list from docker\n");
        goto out;
    }
    if (more) fprintf(stderr, "error: more than %d containers listed; the rest wait for a later round\n", MAX_CONTAINERS);
    sessions = calloc(n ? n : 1, sizeof *sessions);
    if (!sessions) goto out;
    rc = 0;
    long long now = (long long)time(NULL);
    for (size_t i = 0; i < n && !g_stop; i++) {
        struct container *c = &cs[i];
        if (!valid_id(c)) continue;
        if (!valid_session(c)) {
            log_skip_once(c);
            continue;
        }
        sessions[ns++] = c->session;
        int why = decide(c, o->state, now);
        if (why == KEEP) continue;
        char path[128];
        if (!strcmp(c->state, "paused")) {
            /* a paused session: the daemon cannot kill a paused gVisor sandbox (it reports a zombie), so unpause it
             * first; whatever the answer, the removal below is what counts */
            snprintf(path, sizeof path, "/v1.41/containers/%s/unpause", c->id);
            struct resp *u = calloc(1, sizeof *u);
            if (u && docker_request(o->socket, "POST", path, u) == 0 && u->status != 204)
                fprintf(stderr, "error: docker answered %d to unpausing %s\n", u->status, c->session);
            if (u) free(u->body.p);
            free(u);
        }
        snprintf(path, sizeof path, "/v1.41/containers/%s?force=1&v=1", c->id);
        struct resp *d = calloc(1, sizeof *d);
        if (!d || docker_request(o->socket, "DELETE", path, d)) rc = 1;
        else if (d->status == 204 || d->status == 404 || d->status == 409) printf("removed %s (%s)\n", c->session, REASON[why]);
        else fprintf(stderr, "error: docker answered %d to removing %s\n", d->status, c->session), rc = 1;
        if (d) free(d->body.p);
        free(d);
    }
    g_last_sessions = more ? (long)ns + 1 : (long)ns;
    if (!more && !g_stop) {
        qsort(sessions, ns, sizeof *sessions, cmp_str);
        collect_garbage(o->state, sessions, ns, now);
    }
out:
    free(sessions);
    free(cs);
    free(r->body.p);
    free(r);
    return rc;
}

#ifndef REAPER_TEST
static void on_signal(int sig) {
    (void)sig;
    g_stop = 1;
}

static int usage(const char *why) {
    fprintf(stderr, "sandbox-reaper: %s\nusage: sandbox-reaper [--socket PATH] [--state DIR] [--interval-ms N] [--once]"
                    " [--filter-label KEY=VALUE] [--session-label KEY] [--idle-exit-seconds N]\n", why);
    return 2;
}

int main(int argc, char **argv) {
    struct opts o = {.socket = "/var/run/docker.sock", .state = "/state", .interval_ms = 1000};
    const char *filter = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--once")) { o.once = 1; continue; }
        if (!v) return usage("missing value or unknown option");
        i++;
        if (!strcmp(a, "--socket")) o.socket = v;
        else if (!strcmp(a, "--state")) o.state = v;
        else if (!strcmp(a, "--filter-label")) filter = v;
        else if (!strcmp(a, "--session-label")) {
            if (strlen(v) > 63 || !valid_name(v, (long)strlen(v))) {
                char why[160];
                snprintf(why, sizeof why, "--session-label must match [A-Za-z0-9][A-Za-z0-9_.-]{0,62}, not '%.64s%s'", v,
                         strlen(v) > 64 ? "..." : "");
                return usage(why);
            }
            g_session_label = v;
        }
        else if (!strcmp(a, "--interval-ms")) {
            long long ms;
            if (parse_epoch(v, strlen(v), 0, &ms) || ms < 1 || ms > 86400000) return usage("--interval-ms must be 1..86400000");
            o.interval_ms = (long)ms;
        } else if (!strcmp(a, "--idle-exit-seconds")) {
            long long s;
            if (parse_epoch(v, strlen(v), 0, &s) || s < 0 || s > 31536000) return usage("--idle-exit-seconds must be 0..31536000");
            o.idle_exit_s = (long)s;
        } else return usage("unknown option");
    }
    /* the filter JSON, URL-encoded; a filter label may hold only [A-Za-z0-9_.=-] */
    char extra[512] = "";
    if (filter) {
        if (strlen(filter) > 150 || strspn(filter, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.=-") != strlen(filter))
            return usage("--filter-label must be KEY=VALUE of [A-Za-z0-9_.=-], at most 150 characters");
        size_t k = 0;
        k += (size_t)snprintf(extra, sizeof extra, "%%2C%%22");
        for (const char *p = filter; *p; p++)
            k += (size_t)snprintf(extra + k, sizeof extra - k, *p == '=' ? "%%3D" : "%c", *p);
        snprintf(extra + k, sizeof extra - k, "%%22");
    }
    snprintf(o.list_path, sizeof o.list_path,
             "/v1.41/containers/json?all=1&filters=%%7B%%22label%%22%%3A%%5B%%22%s%%22%s%%5D%%7D", g_session_label, extra);
    setvbuf(stdout, NULL, _IOLBF, 0);
    struct sigaction sa = {.sa_handler = on_signal};
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    sigset_t stop, open;
    sigemptyset(&stop);
    sigaddset(&stop, SIGTERM);
    sigaddset(&stop, SIGINT);
    struct timespec busy;
    clock_gettime(CLOCK_MONOTONIC, &busy);
    for (;;) {
        int rc = reap_round(&o);
        if (o.once) return rc;
        /* nothing to watch for a while: exit; the next provider that makes a session starts a reaper again */
        struct timespec t;
        clock_gettime(CLOCK_MONOTONIC, &t);
        if (g_last_sessions != 0) busy = t;
        else if (o.idle_exit_s > 0 && t.tv_sec - busy.tv_sec >= o.idle_exit_s) {
            printf("no sessions for %ld s: exiting\n", o.idle_exit_s);
            return 0;
        }
        /* the signals stay blocked between the check and the wait, which unblocks them atomically */
        sigprocmask(SIG_BLOCK, &stop, &open);
        struct timespec ts = {o.interval_ms / 1000, (o.interval_ms % 1000) * 1000000L};
        if (!g_stop) ppoll(NULL, 0, &ts, &open);
        sigprocmask(SIG_SETMASK, &open, NULL);
        if (g_stop) return 0;
    }
}
#endif
