/*
 * test_fs_watch.c: unit tests of agent_fs.c's watches (fs_watch_*), on the real file system under test_fs.c's
 * directory; test_fs.c's main runs them after the tests of the operations.
 *
 * Watch tests never sleep: after the operations under test they create a FIFO (one IN_CREATE, nothing else) as a
 * barrier and collect events until its CREATED arrives; inotify keeps the order of one instance, so everything the
 * operations caused is in hand by then and "exactly these events" can be asserted.
 */
#include "agent_fs.h"
#include "test_fs.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

struct ev {
    uint8_t kind;
    char path[PATH_MAX];
};

static int sentinel_no;

/* Makes a barrier FIFO in dir and collects the events before its CREATED into evs (at most cap); the count, or -1 on
 * a timeout (5 s without the barrier). */
static int collect(struct fs_watch *w, const char *dir, struct ev *evs, int cap) {
    char sentinel[PATH_MAX];
    fmt(sentinel, sizeof sentinel, "%s/sentinel-%d", dir, sentinel_no++);
    if (mkfifo(sentinel, 0600) < 0) {
        perror(sentinel);
        return -1;
    }
    int n = 0;
    for (int rounds = 0; rounds < 10000; rounds++) {
        uint8_t kind;
        char *path;
        while (fs_watch_next(w, &kind, &path) == 1) {
            int done = kind == FS_EV_CREATED && !strcmp(path, sentinel);
            if (!done && n < cap) {
                evs[n].kind = kind;
                fmt(evs[n].path, PATH_MAX, "%s", path);
                n++;
            }
            free(path);
            if (done) {
                unlink(sentinel); /* its DELETED is dropped by the next collect's caller via skip_sentinels */
                return n;
            }
        }
        struct pollfd p = {.fd = fs_watch_fd(w), .events = POLLIN};
        if (poll(&p, 1, 5000) <= 0) {
            fprintf(stderr, "no barrier event for %s in 5 s\n", sentinel);
            return -1;
        }
        int rc = fs_watch_read(w);
        if (rc < 0) {
            fprintf(stderr, "fs_watch_read: %s\n", strerror(-rc));
            return -1;
        }
    }
    return -1;
}

/* The events that are not about a sentinel, in place; their count. */
static int real(struct ev *evs, int n) {
    int j = 0;
    for (int k = 0; k < n; k++)
        if (!strstr(evs[k].path, "/sentinel-")) evs[j++] = evs[k];
    return j;
}

static int collect_real(struct fs_watch *w, const char *dir, struct ev *evs, int cap) {
    int n = collect(w, dir, evs, cap);
    return n < 0 ? n : real(evs, n);
}

static int has_ev(const struct ev *evs, int n, uint8_t kind, const char *path) {
    int c = 0;
    for (int k = 0; k < n; k++) c += evs[k].kind == kind && !strcmp(evs[k].path, path);
    return c;
}

static void dump(const char *what, const struct ev *evs, int n) {
    fprintf(stderr, "  %s: %d events\n", what, n);
    for (int k = 0; k < n; k++) fprintf(stderr, "    %d %s\n", evs[k].kind, evs[k].path);
}

static struct ev evs[FS_WATCH_QUEUE + 64];
#define EVCAP ((int)(sizeof evs / sizeof evs[0]))

void test_watch_basic(void) {
    fs_mkdir(P("wa"), 0755, 1);
    put(P("wa/existing"), "e", 0644);
    mkdir(P("wa/sub"), 0755);
    struct fs_watch *w;
    CHECK_EQ(fs_watch_open(P("wa"), 0, &w), 0);
    CHECK(fs_watch_fd(w) >= 0);
    CHECK(fcntl(fs_watch_fd(w), F_GETFL) & O_NONBLOCK);
    CHECK(fcntl(fs_watch_fd(w), F_GETFD) & FD_CLOEXEC);
    char dir[PATH_MAX];
    fmt(dir, sizeof dir, "%s", P("wa"));
    int n = collect_real(w, dir, evs, EVCAP);
    CHECK_EQ(n, 0);

    /* a new file written by a program: created, then modified once on close, however many writes */
    int fd = open(P("wa/new"), O_WRONLY | O_CREAT, 0644);
    for (int k = 0; k < 10; k++) CHECK_EQ(write(fd, "x", 1), 1);
    close(fd);
    n = collect_real(w, dir, evs, EVCAP);
    CHECK_EQ(n, 2);
    CHECK(n >= 2 && evs[0].kind == FS_EV_CREATED && !strcmp(evs[0].path, P("wa/new")));
    CHECK(n >= 2 && evs[1].kind == FS_EV_MODIFIED && !strcmp(evs[1].path, P("wa/new")));

    /* an existing file rewritten: one modified; chmod: modified */
    fd = open(P("wa/existing"), O_WRONLY | O_APPEND);
    for (int k = 0; k < 10; k++) CHECK_EQ(write(fd, "y", 1), 1);
    close(fd);
    chmod(P("wa/existing"), 0600);
    n = collect_real(w, dir, evs, EVCAP);
    CHECK_EQ(n, 2);
    CHECK_EQ(has_ev(evs, n, FS_EV_MODIFIED, P("wa/existing")), 2);

    /* delete, move out, move in, a directory created; a file in a subdirectory is not seen without recursive */
    unlink(P("wa/new"));
    rename(P("wa/existing"), P("moved-out"));
    put(P("to-move-in"), "", 0644);
    rename(P("to-move-in"), P("wa/moved-in"));
    mkdir(P("wa/newdir"), 0755);
    put(P("wa/sub/unseen"), "", 0644);
    n = collect_real(w, dir, evs, EVCAP);
    if (n != 4) dump("delete/move", evs, n);
    CHECK_EQ(n, 4);
    CHECK_EQ(has_ev(evs, n, FS_EV_DELETED, P("wa/new")), 1);
    CHECK_EQ(has_ev(evs, n, FS_EV_DELETED, P("wa/existing")), 1);
    CHECK_EQ(has_ev(evs, n, FS_EV_CREATED, P("wa/moved-in")), 1);
    CHECK_EQ(has_ev(evs, n, FS_EV_CREATED, P("wa/newdir")), 1);
    fs_watch_close(w);
    unlink(P("moved-out"));

    CHECK_EQ(fs_watch_open(P("wa/moved-in"), 0, &w), -ENOTDIR);
    CHECK(w == NULL);
    CHECK_EQ(fs_watch_open(P("wa/missing"), 1, &w), -ENOENT);
    fs_watch_close(NULL);
}

void test_watch_recursive(void) {
    fs_mkdir(P("wr/a/b"), 0755, 1);
    put(P("wr/a/b/f0"), "", 0644);
    struct fs_watch *w;
    CHECK_EQ(fs_watch_open(P("wr"), 1, &w), 0);
    char dir[PATH_MAX];
    fmt(dir, sizeof dir, "%s", P("wr"));

    /* a subdirectory that existed at open */
    put(P("wr/a/b/f1"), "", 0644);
    int n = collect_real(w, dir, evs, EVCAP);
    CHECK_EQ(n, 2);
    CHECK_EQ(has_ev(evs, n, FS_EV_CREATED, P("wr/a/b/f1")), 1);
    CHECK_EQ(has_ev(evs, n, FS_EV_MODIFIED, P("wr/a/b/f1")), 1);

    /* a tree created at once (before the watch reads anything): every entry is reported as created */
    fs_mkdir(P("wr/n/x/y"), 0755, 1);
    put(P("wr/n/x/y/quick"), "", 0644);
    n = collect_real(w, dir, evs, EVCAP);
    CHECK(has_ev(evs, n, FS_EV_CREATED, P("wr/n")) == 1);
    CHECK(has_ev(evs, n, FS_EV_CREATED, P("wr/n/x")) >= 1);
    CHECK(has_ev(evs, n, FS_EV_CREATED, P("wr/n/x/y")) >= 1);
    CHECK(has_ev(evs, n, FS_EV_CREATED, P("wr/n/x/y/quick")) >= 1);

    /* and it is watched now */
    put(P("wr/n/x/y/later"), "", 0644);
    n = collect_real(w, dir, evs, EVCAP);
    CHECK_EQ(n, 2);
    CHECK_EQ(has_ev(evs, n, FS_EV_CREATED, P("wr/n/x/y/later")), 1);
    CHECK_EQ(has_ev(evs, n, FS_EV_MODIFIED, P("wr/n/x/y/later")), 1);

    /* a subdirectory renamed inside the tree: events under it carry its new path */
    rename(P("wr/n"), P("wr/renamed"));
    n = collect_real(w, dir, evs, EVCAP);
    CHECK_EQ(has_ev(evs, n, FS_EV_DELETED, P("wr/n")), 1);
    CHECK_EQ(has_ev(evs, n, FS_EV_CREATED, P("wr/renamed")), 1);
    mkfifo(P("wr/renamed/x/y/after-rename"), 0600);
    n = collect_real(w, dir, evs, EVCAP);
    CHECK_EQ(n, 1);
    CHECK_EQ(has_ev(evs, n, FS_EV_CREATED, P("wr/renamed/x/y/after-rename")), 1);

    /* a directory moved in from outside is watched; one moved out is not any more */
    fs_mkdir(P("outside-tree/in"), 0755, 1);
    rename(P("outside-tree"), P("wr/came-in"));
    rename(P("wr/a"), P("went-out"));
    n = collect_real(w, dir, evs, EVCAP);
    CHECK_EQ(has_ev(evs, n, FS_EV_CREATED, P("wr/came-in")), 1);
    CHECK_EQ(has_ev(evs, n, FS_EV_CREATED, P("wr/came-in/in")), 1);
    CHECK_EQ(has_ev(evs, n, FS_EV_DELETED, P("wr/a")), 1);
    mkfifo(P("wr/came-in/in/p"), 0600);
    mkfifo(P("went-out/b/p"), 0600);
    n = collect_real(w, dir, evs, EVCAP);
    if (n != 1) dump("moved in/out", evs, n);
    CHECK_EQ(n, 1);
    CHECK_EQ(has_ev(evs, n, FS_EV_CREATED, P("wr/came-in/in/p")), 1);

    /* a subdirectory deleted: one deleted event for it */
    fs_remove(P("wr/renamed"), 1);
    n = collect_real(w, dir, evs, EVCAP);
    CHECK_EQ(has_ev(evs, n, FS_EV_DELETED, P("wr/renamed")), 1);
    CHECK_EQ(has_ev(evs, n, FS_EV_DELETED, P("wr/renamed/x/y/later")), 1);
    fs_watch_close(w);
    fs_remove(P("went-out"), 1);
}

static void atomic_write(const char *path, const char *content) {
    struct fs_write *wr;
    CHECK_EQ(fs_write_begin(path, 0644, 0, &wr), 0);
    CHECK_EQ(fs_write_data(wr, content, strlen(content)), 0);
    CHECK_EQ(fs_write_commit(wr, NULL), 0);
}

void test_watch_atomic_write(void) {
    fs_mkdir(P("ww/sub"), 0755, 1);
    struct fs_watch *w;
    CHECK_EQ(fs_watch_open(P("ww"), 1, &w), 0);
    char dir[PATH_MAX];
    fmt(dir, sizeof dir, "%s", P("ww"));

    atomic_write(P("ww/t"), "one");
    int n = collect_real(w, dir, evs, EVCAP);
    if (n != 1) dump("write new", evs, n);
    CHECK_EQ(n, 1);
    CHECK_EQ(has_ev(evs, n, FS_EV_CREATED, P("ww/t")), 1);

    atomic_write(P("ww/t"), "two");
    n = collect_real(w, dir, evs, EVCAP);
    if (n != 1) dump("overwrite", evs, n);
    CHECK_EQ(n, 1);
    CHECK_EQ(has_ev(evs, n, FS_EV_MODIFIED, P("ww/t")), 1);

    atomic_write(P("ww/sub/s"), "in a subdirectory");
    n = collect_real(w, dir, evs, EVCAP);
    CHECK_EQ(n, 1);
    CHECK_EQ(has_ev(evs, n, FS_EV_CREATED, P("ww/sub/s")), 1);

    /* the target appears while the data comes: the commit reports an overwrite; and disappears: a creation */
    struct fs_write *wr;
    CHECK_EQ(fs_write_begin(P("ww/race"), 0644, 0, &wr), 0);
    put(P("ww/race"), "someone else", 0644);
    CHECK_EQ(fs_write_commit(wr, NULL), 0);
    CHECK_EQ(fs_write_begin(P("ww/race"), 0644, 0, &wr), 0);
    unlink(P("ww/race"));
    CHECK_EQ(fs_write_commit(wr, NULL), 0);
    n = collect_real(w, dir, evs, EVCAP);
    if (n != 5) dump("races", evs, n);
    CHECK_EQ(n, 5);
    CHECK(n == 5 && evs[0].kind == FS_EV_CREATED && evs[1].kind == FS_EV_MODIFIED); /* the other writer's */
    CHECK(n == 5 && evs[2].kind == FS_EV_MODIFIED && evs[3].kind == FS_EV_DELETED && evs[4].kind == FS_EV_CREATED);

    /* an aborted write shows nothing */
    CHECK_EQ(fs_write_begin(P("ww/aborted"), 0644, 0, &wr), 0);
    CHECK_EQ(fs_write_data(wr, "x", 1), 0);
    fs_write_abort(wr);
    n = collect_real(w, dir, evs, EVCAP);
    CHECK_EQ(n, 0);
    for (int k = 0; k < n; k++) CHECK(!strstr(evs[k].path, FS_TEMP_PREFIX));
    fs_watch_close(w);
}

/* What a walk of a new directory reported is not reported again by its inotify create, but a new file renamed over
 * such a name, or the name deleted and made again, is. */
void test_watch_walk_no_duplicates(void) {
    fs_mkdir(P("wd"), 0755, 1);
    struct fs_watch *w;
    CHECK_EQ(fs_watch_open(P("wd"), 1, &w), 0);
    char dir[PATH_MAX];
    fmt(dir, sizeof dir, "%s", P("wd"));
    fs_mkdir(P("wd/n/m"), 0755, 1); /* all before the watch reads: the walk of n reports m and f */
    put(P("wd/n/m/f"), "", 0644);
    int n = collect_real(w, dir, evs, EVCAP);
    CHECK_EQ(has_ev(evs, n, FS_EV_CREATED, P("wd/n")), 1);
    CHECK_EQ(has_ev(evs, n, FS_EV_CREATED, P("wd/n/m")), 1);
    CHECK_EQ(has_ev(evs, n, FS_EV_CREATED, P("wd/n/m/f")), 1);
    atomic_write(P("wd/n/m/f"), "over"); /* a remembered name, another inode: reported */
    put(P("wd/other"), "", 0644);
    rename(P("wd/other"), P("wd/n/m/f"));
    n = collect_real(w, dir, evs, EVCAP);
    if (has_ev(evs, n, FS_EV_MODIFIED, P("wd/n/m/f")) != 1) dump("over a walked name", evs, n);
    CHECK_EQ(has_ev(evs, n, FS_EV_MODIFIED, P("wd/n/m/f")), 1);
    CHECK_EQ(has_ev(evs, n, FS_EV_CREATED, P("wd/n/m/f")), 1);
    fs_remove(P("wd/n"), 1);
    fs_mkdir(P("wd/n"), 0755, 0);
    n = collect_real(w, dir, evs, EVCAP);
    CHECK_EQ(has_ev(evs, n, FS_EV_DELETED, P("wd/n")), 1);
    CHECK_EQ(has_ev(evs, n, FS_EV_CREATED, P("wd/n")), 1);
    fs_watch_close(w);
    fs_remove(P("wd"), 1);
}

/* Hostile: another process makes directories with a file in each and removes them as fast as it can while the
 * watch reads; every file is reported created at most once, and the watch survives. */
void test_watch_fast_trees(void) {
    fs_mkdir(P("wf"), 0755, 1);
    struct fs_watch *w;
    CHECK_EQ(fs_watch_open(P("wf"), 1, &w), 0);
    char dir[PATH_MAX];
    fmt(dir, sizeof dir, "%s", P("wf"));
    enum { ROUNDS = 200 };
    pid_t child = fork();
    CHECK(child >= 0);
    if (child == 0) {
        char d[PATH_MAX], f[PATH_MAX];
        for (int k = 0; k < ROUNDS; k++) {
            fmt(d, sizeof d, "%s/d%d", dir, k);
            fmt(f, sizeof f, "%s/d%d/f", dir, k);
            if (mkdir(d, 0755) < 0) _exit(1);
            int fd = open(f, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
            if (fd < 0) _exit(1);
            close(fd);
            if (k % 2) { /* every other tree goes again at once */
                unlink(f);
                rmdir(d);
            }
        }
        _exit(0);
    }
    /* read while the trees come and go: the walks race the creations */
    static struct ev seen[4 * FS_WATCH_QUEUE];
    int n = 0, status = 0;
    pid_t done = 0;
    for (int rounds = 0; rounds < 100000 && (done = waitpid(child, &status, WNOHANG)) == 0; rounds++) {
        struct pollfd p = {.fd = fs_watch_fd(w), .events = POLLIN};
        if (poll(&p, 1, 10) == 1) CHECK_EQ(fs_watch_read(w), 0);
        uint8_t kind;
        char *path;
        while (fs_watch_next(w, &kind, &path) == 1) {
            if (n < (int)(sizeof seen / sizeof seen[0])) {
                seen[n].kind = kind;
                fmt(seen[n].path, PATH_MAX, "%s", path);
                n++;
            }
            free(path);
        }
    }
    if (done == 0) CHECK_EQ(waitpid(child, &status, 0), child);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    int rest = collect_real(w, dir, evs, EVCAP);
    CHECK(rest >= 0);
    for (int k = 0; k < rest && n < (int)(sizeof seen / sizeof seen[0]); k++) seen[n++] = evs[k];
    CHECK(n > 0);
    CHECK(!has_ev(seen, n, FS_EV_OVERFLOW, dir));
    int dups = 0;
    for (int k = 0; k < n; k++)
        if (seen[k].kind == FS_EV_CREATED && has_ev(seen, n, FS_EV_CREATED, seen[k].path) > 1) dups++;
    if (dups) dump("fast trees", seen, n);
    CHECK_EQ(dups, 0);
    char f[PATH_MAX];
    for (int k = 0; k < ROUNDS; k += 2) { /* the trees left are all reported */
        fmt(f, sizeof f, "%s/d%d/f", dir, k);
        CHECK_EQ(has_ev(seen, n, FS_EV_CREATED, f), 1);
    }
    fs_watch_close(w);
    fs_remove(P("wf"), 1);
}

void test_watch_overflow(void) {
    mkdir(P("wo"), 0755);
    struct fs_watch *w;
    CHECK_EQ(fs_watch_open(P("wo"), 0, &w), 0);
    int total = FS_WATCH_QUEUE + 100;
    char name[PATH_MAX];
    for (int k = 0; k < total; k++) {
        fmt(name, sizeof name, "%s/p%d", P("wo"), k);
        CHECK_EQ(mkfifo(name, 0600), 0);
    }
    /* read everything inotify has without popping: the queue fills, the rest is dropped */
    struct pollfd p = {.fd = fs_watch_fd(w), .events = POLLIN};
    for (int rounds = 0; rounds < 1000 && poll(&p, 1, 0) == 1; rounds++) CHECK_EQ(fs_watch_read(w), 0);
    uint8_t kind;
    char *path;
    int n = 0, overflow_at = -1;
    for (int k = 0; k < total + 10 && fs_watch_next(w, &kind, &path) == 1; k++) {
        if (kind == FS_EV_OVERFLOW) {
            if (overflow_at < 0) overflow_at = n;
            CHECK_STR(path, P("wo"));
        } else {
            fmt(name, sizeof name, "%s/p%d", P("wo"), n);
            CHECK_STR(path, name); /* the first events, in order */
        }
        free(path);
        n++;
    }
    CHECK_EQ(overflow_at, FS_WATCH_QUEUE);
    CHECK_EQ(n, FS_WATCH_QUEUE + 1);
    /* after the overflow was taken, events flow again */
    int m = collect_real(w, P("wo"), evs, EVCAP);
    CHECK_EQ(m, 0);
    mkfifo(P("wo/after"), 0600);
    m = collect_real(w, P("wo"), evs, EVCAP);
    CHECK_EQ(m, 1);
    CHECK_EQ(has_ev(evs, m, FS_EV_CREATED, P("wo/after")), 1);

    /* closing with events queued frees them (the sanitized run checks for leaks) */
    for (int k = 0; k < 50; k++) {
        fmt(name, sizeof name, "%s/p%d", P("wo"), k);
        unlink(name);
    }
    CHECK_EQ(poll(&p, 1, 5000), 1);
    CHECK_EQ(fs_watch_read(w), 0);
    fs_watch_close(w);
    fs_remove(P("wo"), 1);
}

/* a tree deeper than a watch walks: refused at open rather than watched in part */
void test_watch_too_deep(void) {
    mkdir(P("wdeep"), 0755);
    int dfd = open(P("wdeep"), O_RDONLY | O_DIRECTORY);
    for (int k = 0; k < 140 && dfd >= 0; k++) {
        mkdirat(dfd, "d", 0755);
        int next = openat(dfd, "d", O_RDONLY | O_DIRECTORY);
        close(dfd);
        dfd = next;
    }
    if (dfd >= 0) close(dfd);
    struct fs_watch *w;
    CHECK_EQ(fs_watch_open(P("wdeep"), 1, &w), -ELOOP);
    CHECK(w == NULL);
    CHECK_EQ(fs_watch_open(P("wdeep"), 0, &w), 0); /* not recursive: fine */
    fs_watch_close(w);
    CHECK_EQ(fs_remove(P("wdeep"), 1), 0);
}

void test_watch_root_deleted(void) {
    fs_mkdir(P("wd/s"), 0755, 1);
    struct fs_watch *w;
    CHECK_EQ(fs_watch_open(P("wd"), 1, &w), 0);
    CHECK_EQ(fs_remove(P("wd"), 1), 0);
    int got = 0;
    for (int rounds = 0; rounds < 100 && !got; rounds++) {
        struct pollfd p = {.fd = fs_watch_fd(w), .events = POLLIN};
        if (poll(&p, 1, 5000) != 1) break;
        CHECK_EQ(fs_watch_read(w), 0);
        uint8_t kind;
        char *path;
        while (fs_watch_next(w, &kind, &path) == 1) {
            if (kind == FS_EV_DELETED && !strcmp(path, P("wd"))) got = 1;
            free(path);
        }
    }
    CHECK(got);
    fs_watch_close(w);
}
