/*
 * test_fs.c: unit tests of agent_fs.c on the real file system, in a fresh mkdtemp directory removed at the end: the
 * shared helpers (test_fs.h), the tests of the file operations, and main, which also runs the watch tests of
 * test_fs_watch.c and checks that no descriptor leaked.
 */
#include "agent_fs.h"
#include "test_fs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

int failures, checks;

char root[PATH_MAX];

/* snprintf that stops the test on truncation (the paths here are built to fit); returns the length. */
int fmt(char *buf, size_t cap, const char *f, ...) {
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
const char *P(const char *rel) {
    static char bufs[8][PATH_MAX];
    static int next;
    char *b = bufs[next++ % 8];
    fmt(b, PATH_MAX, "%s/%s", root, rel);
    return b;
}

void put(const char *path, const char *content, mode_t mode) {
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
