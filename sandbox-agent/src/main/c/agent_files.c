/*
 * agent_files.c: the file requests of PROTOCOL.md over agent_fs.c, which does the file system's part: STAT, MKDIR,
 * REMOVE, MOVE, SYMLINK and CHMOD answered at once; READ as DATA frames within credit; WRITE taking DATA into a
 * temporary file renamed over the target at EOF; LIST as ENTRY frames within credit.
 */
#include "agent.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

/* STAT, MKDIR, REMOVE, MOVE, SYMLINK, CHMOD: answered at once. */
void h_fs_simple(struct req *q) {
    struct rd *r = &q->r;
    uint8_t type = q->type;
    int nul = 0, target_nul = 0;
    char *a = req_cstr(q, &nul), *b = NULL;
    uint32_t mode = 0;
    uint8_t flag = 0;
    if (type == T_MKDIR) {
        mode = rd_u32(r);
        flag = rd_u8(r);
    } else if (type == T_CHMOD) {
        mode = rd_u32(r);
    } else if (type == T_SYMLINK && a) {
        b = req_cstr(q, &target_nul);
    } else if (type == T_REMOVE) {
        flag = rd_u8(r);
    } else if (type == T_MOVE && a) {
        b = req_cstr(q, &nul);
    }
    if (!req_begin(q, 0, NULL)) return;
    if (!req_path(q, a, nul) || (b && type != T_SYMLINK && !req_path(q, b, nul))) return;
    if (type == T_SYMLINK && (target_nul || !b[0])) { /* a link's target may be relative, never empty or NUL-bearing */
        req_fail(q, EINVAL, "symlink target must be non-empty and without NUL bytes: %.200s", a);
        return;
    }
    struct fs_info info = {0};
    int rc = type == T_STAT ? fs_stat(a, &info)
             : type == T_MKDIR ? fs_mkdir(a, mode, flag != 0)
             : type == T_REMOVE ? fs_remove(a, flag != 0)
             : type == T_SYMLINK ? fs_symlink(b, a)
             : type == T_CHMOD ? fs_chmod(a, mode)
                                : fs_move(a, b);
    if (rc < 0) {
        req_fail(q, (uint32_t)-rc, "%s: %s", a, strerror(-rc));
    } else if (type == T_STAT) {
        struct fw f = fw_begin(q->c, A_OK, q->id, info_size(&info));
        fw_info(&f, &info);
        fw_end(&f);
        fs_info_free(&info);
    } else {
        send_empty(q->c, A_OK, q->id);
    }
}

void h_read(struct req *q) {
    int nul = 0;
    char *path = req_cstr(q, &nul);
    uint64_t off = rd_u64(&q->r), len = rd_u64(&q->r);
    uint32_t credit = rd_u32(&q->r);
    if (!req_begin(q, 1, NULL) || !req_path(q, path, nul)) return;
    int fd = fs_open_read(path, off);
    if (fd < 0) {
        req_fail(q, (uint32_t)-fd, "%s: %s", path, strerror(-fd));
        return;
    }
    struct stream *s = stream_new(q->c, q->id, ST_READ);
    s->fd = fd;
    s->remaining = len;
    s->credit = credit;
    task_ready(&s->task);
}

void read_run(struct stream *s) {
    struct conn *c = s->c;
    for (int k = 0; k < BURST; k++) {
        if (s->remaining == 0) {
            send_empty(c, A_END, s->id);
            stream_drop(s);
            return;
        }
        if (s->credit == 0 || !room(c)) return;
        uint64_t want = s->remaining;
        if (want > s->credit) want = s->credit;
        if (want > CHUNK) want = CHUNK;
        uint8_t *o = out_reserve(c, 9 + want);
        ssize_t n = read(s->fd, o + 9, (size_t)want);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) {
            send_error(c, s->id, (uint32_t)errno, "read: %s", strerror(errno));
            stream_drop(s);
            return;
        }
        if (n == 0) {
            s->remaining = 0;
            continue;
        }
        put32(o, (uint32_t)n);
        o[4] = A_DATA;
        put32(o + 5, s->id);
        c->ob_tail += 9 + (size_t)n;
        mark_dirty(c);
        s->credit -= (uint64_t)n;
        s->remaining -= (uint64_t)n;
    }
    task_ready(&s->task);
}

void h_write(struct req *q) {
    int nul = 0;
    char *path = req_cstr(q, &nul);
    uint32_t mode = rd_u32(&q->r), flags = rd_u32(&q->r);
    rd_u32(&q->r); /* reserved */
    if (!req_begin(q, 1, flags & ~1u ? "unknown flags" : NULL) || !req_path(q, path, nul)) return;
    struct fs_write *w = NULL;
    int rc = fs_write_begin(path, mode, flags & 1, &w);
    if (rc < 0) {
        req_fail(q, (uint32_t)-rc, "%s: %s", path, strerror(-rc));
        return;
    }
    struct stream *s = stream_new(q->c, q->id, ST_WRITE);
    s->w = w;
    s->data_credit = WRITE_CREDIT;
    struct fw f = fw_begin(q->c, A_READY, q->id, 4);
    fw_u32(&f, WRITE_CREDIT);
    fw_end(&f);
}

/* DATA on a WRITE stream (within its credit): into the temporary file at once, credited back. */
void write_data(struct stream *s, const uint8_t *b, size_t n) {
    int rc = fs_write_data(s->w, b, n);
    if (rc < 0) {
        send_error(s->c, s->id, (uint32_t)-rc, "write: %s", strerror(-rc));
        stream_drop(s);
        return;
    }
    s->data_credit += n;
    send_credit(s->c, s->id, 0, (uint32_t)n);
}

/* EOF on a WRITE stream: the file replaces its target and OK carries its info. */
void write_commit(struct stream *s) {
    struct fs_info info = {0};
    int rc = fs_write_commit(s->w, &info);
    s->w = NULL;
    if (rc < 0) {
        send_error(s->c, s->id, (uint32_t)-rc, "write: %s", strerror(-rc));
    } else {
        struct fw f = fw_begin(s->c, A_OK, s->id, info_size(&info));
        fw_info(&f, &info);
        fw_end(&f);
        fs_info_free(&info);
    }
    stream_drop(s);
}

void h_list(struct req *q) {
    int nul = 0;
    char *path = req_cstr(q, &nul);
    uint32_t depth = rd_u32(&q->r), credit = rd_u32(&q->r);
    if (!req_begin(q, 1, NULL) || !req_path(q, path, nul)) return;
    if (depth == 0) depth = 1;
    if (depth > 64) depth = 64;
    struct fs_list *l = NULL;
    int rc = fs_list_open(path, depth, &l);
    if (rc < 0) {
        req_fail(q, (uint32_t)-rc, "%s: %s", path, strerror(-rc));
        return;
    }
    struct stream *s = stream_new(q->c, q->id, ST_LIST);
    s->list = l;
    s->credit = credit;
    task_ready(&s->task);
}

void list_run(struct stream *s) {
    struct conn *c = s->c;
    for (int k = 0; k < BURST; k++) {
        if (!s->has_pend) {
            int rc = fs_list_next(s->list, &s->pend);
            if (rc == 0) {
                send_empty(c, A_END, s->id);
                stream_drop(s);
                return;
            }
            if (rc < 0) {
                send_error(c, s->id, (uint32_t)-rc, "list: %s", strerror(-rc));
                stream_drop(s);
                return;
            }
            s->has_pend = 1;
        }
        size_t n = info_size(&s->pend);
        if (n > CHUNK) { /* cannot be framed (paths are far shorter): skipped rather than stalling the listing */
            fs_info_free(&s->pend);
            s->has_pend = 0;
            continue;
        }
        if (s->credit < n || !room(c)) return;
        struct fw f = fw_begin(c, A_ENTRY, s->id, n);
        fw_info(&f, &s->pend);
        fw_end(&f);
        fs_info_free(&s->pend);
        s->has_pend = 0;
        s->credit -= n;
    }
    task_ready(&s->task);
}
