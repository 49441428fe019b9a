/*
 * test_fs.c: unit tests of agent_fs.c on the real file system, in a fresh mkdtemp directory removed at the end.
 *
 * Watch tests never sleep: after the operations under test they create a FIFO (one IN_CREATE, nothing else) as a
 * barrier and collect events until its CREATED arrives; inotify keeps the order of one instance, so everything the
 * operations caused is in hand by then and "exactly these events" can be asserted.
 */
#include "agent_fs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int failures, checks;

#define CHECK(cond)                                                                                                  \
    do {                                                                                                             \
        checks++;                                                                                                    \
        if (!(cond)) {                                                                                               \
            failures++;                                                                                              \
            fprintf(stderr, "%s:%d: %s: CHECK(%s) failed\n", __FILE__, __LINE__, __func__, #cond);                   \
        }                                                                                                            \
    } while (0)
#define CHECK_EQ(a, b)                                                                                               \
    do {                                                                                                             \
        long long a_ = (long long)(a), b_ = (long long)(b);                                                          \
        checks++;                                                                                                    \
        if (a_ != b_) {                                                                                              \
            failures++;                                                                                              \
            fprintf(stderr, "%s:%d: %s: %s == %lld, expected %s == %lld\n", __FILE__, __LINE__, __func__, #a, a_,     \
                    #b, b_);                                                                                         \
        }                                                                                                            \
    } while (0)
#define CHECK_STR(a, b)                                                                                              \
    do {                                                                                                             \
        const char *a_ = (a), *b_ = (b);                                                                             \
        checks++;                                                                                                    \
        if (!a_ || strcmp(a_, b_)) {                                                                                 \
            failures++;                                                                                              \
            fprintf(stderr, "%s:%d: %s: %s == \"%s\", expected \"%s\"\n", __FILE__, __LINE__, __func__, #a,          \
                    a_ ? a_ : "(null)", b_);                                                                         \
        }                                                                                                            \
    } while (0)

static char root[PATH_MAX];

/* snprintf that stops the test on truncation (the paths here are built to fit); returns the length. */
__attribute__((format(printf, 3, 4))) static int fmt(char *buf, size_t cap, const char *f, ...) {
    va_list ap;
    va_start(ap, f);
    int n = vsnprintf(buf, cap, f, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= cap) {
        fprintf(stderr, "test path too long: %s\n", buf);
        exit(2);
    }
    return n;
}

/* root + "/" + rel into a static rotating buffer (a few live at once) */
static const char *P(const char *rel) {
    static char bufs[8][PATH_MAX];
    static int next;
    char *b = bufs[next++ % 8];
    fmt(b, PATH_MAX, "%s/%s", root, rel);
    return b;
}

static void put(const char *path, const char *content, mode_t mode) {
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
    if (fd < 0) {
        perror(path);
        exit(2);
    }
    size_t n = strlen(content);
    if (write(fd, content, n) != (ssize_t)n) exit(2);
    close(fd);
}

static int exists(const char *path) {
    struct stat st;
    return lstat(path, &st) == 0;
}

/* How many FS_TEMP_PREFIX names a directory holds. */
static int temp_files(const char *dir) {
    DIR *d = opendir(dir);
    if (!d) return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d))) n += !strncmp(e->d_name, FS_TEMP_PREFIX, strlen(FS_TEMP_PREFIX));
    closedir(d);
    return n;
}

static void test_stat(void) {
    struct fs_info i;
    put(P("f"), "hello", 0644);
    chmod(P("f"), 04755);
    CHECK_EQ(fs_stat(P("f"), &i), 0);
    CHECK_EQ(i.type, FS_FILE);
    CHECK_EQ(i.mode, 04755);
    CHECK_EQ(i.size, 5);
    CHECK_EQ(i.uid, getuid());
    CHECK_EQ(i.gid, getgid());
    CHECK_STR(i.path, P("f"));
    CHECK_STR(i.link, "");
    struct stat st;
    stat(P("f"), &st);
    CHECK_EQ(i.mtime_ns, (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec);
    fs_info_free(&i);

    /* an mtime beyond what i64 nanoseconds hold saturates (no overflow: the sanitized run would stop) */
    struct timespec far[2] = {{.tv_sec = 0, .tv_nsec = UTIME_OMIT}, {.tv_sec = INT64_MAX / 1000, .tv_nsec = 0}};
    const int64_t most = INT64_MAX / 1000000000; /* seconds */
    if (utimensat(AT_FDCWD, P("f"), far, 0) == 0 && stat(P("f"), &st) == 0 && st.st_mtim.tv_sec > most) {
        CHECK_EQ(fs_stat(P("f"), &i), 0);
        CHECK_EQ(i.mtime_ns, INT64_MAX);
        fs_info_free(&i);
    } else {
        fprintf(stderr, "test_stat: this file system keeps no mtime beyond 2262, saturation not tested\n");
    }
    far[1].tv_sec = -(INT64_MAX / 1000);
    if (utimensat(AT_FDCWD, P("f"), far, 0) == 0 && stat(P("f"), &st) == 0 && st.st_mtim.tv_sec < -most) {
        CHECK_EQ(fs_stat(P("f"), &i), 0);
        CHECK_EQ(i.mtime_ns, INT64_MIN);
        fs_info_free(&i);
    }

    mkdir(P("sticky"), 0755);
    chmod(P("sticky"), 01777);
    CHECK_EQ(fs_stat(P("sticky"), &i), 0);
    CHECK_EQ(i.type, FS_DIR);
    CHECK_EQ(i.mode, 01777);
    fs_info_free(&i);

    mkdir(P("sgid"), 0755);
    chmod(P("sgid"), 02750);
    CHECK_EQ(fs_stat(P("sgid"), &i), 0);
    CHECK_EQ(i.mode, 02750);
    fs_info_free(&i);

    CHECK_EQ(symlink("/no/such/target", P("link")), 0);
    CHECK_EQ(fs_stat(P("link"), &i), 0);
    CHECK_EQ(i.type, FS_SYMLINK);
    CHECK_STR(i.link, "/no/such/target");
    CHECK_EQ(i.size, strlen("/no/such/target"));
    fs_info_free(&i);

    CHECK_EQ(mkfifo(P("fifo"), 0600), 0);
    CHECK_EQ(fs_stat(P("fifo"), &i), 0);
    CHECK_EQ(i.type, FS_OTHER);
    CHECK_EQ(i.mode, 0600);
    fs_info_free(&i);

    CHECK_EQ(fs_stat("/dev/null", &i), 0);
    CHECK_EQ(i.type, FS_OTHER);
    fs_info_free(&i);

    CHECK_EQ(fs_stat(P("missing"), &i), -ENOENT);
    CHECK_EQ(fs_stat(P("f/under-a-file"), &i), -ENOTDIR);
    fs_info_free(NULL);
}

static void test_read(void) {
    put(P("r"), "hello world", 0644);
    int fd = fs_open_read(P("r"), 6);
    CHECK(fd >= 0);
    char buf[32] = {0};
    CHECK_EQ(read(fd, buf, sizeof buf), 5);
    CHECK_STR(buf, "world");
    CHECK_EQ(fcntl(fd, F_GETFL) & O_NONBLOCK, 0);
    CHECK(fcntl(fd, F_GETFD) & FD_CLOEXEC);
    close(fd);

    fd = fs_open_read(P("r"), 100); /* past the end: nothing to read, not an error */
    CHECK(fd >= 0);
    CHECK_EQ(read(fd, buf, sizeof buf), 0);
    close(fd);

    CHECK_EQ(fs_open_read(P("r"), (uint64_t)INT64_MAX + 1), -EINVAL);
    CHECK_EQ(fs_open_read(root, 0), -EISDIR);
    CHECK_EQ(fs_open_read(P("missing"), 0), -ENOENT);
    CHECK_EQ(fs_open_read("/dev/null", 0), -EINVAL);

    /* a FIFO without a writer would block a plain open forever; this returns at once */
    CHECK_EQ(mkfifo(P("rfifo"), 0600), 0);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    CHECK_EQ(fs_open_read(P("rfifo"), 0), -EINVAL);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    CHECK(t1.tv_sec - t0.tv_sec < 2);

    /* a Unix socket cannot be opened at all: still -EINVAL, as a pipe */
    int sfd = socket(AF_UNIX, SOCK_STREAM, 0);
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    fmt(sa.sun_path, sizeof sa.sun_path, "%s", P("sock"));
    CHECK_EQ(bind(sfd, (struct sockaddr *)&sa, sizeof sa), 0);
    CHECK_EQ(fs_open_read(P("sock"), 0), -EINVAL);
    close(sfd);

    /* through a symlink: READ follows it, like open(2) */
    CHECK_EQ(symlink(P("r"), P("rlink")), 0);
    fd = fs_open_read(P("rlink"), 0);
    CHECK(fd >= 0);
    CHECK_EQ(read(fd, buf, sizeof buf), 11);
    close(fd);
}

static void write_all(const char *path, uint32_t mode, int parents, const char *content, int expect_begin) {
    struct fs_write *w;
    int rc = fs_write_begin(path, mode, parents, &w);
    CHECK_EQ(rc, expect_begin);
    if (rc < 0) {
        CHECK(w == NULL);
        return;
    }
    size_t n = strlen(content);
    CHECK_EQ(fs_write_data(w, content, n / 2), 0);
    CHECK_EQ(fs_write_data(w, content + n / 2, n - n / 2), 0);
    struct fs_info i;
    CHECK_EQ(fs_write_commit(w, &i), 0);
    CHECK_STR(i.path, path);
    CHECK_EQ(i.size, n);
    CHECK_EQ(i.type, FS_FILE);
    fs_info_free(&i);
}

static void slurp(const char *path, char *buf, size_t cap) {
    memset(buf, 0, cap);
    int fd = open(path, O_RDONLY);
    if (fd >= 0) {
        ssize_t n = read(fd, buf, cap - 1);
        (void)n;
        close(fd);
    }
}

static void test_write(void) {
    char buf[256];
    mkdir(P("w"), 0755);
    mode_t old = umask(022);
    write_all(P("w/new"), 0666, 0, "fresh content", 0);
    umask(old);
    slurp(P("w/new"), buf, sizeof buf);
    CHECK_STR(buf, "fresh content");
    struct stat st;
    CHECK_EQ(lstat(P("w/new"), &st), 0);
    CHECK_EQ(st.st_mode & 07777, 0666); /* the mode asked, not the umask's */

    /* an overwrite keeps the file's mode (setuid included), whatever mode is asked */
    put(P("w/old"), "old", 0600);
    chmod(P("w/old"), 04710);
    write_all(P("w/old"), 0644, 0, "replaced", 0);
    slurp(P("w/old"), buf, sizeof buf);
    CHECK_STR(buf, "replaced");
    CHECK_EQ(lstat(P("w/old"), &st), 0);
    CHECK_EQ(st.st_mode & 07777, 04710);

    /* an empty file */
    write_all(P("w/empty"), 0600, 0, "", 0);
    CHECK_EQ(lstat(P("w/empty"), &st), 0);
    CHECK_EQ(st.st_size, 0);

    /* parents */
    write_all(P("w/a/b/c/deep"), 0644, 0, "x", -ENOENT);
    write_all(P("w/a/b/c/deep"), 0644, 1, "x", 0);
    CHECK_EQ(lstat(P("w/a/b"), &st), 0);
    CHECK(S_ISDIR(st.st_mode));
    CHECK_EQ(st.st_mode & 07777, 0755 & ~old);

    /* a directory is refused, with or without a trailing slash; so is a file as a parent */
    write_all(P("w/a"), 0644, 0, "x", -EISDIR);
    write_all(P("w/a/"), 0644, 0, "x", -EISDIR);
    write_all(P("w/new/child"), 0644, 1, "x", -EEXIST);
    write_all(P("w/new/child"), 0644, 0, "x", -ENOTDIR);
    write_all(P("w/bad-mode"), 010000, 0, "x", -EINVAL);
    write_all("relative", 0644, 0, "x", -EINVAL);

    /* a symlink target is replaced by the file; what it pointed at is untouched */
    put(P("w/pointee"), "pointee", 0644);
    symlink(P("w/pointee"), P("w/link"));
    write_all(P("w/link"), 0640, 0, "now a file", 0);
    CHECK_EQ(lstat(P("w/link"), &st), 0);
    CHECK(S_ISREG(st.st_mode));
    slurp(P("w/pointee"), buf, sizeof buf);
    CHECK_STR(buf, "pointee");

    /* abort leaves nothing, and the target as it was */
    struct fs_write *w;
    CHECK_EQ(fs_write_begin(P("w/aborted"), 0644, 0, &w), 0);
    CHECK_EQ(temp_files(P("w")), 1);
    CHECK_EQ(fs_write_data(w, "zzz", 3), 0);
    fs_write_abort(w);
    CHECK(!exists(P("w/aborted")));
    CHECK_EQ(fs_write_begin(P("w/old"), 0644, 0, &w), 0);
    fs_write_abort(w);
    slurp(P("w/old"), buf, sizeof buf);
    CHECK_STR(buf, "replaced");
    fs_write_abort(NULL);
    CHECK_EQ(temp_files(P("w")), 0);

    /* commit without info; commit failing (target became a directory) removes the temporary file */
    CHECK_EQ(fs_write_begin(P("w/noinfo"), 0644, 0, &w), 0);
    CHECK_EQ(fs_write_commit(w, NULL), 0);
    CHECK(exists(P("w/noinfo")));
    CHECK_EQ(fs_write_begin(P("w/becomes-dir"), 0644, 0, &w), 0);
    mkdir(P("w/becomes-dir"), 0755);
    mkdir(P("w/becomes-dir/x"), 0755);
    struct fs_info i;
    int rc = fs_write_commit(w, &i);
    CHECK(rc == -EISDIR || rc == -ENOTEMPTY || rc == -EEXIST);
    CHECK_EQ(temp_files(P("w")), 0);
}

/* Lists path to depth; returns the count, and the paths (relative to root) joined by spaces into out. */
static int list(const char *path, uint32_t depth, char *out, size_t cap) {
    struct fs_list *l;
    int rc = fs_list_open(path, depth, &l);
    if (rc < 0) return rc;
    struct fs_info i;
    int n = 0;
    out[0] = 0;
    while ((rc = fs_list_next(l, &i)) == 1 && n < 100000) {
        n++;
        size_t used = strlen(out);
        fmt(out + used, cap - used, "%s%s", used ? " " : "", i.path + strlen(root) + 1);
        fs_info_free(&i);
    }
    fs_list_close(l);
    return rc < 0 ? rc : n;
}

static int has_word(const char *list, const char *word) {
    size_t n = strlen(word);
    for (const char *p = list; (p = strstr(p, word)); p += n)
        if ((p == list || p[-1] == ' ') && (p[n] == ' ' || p[n] == 0)) return 1;
    return 0;
}

static const char *word_at(const char *list, const char *word) {
    size_t n = strlen(word);
    for (const char *p = list; (p = strstr(p, word)); p += n)
        if ((p == list || p[-1] == ' ') && (p[n] == ' ' || p[n] == 0)) return p;
    return NULL;
}

static void test_list(void) {
    static char out[65536];
    mkdir(P("l"), 0755);
    put(P("l/a"), "a", 0644);
    mkdir(P("l/b"), 0755);
    put(P("l/b/c"), "c", 0644);
    mkdir(P("l/b/e"), 0755);
    put(P("l/b/e/f"), "f", 0644);
    mkdir(P("l/g"), 0755);
    put(P("l/g/h"), "h", 0644);
    put(P("l/.hidden"), "", 0644);
    symlink(P("l/b"), P("l/link-to-b"));

    CHECK_EQ(list(P("l"), 1, out, sizeof out), 5);
    CHECK(has_word(out, "l/a") && has_word(out, "l/b") && has_word(out, "l/.hidden") && has_word(out, "l/g"));
    CHECK(has_word(out, "l/link-to-b"));
    CHECK_EQ(list(P("l"), 2, out, sizeof out), 8);
    CHECK(has_word(out, "l/b/c") && has_word(out, "l/b/e") && has_word(out, "l/g/h"));
    CHECK(!has_word(out, "l/b/e/f"));
    CHECK(!has_word(out, "l/link-to-b/c")); /* a symlink is not followed */
    CHECK_EQ(list(P("l"), 3, out, sizeof out), 9);
    CHECK(has_word(out, "l/b/e/f"));
    CHECK_EQ(list(P("l"), 1000, out, sizeof out), 9); /* capped, not refused */
    /* depth first: a directory's entries come right after it, before its next sibling's */
    const char *b = word_at(out, "l/b"), *c = word_at(out, "l/b/c"), *f = word_at(out, "l/b/e/f");
    const char *g = word_at(out, "l/g"), *h = word_at(out, "l/g/h");
    CHECK(b && c && f && g && h);
    CHECK(b < c && b < f && h > g);
    CHECK((g > f && g > c) || (g < b && h < b));

    /* a trailing slash lists the same paths */
    char slash[PATH_MAX];
    fmt(slash, sizeof slash, "%s/", P("l"));
    CHECK_EQ(list(slash, 1, out, sizeof out), 5);
    CHECK(has_word(out, "l/a"));

    mkdir(P("l-empty"), 0755);
    CHECK_EQ(list(P("l-empty"), 3, out, sizeof out), 0);
    mkdir(P("l-dots"), 0755);
    put(P("l-dots/.a"), "", 0644);
    put(P("l-dots/..b"), "", 0644);
    CHECK_EQ(list(P("l-dots"), 1, out, sizeof out), 2);
    CHECK(has_word(out, "l-dots/.a") && has_word(out, "l-dots/..b"));

    CHECK_EQ(list(P("l/a"), 1, out, sizeof out), -ENOTDIR);
    CHECK_EQ(list(P("l/missing"), 1, out, sizeof out), -ENOENT);
    CHECK_EQ(list(P("l"), 0, out, sizeof out), -EINVAL);

    /* the entry info is lstat's */
    struct fs_list *l;
    struct fs_info i;
    CHECK_EQ(fs_list_open(P("l/b/e"), 1, &l), 0);
    CHECK_EQ(fs_list_next(l, &i), 1);
    CHECK_STR(i.path, P("l/b/e/f"));
    CHECK_EQ(i.type, FS_FILE);
    CHECK_EQ(i.size, 1);
    fs_info_free(&i);
    CHECK_EQ(fs_list_next(l, &i), 0);
    CHECK_EQ(fs_list_next(l, &i), 0); /* stays at the end */
    fs_list_close(l);
    /* closed half way: nothing leaks (the sanitized run checks) */
    CHECK_EQ(fs_list_open(P("l"), 3, &l), 0);
    CHECK_EQ(fs_list_next(l, &i), 1);
    fs_info_free(&i);
    fs_list_close(l);
    fs_list_close(NULL);

    /* long names: a chain of 250-byte directory names whose full paths pass PATH_MAX; those entries are skipped */
    mkdir(P("l-long"), 0755);
    char name[251];
    memset(name, 'n', 250);
    name[250] = 0;
    int dfd = open(P("l-long"), O_RDONLY | O_DIRECTORY);
    int levels = 0;
    for (; levels < 20; levels++) {
        if (mkdirat(dfd, name, 0755) < 0) break;
        int next = openat(dfd, name, O_RDONLY | O_DIRECTORY);
        close(dfd);
        dfd = next;
        if (dfd < 0) break;
    }
    if (dfd >= 0) close(dfd);
    CHECK_EQ(levels, 20);
    size_t base = strlen(P("l-long"));
    int fit = 0; /* how many levels have a path shorter than PATH_MAX */
    while (fit < levels && base + (size_t)(fit + 1) * 251 < PATH_MAX) fit++;
    CHECK_EQ(fs_list_open(P("l-long"), 64, &l), 0);
    int n = 0, rc;
    while ((rc = fs_list_next(l, &i)) == 1) {
        CHECK(strlen(i.path) < PATH_MAX);
        CHECK_EQ(i.type, FS_DIR);
        n++;
        fs_info_free(&i);
    }
    CHECK_EQ(rc, 0);
    CHECK_EQ(n, fit);
    fs_list_close(l);
    /* the tree is beyond PATH_MAX: remove it bottom up with the fd-relative walk */
    CHECK_EQ(fs_remove(P("l-long"), 1), 0);
    CHECK(!exists(P("l-long")));
}

static void test_mkdir(void) {
    struct stat st;
    CHECK_EQ(fs_mkdir(P("m/a/b"), 0755, 0), -ENOENT);
    mode_t old = umask(0);
    CHECK_EQ(fs_mkdir(P("m/a/b"), 0700, 1), 0);
    umask(old);
    CHECK_EQ(lstat(P("m/a"), &st), 0);
    CHECK(S_ISDIR(st.st_mode));
    CHECK_EQ(st.st_mode & 07777, 0755);
    CHECK_EQ(lstat(P("m/a/b"), &st), 0);
    CHECK_EQ(st.st_mode & 07777, 0700);
    CHECK_EQ(fs_mkdir(P("m/a/b"), 0755, 1), 0);
    CHECK_EQ(fs_mkdir(P("m/a/b/"), 0755, 1), 0);
    CHECK_EQ(fs_mkdir(P("m/a/b"), 0755, 0), -EEXIST);
    CHECK_EQ(fs_mkdir(P("m/c"), 0750, 0), 0);
    put(P("m/file"), "", 0644);
    CHECK_EQ(fs_mkdir(P("m/file"), 0755, 1), -EEXIST);
    CHECK_EQ(fs_mkdir(P("m/file/sub"), 0755, 1), -ENOTDIR);
    CHECK_EQ(fs_mkdir(P("m/bad"), 0100000, 1), -EINVAL);
    /* a symlink to a directory counts as an existing parent, as with mkdir -p */
    symlink(P("m/a"), P("m/link"));
    CHECK_EQ(fs_mkdir(P("m/link/d"), 0755, 1), 0);
    CHECK(exists(P("m/a/d")));
}

static void test_remove(void) {
    put(P("x-file"), "", 0644);
    CHECK_EQ(fs_remove(P("x-file"), 0), 0);
    CHECK(!exists(P("x-file")));
    CHECK_EQ(fs_remove(P("x-file"), 0), -ENOENT);
    mkdir(P("x-empty"), 0755);
    CHECK_EQ(fs_remove(P("x-empty"), 0), 0);
    CHECK(!exists(P("x-empty")));

    /* a tree with a symlink to a directory outside: the link goes, what it points at stays */
    mkdir(P("outside"), 0755);
    put(P("outside/keep"), "keep", 0644);
    fs_mkdir(P("x/a/b/c"), 0755, 1);
    put(P("x/a/f"), "", 0644);
    put(P("x/a/b/c/g"), "", 0644);
    mkfifo(P("x/a/fifo"), 0600);
    symlink(P("outside"), P("x/a/b/out"));
    symlink(P("outside"), P("x/out"));
    chmod(P("x/a/b"), 0500); /* root removes inside anyway; a non-root agent would get EACCES */
    CHECK_EQ(fs_remove(P("x"), 0), -ENOTEMPTY);
    CHECK(exists(P("x/a/f")));
    CHECK_EQ(fs_remove(P("x"), 1), 0);
    CHECK(!exists(P("x")));
    CHECK(exists(P("outside/keep")));

    /* a symlink to a directory, removed recursively, is just unlinked */
    symlink(P("outside"), P("x-link"));
    CHECK_EQ(fs_remove(P("x-link"), 1), 0);
    CHECK(!exists(P("x-link")));
    CHECK(exists(P("outside/keep")));

    /* deeper than the bound: -ELOOP, no crash; then remove it from half way down */
    mkdir(P("deep"), 0755);
    int dfd = open(P("deep"), O_RDONLY | O_DIRECTORY);
    for (int k = 0; k < 300 && dfd >= 0; k++) {
        mkdirat(dfd, "d", 0755);
        int next = openat(dfd, "d", O_RDONLY | O_DIRECTORY);
        close(dfd);
        dfd = next;
    }
    if (dfd >= 0) close(dfd);
    CHECK_EQ(fs_remove(P("deep"), 1), -ELOOP);
    char mid[PATH_MAX];
    int len = fmt(mid, sizeof mid, "%s", P("deep"));
    for (int k = 0; k < 100; k++) len += fmt(mid + len, sizeof mid - (size_t)len, "/d");
    CHECK_EQ(fs_remove(mid, 1), 0);
    CHECK_EQ(fs_remove(P("deep"), 1), 0);
    CHECK(!exists(P("deep")));
}

static void test_move(void) {
    put(P("mv-a"), "a", 0644);
    CHECK_EQ(fs_move(P("mv-a"), P("mv-b")), 0);
    CHECK(!exists(P("mv-a")));
    CHECK(exists(P("mv-b")));
    CHECK_EQ(fs_move(P("mv-a"), P("mv-b")), -ENOENT);
    mkdir(P("mv-d"), 0755);
    put(P("mv-d/x"), "", 0644);
    CHECK_EQ(fs_move(P("mv-b"), P("mv-d")), -EISDIR);
    fs_remove(P("mv-d"), 1);
    fs_remove(P("mv-b"), 0);
}

static void test_symlink_chmod(void) {
    put(P("ln-f"), "x", 0644);
    CHECK_EQ(fs_symlink("ln-f", P("ln-l")), 0);
    char buf[64] = {0};
    CHECK_EQ(readlink(P("ln-l"), buf, sizeof buf - 1), 4);
    CHECK(strcmp(buf, "ln-f") == 0);
    CHECK_EQ(fs_symlink("elsewhere", P("ln-l")), -EEXIST);
    CHECK_EQ(fs_chmod(P("ln-f"), 0755), 0);
    struct stat st;
    CHECK_EQ(stat(P("ln-f"), &st), 0);
    CHECK_EQ(st.st_mode & 07777, 0755);
    /* through a link: the link is left alone, its target keeps its mode */
    CHECK_EQ(fs_chmod(P("ln-l"), 0600), 0);
    CHECK_EQ(stat(P("ln-f"), &st), 0);
    CHECK_EQ(st.st_mode & 07777, 0755);
    CHECK_EQ(fs_chmod(P("ln-f"), 010000), -EINVAL);
    CHECK_EQ(fs_chmod(P("ln-none"), 0644), -ENOENT);
    fs_remove(P("ln-l"), 0);
    fs_remove(P("ln-f"), 0);
}

/* ---- watches ---- */

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

static void test_watch_basic(void) {
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

static void test_watch_recursive(void) {
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

static void test_watch_atomic_write(void) {
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
static void test_watch_walk_no_duplicates(void) {
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
static void test_watch_fast_trees(void) {
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

static void test_watch_overflow(void) {
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
static void test_watch_too_deep(void) {
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

static void test_watch_root_deleted(void) {
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

/* Open file descriptors of this process: every operation must give back what it opened. */
static int count_fds(void) {
    DIR *d = opendir("/proc/self/fd");
    if (!d) return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d))) n += e->d_name[0] != '.';
    closedir(d);
    return n;
}

int main(void) {
    const char *tmp = getenv("TMPDIR");
    fmt(root, sizeof root, "%s/test_fs.XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(root)) {
        perror("mkdtemp");
        return 2;
    }
    int fds = count_fds();
    test_stat();
    test_read();
    test_write();
    test_list();
    test_mkdir();
    test_remove();
    test_move();
    test_symlink_chmod();
    test_watch_basic();
    test_watch_recursive();
    test_watch_atomic_write();
    test_watch_walk_no_duplicates();
    test_watch_fast_trees();
    test_watch_overflow();
    test_watch_too_deep();
    test_watch_root_deleted();
    CHECK_EQ(count_fds(), fds); /* no descriptor leaked: watches, listings, writes, reads closed */
    int rc = fs_remove(root, 1);
    if (rc < 0) fprintf(stderr, "cleanup of %s: %s\n", root, strerror(-rc));
    printf("test_fs: %d checks, %d failed\n", checks, failures);
    return failures ? 1 : 0;
}
