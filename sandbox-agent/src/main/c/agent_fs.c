/*
 * agent_fs.c: the file operations and watches of sandbox-agent (see agent_fs.h and PROTOCOL.md, section Files).
 *
 * Decisions worth knowing:
 * - Paths longer than PATH_MAX - 1 built while walking a tree (fs_list, a recursive watch) are skipped: a listing
 *   leaves such entries out, a watch queues an overflow event (the client learns its view is incomplete).
 * - fs_write_* names its temporary file FS_TEMP_PREFIX + 16 random hex digits + one marker letter: 'o' when the
 *   target existed (an overwrite), 'n' when it did not. Commit re-checks the target just before the rename and
 *   renames the temporary file to the other marker when that changed. A watch that sees a temporary name moved
 *   onto a target (the IN_MOVED_FROM/IN_MOVED_TO pair shares a cookie) reports MODIFIED for 'o' and CREATED for
 *   'n': one event per WRITE, no per-watch set of known names. Any other rename onto a name is CREATED (moved in).
 *   Files (not directories) whose names start with FS_TEMP_PREFIX are never reported.
 * - A watch reports MODIFIED on IN_CLOSE_WRITE and IN_ATTRIB, not on IN_MODIFY (one event per write, not one per
 *   write(2) call). A file created by a program shows as CREATED then MODIFIED (when it closes it).
 * - A recursive watch that sees a directory created or moved in watches it and its subdirectories and reports what
 *   it finds inside as CREATED (files written between mkdir and the new watch would otherwise be missed). The paths
 *   a walk reported are remembered (the last FS_WATCH_SCANNED of them): an IN_CREATE of one of them (made after its
 *   directory's watch, before the walk read it) is not reported again, nor walked again. An IN_CREATE of a name
 *   can only follow its delete or move out, which forgets the name (and what was below it), as an overflow forgets
 *   all: a remembered name never hides a later creation. A rename onto a remembered name (IN_MOVED_TO) is always
 *   reported; a file moved into a new directory just as it is walked may be reported twice. A directory moved out is
 *   one DELETED (its watches
 *   are dropped). Directories more than FS_WALK_DEPTH levels below a walk's start, or beyond FS_WATCH_DIRS (or
 *   FS_WATCH_PATH_BYTES of paths) in one watch, are not watched: -ELOOP / -ENOSPC at open, an overflow event later.
 *   Walking a new directory happens inside fs_watch_read: a huge tree moved in takes a while (bounded as above).
 */
#include "agent_fs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#define FS_REMOVE_DEPTH 256   /* deeper trees: -ELOOP */
#define FS_LIST_DEPTH 64      /* fs_list_open caps depth to this */
#define FS_WALK_DEPTH 128     /* a watch's subdirectory walk */
#define FS_WATCH_DIRS 65536   /* watched directories per watch */
#define FS_WATCH_PATH_BYTES (16u << 20) /* bytes of their paths (long paths could otherwise take 65,536 x 4 KiB) */
#define FS_WATCH_SCANNED 1024 /* paths a watch remembers as reported by a walk (see above) */
#define FS_WATCH_READS 16     /* read(2) calls per fs_watch_read; the fd stays readable if more is pending */

void fs_info_free(struct fs_info *info) {
    if (!info) return;
    free(info->path);
    free(info->link);
    info->path = info->link = NULL;
}

/* Fills *out from st; path copied, link read with readlinkat(dirfd, name) for a symlink. */
static int fill_info(int dirfd, const char *name, const char *path, const struct stat *st, struct fs_info *out) {
    memset(out, 0, sizeof *out);
    out->type = S_ISREG(st->st_mode) ? FS_FILE : S_ISDIR(st->st_mode) ? FS_DIR : S_ISLNK(st->st_mode) ? FS_SYMLINK
                                                                                                        : FS_OTHER;
    out->mode = st->st_mode & 07777;
    out->uid = st->st_uid;
    out->gid = st->st_gid;
    out->size = (uint64_t)st->st_size;
    /* saturated: code in the sandbox can set any mtime (utimensat), beyond what nanoseconds in an i64 hold */
    int64_t sec = st->st_mtim.tv_sec, lim = INT64_MAX / 1000000000 - 1;
    out->mtime_ns = sec > lim ? INT64_MAX : sec < -lim ? INT64_MIN : sec * 1000000000 + st->st_mtim.tv_nsec;
    char target[PATH_MAX];
    size_t tlen = 0;
    if (out->type == FS_SYMLINK) {
        /* a link target is at most PATH_MAX - 1 bytes; a full buffer means it changed under us and grew */
        ssize_t n = readlinkat(dirfd, name, target, sizeof target);
        if (n < 0) return -errno;
        if ((size_t)n >= sizeof target) return -ENAMETOOLONG;
        tlen = (size_t)n;
    }
    out->path = strdup(path);
    out->link = malloc(tlen + 1);
    if (!out->path || !out->link) {
        fs_info_free(out);
        return -ENOMEM;
    }
    memcpy(out->link, target, tlen);
    out->link[tlen] = 0;
    return 0;
}

int fs_stat(const char *path, struct fs_info *out) {
    struct stat st;
    if (lstat(path, &st) < 0) return -errno;
    return fill_info(AT_FDCWD, path, path, &st, out);
}

/* Joins dir and name into buf (PATH_MAX); -ENAMETOOLONG if it does not fit. */
static int join(char *buf, const char *dir, const char *name) {
    size_t dl = strlen(dir), nl = strlen(name);
    int slash = dl == 0 || dir[dl - 1] != '/';
    if (dl + (size_t)slash + nl + 1 > PATH_MAX) return -ENAMETOOLONG;
    memmove(buf, dir, dl);
    if (slash) buf[dl++] = '/';
    memcpy(buf + dl, name, nl + 1);
    return 0;
}

/* mkdir that accepts an existing directory (or a symlink to one, as mkdir -p does); something else there is
 * -EEXIST for the last component, -ENOTDIR for a parent. */
static int mkdir_ok(const char *path, uint32_t mode, int last) {
    if (mkdir(path, mode) == 0) return 0;
    int err = errno;
    struct stat st;
    if (err == EEXIST && (stat(path, &st) < 0 || !S_ISDIR(st.st_mode))) return last ? -EEXIST : -ENOTDIR;
    return err == EEXIST ? 0 : -err;
}

int fs_mkdir(const char *path, uint32_t mode, int parents) {
    if (mode & ~07777u) return -EINVAL;
    if (!parents) return mkdir(path, mode) < 0 ? -errno : 0;
    size_t len = strlen(path);
    if (len >= PATH_MAX) return -ENAMETOOLONG;
    char buf[PATH_MAX];
    memcpy(buf, path, len + 1);
    while (len > 1 && buf[len - 1] == '/') buf[--len] = 0;
    /* every proper prefix ending before a '/' (0755), then the path itself (mode) */
    for (size_t i = 1; i < len; i++) {
        if (buf[i] != '/' || buf[i - 1] == '/') continue;
        buf[i] = 0;
        int rc = mkdir_ok(buf, 0755, 0);
        buf[i] = '/';
        if (rc < 0) return rc;
    }
    return mkdir_ok(buf, mode, 1);
}

/* Removes the tree under rootfd (an open directory, consumed) without following symlinks: an explicit stack of open
 * directories, each entry unlinked, a subdirectory descended into when unlinkat says EISDIR. */
static int remove_tree(int rootfd) {
    struct level {
        DIR *d;
        char name[NAME_MAX + 1]; /* the directory's name in its parent, removed when it is done */
    };
    struct level *st = calloc(FS_REMOVE_DEPTH, sizeof *st);
    if (!st) {
        close(rootfd);
        return -ENOMEM;
    }
    int n = 0, rc = 0;
    st[0].d = fdopendir(rootfd);
    if (!st[0].d) {
        rc = -errno;
        close(rootfd);
        free(st);
        return rc;
    }
    n = 1;
    while (n > 0 && rc == 0) {
        struct level *top = &st[n - 1];
        errno = 0;
        struct dirent *e = readdir(top->d);
        if (!e) {
            if (errno) {
                rc = -errno;
                break;
            }
            closedir(top->d);
            n--;
            if (n > 0 && unlinkat(dirfd(st[n - 1].d), top->name, AT_REMOVEDIR) < 0 && errno != ENOENT) rc = -errno;
            continue;
        }
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        if (unlinkat(dirfd(top->d), e->d_name, 0) == 0 || errno == ENOENT) continue;
        if (errno != EISDIR) {
            rc = -errno;
            break;
        }
        if (n == FS_REMOVE_DEPTH) {
            rc = -ELOOP;
            break;
        }
        /* O_NOFOLLOW: a directory swapped for a symlink since unlinkat fails here instead of being followed */
        int fd = openat(dirfd(top->d), e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0) {
            if (errno == ENOENT) continue;
            rc = -errno;
            break;
        }
        struct level *next = &st[n];
        next->d = fdopendir(fd);
        if (!next->d) {
            rc = -errno;
            close(fd);
            break;
        }
        size_t nl = strlen(e->d_name); /* readdir names are at most NAME_MAX */
        memcpy(next->name, e->d_name, nl + 1);
        n++;
    }
    while (n > 0) closedir(st[--n].d);
    free(st);
    return rc;
}

int fs_remove(const char *path, int recursive) {
    struct stat st;
    if (lstat(path, &st) < 0) return -errno;
    if (!S_ISDIR(st.st_mode)) return unlink(path) < 0 ? -errno : 0;
    if (rmdir(path) == 0) return 0;
    if ((errno != ENOTEMPTY && errno != EEXIST) || !recursive) return errno == EEXIST ? -ENOTEMPTY : -errno;
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) return -errno;
    int rc = remove_tree(fd);
    if (rc < 0) return rc;
    return rmdir(path) < 0 ? -errno : 0;
}

int fs_move(const char *from, const char *to) { return rename(from, to) < 0 ? -errno : 0; }

int fs_symlink(const char *target, const char *path) { return symlink(target, path) < 0 ? -errno : 0; }

int fs_chmod(const char *path, uint32_t mode) {
    if (mode & ~07777u) return -EINVAL;
    /* the entry itself, held: a symlink swapped in after this is not followed */
    int fd = open(path, O_PATH | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) return -errno;
    struct stat st;
    int rc = 0;
    if (fstat(fd, &st) < 0) {
        rc = -errno;
    } else if (!S_ISLNK(st.st_mode)) {
        char proc[64];
        snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
        if (chmod(proc, (mode_t)mode) < 0) rc = -errno;
        if (rc == -ENOENT) rc = fchmodat(AT_FDCWD, path, (mode_t)mode, 0) < 0 ? -errno : 0; /* no /proc */
    }
    close(fd);
    return rc;
}

int fs_open_read(const char *path, uint64_t offset) {
    if (offset > (uint64_t)INT64_MAX) return -EINVAL;
    /* refuse what is not a regular file before opening it: opening a device can have effects (a tape rewinds) */
    struct stat st;
    if (stat(path, &st) < 0) return -errno;
    if (S_ISDIR(st.st_mode)) return -EISDIR;
    if (!S_ISREG(st.st_mode)) return -EINVAL;
    /* it may have been swapped since: O_NONBLOCK so that a FIFO without a writer cannot block, fstat checks again */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd < 0) return -errno;
    int rc = 0;
    if (fstat(fd, &st) < 0) rc = -errno;
    else if (S_ISDIR(st.st_mode)) rc = -EISDIR;
    else if (!S_ISREG(st.st_mode)) rc = -EINVAL;
    else {
        int fl = fcntl(fd, F_GETFL);
        if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0) rc = -errno;
        else if (lseek(fd, (off_t)offset, SEEK_SET) < 0) rc = -errno;
    }
    if (rc < 0) {
        close(fd);
        return rc;
    }
    return fd;
}

/* ---- atomic writes ---- */

struct fs_write {
    int fd, keep_owner;
    uint32_t mode;
    uid_t uid;
    gid_t gid;
    char target[PATH_MAX];
    char tmp[PATH_MAX];
};

/* The temporary name's last letter: whether the target existed ('o') or not ('n'); a watch reads it. */
static void set_marker(char *tmp, int existed) { tmp[strlen(tmp) - 1] = existed ? 'o' : 'n'; }

int fs_write_begin(const char *path, uint32_t mode, int parents, struct fs_write **out) {
    *out = NULL;
    if (mode & ~07777u) return -EINVAL;
    size_t len = strlen(path);
    if (len == 0 || path[0] != '/') return -EINVAL;
    if (path[len - 1] == '/') return -EISDIR; /* names a directory */
    const char *slash = strrchr(path, '/');
    size_t dirlen = (size_t)(slash - path);
    /* the temporary name is as long as the directory + "/" + prefix + 16 + marker */
    if (len >= PATH_MAX || dirlen + 1 + strlen(FS_TEMP_PREFIX) + 17 >= PATH_MAX) return -ENAMETOOLONG;
    struct fs_write *w = calloc(1, sizeof *w);
    if (!w) return -ENOMEM;
    memcpy(w->target, path, len + 1);
    int rc;
    if (parents && dirlen > 0) {
        char dir[PATH_MAX];
        memcpy(dir, path, dirlen);
        dir[dirlen] = 0;
        if ((rc = fs_mkdir(dir, 0755, 1)) < 0) goto fail;
    }
    struct stat st;
    int existed = 0;
    if (lstat(path, &st) == 0) {
        if (S_ISDIR(st.st_mode)) {
            rc = -EISDIR;
            goto fail;
        }
        existed = 1;
    } else if (errno != ENOENT) {
        rc = -errno;
        goto fail;
    }
    for (int attempt = 0;; attempt++) {
        unsigned char rnd[8];
        if (getrandom(rnd, sizeof rnd, 0) != (ssize_t)sizeof rnd) {
            rc = -EIO;
            goto fail;
        }
        int n = snprintf(w->tmp, sizeof w->tmp, "%.*s/%s", (int)dirlen, path, FS_TEMP_PREFIX);
        for (int i = 0; i < 8; i++) n += snprintf(w->tmp + n, sizeof w->tmp - (size_t)n, "%02x", rnd[i]);
        memcpy(w->tmp + n, "n", 2);
        set_marker(w->tmp, existed);
        w->fd = open(w->tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (w->fd >= 0) break;
        if (errno != EEXIST || attempt == 3) {
            rc = -errno;
            goto fail;
        }
    }
    /* owner and mode are set at commit: a write(2) by an agent without CAP_FSETID would clear setuid/setgid */
    w->mode = mode;
    if (existed && S_ISREG(st.st_mode)) {
        w->keep_owner = 1;
        w->uid = st.st_uid;
        w->gid = st.st_gid;
        w->mode = st.st_mode & 07777;
    }
    *out = w;
    return 0;
fail:
    free(w);
    return rc;
}

int fs_write_data(struct fs_write *w, const void *bytes, size_t n) {
    const char *p = bytes;
    while (n > 0) {
        ssize_t k = write(w->fd, p, n);
        if (k < 0) {
            if (errno == EINTR) continue;
            return -errno;
        }
        p += k;
        n -= (size_t)k;
    }
    return 0;
}

int fs_write_commit(struct fs_write *w, struct fs_info *info) {
    int rc = 0;
    /* fchmod after fchown (chown clears setuid/setgid); fchmod is not subject to the umask: the mode asked is got */
    if (w->keep_owner && fchown(w->fd, w->uid, w->gid) < 0 && errno != EPERM) rc = -errno;
    if (rc == 0 && fchmod(w->fd, w->mode) < 0) rc = -errno;
    if (close(w->fd) < 0 && rc == 0) rc = -errno;
    w->fd = -1;
    if (rc == 0) {
        /* the target may have appeared or gone while the data came: say so in the name a watch sees */
        struct stat st;
        int existed = lstat(w->target, &st) == 0;
        char last = w->tmp[strlen(w->tmp) - 1];
        if (existed != (last == 'o')) {
            char renamed[PATH_MAX];
            memcpy(renamed, w->tmp, sizeof renamed);
            set_marker(renamed, existed);
            if (rename(w->tmp, renamed) == 0) memcpy(w->tmp, renamed, sizeof renamed);
        }
        if (rename(w->tmp, w->target) < 0) rc = -errno;
    }
    if (rc < 0) unlink(w->tmp);
    else if (info) rc = fs_stat(w->target, info);
    free(w);
    return rc;
}

void fs_write_abort(struct fs_write *w) {
    if (!w) return;
    if (w->fd >= 0) close(w->fd);
    unlink(w->tmp);
    free(w);
}

/* ---- listings (and the walk of a recursive watch) ---- */

struct fs_list {
    uint32_t depth, n;     /* levels allowed, levels open */
    char path[PATH_MAX];   /* the directory of the top level, then the entry's name */
    size_t len[FS_WALK_DEPTH];
    DIR *d[FS_WALK_DEPTH];
};

static int list_open(const char *path, uint32_t depth, int follow, struct fs_list **out) {
    *out = NULL;
    size_t len = strlen(path);
    if (len >= PATH_MAX) return -ENAMETOOLONG;
    struct fs_list *l = calloc(1, sizeof *l);
    if (!l) return -ENOMEM;
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC | (follow ? 0 : O_NOFOLLOW));
    if (fd < 0 || !(l->d[0] = fdopendir(fd))) {
        int rc = -errno;
        if (fd >= 0) close(fd);
        free(l);
        return rc;
    }
    while (len > 1 && path[len - 1] == '/') len--; /* "/a/" lists as "/a" */
    memcpy(l->path, path, len);
    l->path[len] = 0;
    l->len[0] = len;
    l->depth = depth;
    l->n = 1;
    *out = l;
    return 0;
}

int fs_list_open(const char *path, uint32_t depth, struct fs_list **out) {
    if (depth == 0) return -EINVAL;
    return list_open(path, depth > FS_LIST_DEPTH ? FS_LIST_DEPTH : depth, 1, out);
}

/* As fs_list_next; *skipped set when a directory was not descended into because of the depth (or the path length). */
static int list_next(struct fs_list *l, struct fs_info *out, int *skipped) {
    while (l->n > 0) {
        uint32_t top = l->n - 1;
        errno = 0;
        struct dirent *e = readdir(l->d[top]);
        if (!e) {
            if (errno) return -errno;
            closedir(l->d[top]);
            l->d[top] = NULL;
            l->n--;
            continue;
        }
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        size_t base = l->len[top];
        l->path[base] = 0;
        if (join(l->path, l->path, e->d_name) < 0) {
            if (skipped) *skipped = 1;
            continue;
        }
        int dfd = dirfd(l->d[top]);
        struct stat st;
        if (fstatat(dfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
            if (errno == ENOENT) continue; /* gone since readdir */
            return -errno;
        }
        int rc = fill_info(dfd, e->d_name, l->path, &st, out);
        if (rc == -ENOENT) continue;
        if (rc < 0) return rc;
        if (S_ISDIR(st.st_mode)) {
            if (l->n < l->depth) {
                int fd = openat(dfd, e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
                if (d) {
                    l->d[l->n] = d;
                    l->len[l->n] = strlen(l->path);
                    l->n++;
                } else if (fd >= 0) {
                    close(fd);
                } /* else: gone or replaced since fstatat: the entry is still reported, not its contents */
            } else if (skipped) {
                *skipped = 1;
            }
        }
        return 1;
    }
    return 0;
}

int fs_list_next(struct fs_list *l, struct fs_info *out) { return list_next(l, out, NULL); }

void fs_list_close(struct fs_list *l) {
    if (!l) return;
    while (l->n > 0) closedir(l->d[--l->n]);
    free(l);
}

/* ---- watches ---- */

struct wd_path {
    int wd;
    char *path;
};

struct event {
    uint8_t kind;
    char *path;
};

struct fs_watch {
    int fd, recursive;
    char *root;
    struct wd_path *wds; /* sorted by wd */
    size_t nwds, capwds, path_bytes;
    struct event q[FS_WATCH_QUEUE];
    size_t head, count;
    int overflowed;       /* events were dropped: an overflow event follows the queued ones, then nothing is lost */
    uint32_t from_cookie; /* the last IN_MOVED_FROM of a temporary name, and its marker */
    char from_marker;
    char *scanned[FS_WATCH_SCANNED]; /* what a walk reported as created, a ring from scan_head */
    size_t scan_head, scan_count;
};

/* Remembers a path a walk reported; the oldest is forgotten past FS_WATCH_SCANNED (at worst, a duplicate event). */
static void scanned_add(struct fs_watch *w, const char *path) {
    char *copy = strdup(path);
    if (!copy) return;
    if (w->scan_count == FS_WATCH_SCANNED) {
        free(w->scanned[w->scan_head]);
        w->scanned[w->scan_head] = NULL;
        w->scan_head = (w->scan_head + 1) % FS_WATCH_SCANNED;
        w->scan_count--;
    }
    w->scanned[(w->scan_head + w->scan_count) % FS_WATCH_SCANNED] = copy;
    w->scan_count++;
}

static void scanned_drop(struct fs_watch *w, size_t i) {
    free(w->scanned[i]);
    size_t last = (w->scan_head + w->scan_count - 1) % FS_WATCH_SCANNED;
    w->scanned[i] = w->scanned[last]; /* the newest fills the hole: eviction order is approximate */
    w->scanned[last] = NULL;
    w->scan_count--;
}

/* Whether a path was remembered (then forgotten). */
static int scanned_take(struct fs_watch *w, const char *path) {
    for (size_t k = 0; k < w->scan_count; k++) {
        size_t i = (w->scan_head + k) % FS_WATCH_SCANNED;
        if (strcmp(w->scanned[i], path)) continue;
        scanned_drop(w, i);
        return 1;
    }
    return 0;
}

/* Forgets a path deleted or moved out, and every path below it. */
static void scanned_forget(struct fs_watch *w, const char *path) {
    size_t pl = strlen(path);
    for (size_t k = 0; k < w->scan_count;) {
        size_t i = (w->scan_head + k) % FS_WATCH_SCANNED;
        const char *p = w->scanned[i];
        if (!strncmp(p, path, pl) && (p[pl] == 0 || p[pl] == '/')) scanned_drop(w, i); /* k now names the next */
        else k++;
    }
}

static void push(struct fs_watch *w, uint8_t kind, const char *path) {
    if (w->overflowed) return;
    char *copy = strdup(kind == FS_EV_OVERFLOW ? w->root : path);
    if (w->count == FS_WATCH_QUEUE || !copy) {
        free(copy);
        w->overflowed = 1;
        return;
    }
    struct event *e = &w->q[(w->head + w->count) % FS_WATCH_QUEUE];
    e->kind = kind;
    e->path = copy;
    w->count++;
}

static size_t wd_find(const struct fs_watch *w, int wd) { /* index of the first entry >= wd */
    size_t lo = 0, hi = w->nwds;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (w->wds[mid].wd < wd) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

/* Watches one directory (path relative to nothing: absolute); maps its wd to path. */
static int add_dir(struct fs_watch *w, const char *path, int follow) {
    uint32_t mask = IN_CREATE | IN_MOVED_TO | IN_CLOSE_WRITE | IN_ATTRIB | IN_DELETE | IN_MOVED_FROM |
                    IN_DELETE_SELF | IN_ONLYDIR | IN_EXCL_UNLINK | (follow ? 0 : IN_DONT_FOLLOW);
    size_t i, plen = strlen(path) + 1;
    if (w->path_bytes + plen > FS_WATCH_PATH_BYTES) return -ENOSPC;
    char *copy = strdup(path);
    if (!copy) return -ENOMEM;
    int wd = inotify_add_watch(w->fd, path, mask);
    if (wd < 0) {
        free(copy);
        return -errno;
    }
    i = wd_find(w, wd);
    if (i < w->nwds && w->wds[i].wd == wd) { /* the same directory again (a bind mount): the newest path wins */
        w->path_bytes += plen - (strlen(w->wds[i].path) + 1);
        free(w->wds[i].path);
        w->wds[i].path = copy;
        return 0;
    }
    if (w->nwds == FS_WATCH_DIRS) {
        inotify_rm_watch(w->fd, wd);
        free(copy);
        return -ENOSPC;
    }
    if (w->nwds == w->capwds) {
        size_t cap = w->capwds ? w->capwds * 2 : 16;
        struct wd_path *n = realloc(w->wds, cap * sizeof *n);
        if (!n) {
            inotify_rm_watch(w->fd, wd);
            free(copy);
            return -ENOMEM;
        }
        w->wds = n;
        w->capwds = cap;
    }
    memmove(&w->wds[i + 1], &w->wds[i], (w->nwds - i) * sizeof *w->wds);
    w->wds[i].wd = wd;
    w->wds[i].path = copy;
    w->nwds++;
    w->path_bytes += plen;
    return 0;
}

/* Watches path and every directory below it; with report, queues CREATED for every entry found below it.
 * Entries that vanish meanwhile are skipped. */
static int add_tree(struct fs_watch *w, const char *path, int report, int follow) {
    int rc = add_dir(w, path, follow);
    if (rc < 0 || !w->recursive) return rc;
    struct fs_list *l;
    if ((rc = list_open(path, FS_WALK_DEPTH, follow, &l)) < 0) return rc;
    struct fs_info info;
    int skipped = 0;
    while ((rc = list_next(l, &info, &skipped)) == 1) {
        if (report && (info.type == FS_DIR || strncmp(strrchr(info.path, '/') + 1, FS_TEMP_PREFIX,
                                                        strlen(FS_TEMP_PREFIX)))) {
            push(w, FS_EV_CREATED, info.path);
            scanned_add(w, info.path);
        }
        if (info.type == FS_DIR) {
            rc = add_dir(w, info.path, 0);
            if (rc == -ENOENT || rc == -ENOTDIR || rc == -ELOOP) rc = 0; /* gone or replaced meanwhile */
        }
        fs_info_free(&info);
        if (rc < 0) break;
    }
    fs_list_close(l);
    if (rc == 0 && skipped) rc = -ELOOP; /* too deep or a path too long: not everything is watched */
    return rc;
}

int fs_watch_open(const char *path, int recursive, struct fs_watch **out) {
    *out = NULL;
    size_t len = strlen(path);
    if (len >= PATH_MAX) return -ENAMETOOLONG;
    struct fs_watch *w = calloc(1, sizeof *w);
    if (!w) return -ENOMEM;
    w->recursive = recursive;
    w->fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC); /* EMFILE at the per-user instance limit (128 by default) */
    int rc = w->fd < 0 ? -errno : 0;
    w->root = strdup(path);
    if (rc < 0 || !w->root) {
        if (rc == 0) rc = -ENOMEM;
        if (w->fd >= 0) close(w->fd);
        free(w->root);
        free(w);
        return rc;
    }
    while (len > 1 && w->root[len - 1] == '/') w->root[--len] = 0;
    rc = add_tree(w, w->root, 0, 1);
    if (rc < 0) {
        fs_watch_close(w);
        return rc;
    }
    *out = w;
    return 0;
}

int fs_watch_fd(const struct fs_watch *w) { return w->fd; }

/* Stops watching a directory moved away and everything below it (their paths are no longer right). */
static void forget_tree(struct fs_watch *w, const char *path) {
    size_t pl = strlen(path), j = 0;
    for (size_t i = 0; i < w->nwds; i++) {
        const char *p = w->wds[i].path;
        if (!strncmp(p, path, pl) && (p[pl] == 0 || p[pl] == '/')) {
            inotify_rm_watch(w->fd, w->wds[i].wd);
            w->path_bytes -= strlen(p) + 1;
            free(w->wds[i].path);
        } else {
            w->wds[j++] = w->wds[i];
        }
    }
    w->nwds = j;
}

static void handle(struct fs_watch *w, const struct inotify_event *ev, const char *name) {
    if (ev->mask & IN_Q_OVERFLOW) { /* deletes may be lost: forget what walks reported */
        while (w->scan_count) scanned_drop(w, w->scan_head);
        push(w, FS_EV_OVERFLOW, NULL);
        return;
    }
    size_t i = wd_find(w, ev->wd);
    if (i == w->nwds || w->wds[i].wd != ev->wd) return; /* a watch already forgotten */
    const char *dir = w->wds[i].path;
    if (ev->mask & IN_IGNORED) { /* the directory is gone (or unmounted): its watch ended */
        w->path_bytes -= strlen(dir) + 1;
        free(w->wds[i].path);
        memmove(&w->wds[i], &w->wds[i + 1], (w->nwds - i - 1) * sizeof *w->wds);
        w->nwds--;
        return;
    }
    if (!name[0]) { /* an event on a watched directory itself: its parent reports it, except for the root */
        if ((ev->mask & IN_DELETE_SELF) && !strcmp(dir, w->root)) push(w, FS_EV_DELETED, dir);
        return;
    }
    int isdir = (ev->mask & IN_ISDIR) != 0;
    size_t plen = strlen(FS_TEMP_PREFIX);
    if (!isdir && !strncmp(name, FS_TEMP_PREFIX, plen)) { /* a directory of that name is not ours: reported */
        if (ev->mask & IN_MOVED_FROM) { /* maybe fs_write_commit: the IN_MOVED_TO of the target follows */
            w->from_cookie = ev->cookie;
            w->from_marker = name[strlen(name) - 1];
        }
        return;
    }
    char path[PATH_MAX];
    if (join(path, dir, name) < 0) {
        push(w, FS_EV_OVERFLOW, NULL);
        return;
    }
    if ((ev->mask & IN_CREATE) && w->scan_count && scanned_take(w, path))
        return; /* a walk reported it (and watched it, a directory) already */
    if (ev->mask & IN_MOVED_TO) {
        int kind = FS_EV_CREATED;
        if (ev->cookie && ev->cookie == w->from_cookie && w->from_marker == 'o') kind = FS_EV_MODIFIED;
        w->from_cookie = 0;
        push(w, (uint8_t)kind, path);
    } else if (ev->mask & IN_CREATE) {
        push(w, FS_EV_CREATED, path);
    } else if (ev->mask & (IN_DELETE | IN_MOVED_FROM)) {
        if (w->scan_count) scanned_forget(w, path);
        push(w, FS_EV_DELETED, path);
        if (isdir && (ev->mask & IN_MOVED_FROM) && w->recursive) forget_tree(w, path);
    } else if (ev->mask & (IN_CLOSE_WRITE | IN_ATTRIB)) {
        push(w, FS_EV_MODIFIED, path);
    }
    if (isdir && w->recursive && (ev->mask & (IN_CREATE | IN_MOVED_TO))) {
        int rc = add_tree(w, path, 1, 0);
        if (rc < 0 && rc != -ENOENT && rc != -ENOTDIR) push(w, FS_EV_OVERFLOW, NULL);
    }
}

int fs_watch_read(struct fs_watch *w) {
    /* aligned for struct inotify_event; room for many events per read */
    char buf[16384] __attribute__((aligned(__alignof__(struct inotify_event))));
    for (int r = 0; r < FS_WATCH_READS; r++) {
        ssize_t n = read(w->fd, buf, sizeof buf);
        if (n < 0) {
            if (errno == EINTR) continue;
            return errno == EAGAIN ? 0 : -errno;
        }
        size_t off = 0;
        while (off + sizeof(struct inotify_event) <= (size_t)n) {
            const struct inotify_event *ev = (const void *)(buf + off);
            if (ev->len > (size_t)n - off - sizeof *ev) return -EIO; /* the kernel never does this */
            /* the name is NUL-padded to len; a name filling len exactly without a NUL is not valid */
            const char *name = ev->len ? ev->name : "";
            if (ev->len && strnlen(ev->name, ev->len) == ev->len) return -EIO;
            handle(w, ev, name);
            off += sizeof *ev + ev->len;
        }
    }
    return 0;
}

int fs_watch_next(struct fs_watch *w, uint8_t *kind, char **path) {
    if (w->count > 0) {
        struct event *e = &w->q[w->head];
        *kind = e->kind;
        *path = e->path;
        e->path = NULL;
        w->head = (w->head + 1) % FS_WATCH_QUEUE;
        w->count--;
        return 1;
    }
    if (w->overflowed) {
        char *p = strdup(w->root);
        if (!p) return 0; /* tried again on the next call */
        w->overflowed = 0;
        *kind = FS_EV_OVERFLOW;
        *path = p;
        return 1;
    }
    return 0;
}

void fs_watch_close(struct fs_watch *w) {
    if (!w) return;
    if (w->fd >= 0) close(w->fd); /* drops every inotify watch with it */
    for (size_t i = 0; i < w->nwds; i++) free(w->wds[i].path);
    free(w->wds);
    for (size_t i = 0; i < w->count; i++) free(w->q[(w->head + i) % FS_WATCH_QUEUE].path);
    for (size_t i = 0; i < w->scan_count; i++) free(w->scanned[(w->scan_head + i) % FS_WATCH_SCANNED]);
    free(w->root);
    free(w);
}
