/*
 * agent_watch.c: WATCH over agent_fs.c's inotify watches: the watch's fd in the epoll set (level-triggered), its
 * events queued by agent_fs.c (bounded, with an overflow event) and sent as EVENT frames within credit.
 */
#include "agent.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>

void h_watch(struct req *q) {
    int nul = 0;
    char *path = req_cstr(q, &nul);
    uint8_t rec = rd_u8(&q->r);
    uint32_t credit = rd_u32(&q->r);
    if (!req_begin(q, 1, NULL) || !req_path(q, path, nul)) return;
    struct fs_watch *w = NULL;
    int rc = fs_watch_open(path, rec != 0, &w);
    if (rc < 0) {
        req_fail(q, (uint32_t)-rc, "%s: %s", path, strerror(-rc));
        return;
    }
    struct stream *s = stream_new(q->c, q->id, ST_WATCH);
    s->watch = w;
    s->credit = credit;
    s->wtag.kind = EV_WATCH;
    s->wtag.obj = s;
    if (ep_add(fs_watch_fd(w), EPOLLIN, &s->wtag) < 0) { /* level-triggered: fs_watch_read drains into its queue */
        send_error(q->c, q->id, (uint32_t)errno, "epoll: %s", strerror(errno));
        fs_watch_close(w);
        s->watch = NULL;
        stream_drop(s);
        return;
    }
    struct fw f = fw_begin(q->c, A_READY, q->id, 4);
    fw_u32(&f, 0);
    fw_end(&f);
}

void watch_run(struct stream *s) {
    struct conn *c = s->c;
    for (int k = 0; k < BURST * 4; k++) {
        if (!s->ev_path && fs_watch_next(s->watch, &s->ev_kind, &s->ev_path) != 1) return;
        size_t n = 5 + strlen(s->ev_path);
        if (n > CHUNK) n = CHUNK; /* paths are far shorter; never build a frame beyond the limit */
        if (s->credit < n || !room(c)) return;
        struct fw f = fw_begin(c, A_EVENT, s->id, n);
        fw_u8(&f, s->ev_kind);
        fw_str(&f, s->ev_path, n - 5);
        fw_end(&f);
        free(s->ev_path);
        s->ev_path = NULL;
        s->credit -= n;
    }
    task_ready(&s->task);
}

/* The watch's inotify fd is readable: its events go into the watch's queue, to leave as EVENT frames within credit. */
void watch_event(struct stream *s) {
    int rc = fs_watch_read(s->watch);
    if (rc < 0) {
        send_error(s->c, s->id, (uint32_t)-rc, "watch: %s", strerror(-rc));
        stream_drop(s);
        return;
    }
    task_ready(&s->task);
}
