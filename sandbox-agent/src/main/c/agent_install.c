/*
 * agent_install.c: the `install DIR` mode. An init container whose image holds only this binary copies it into a
 * volume the session container shares (DIR/sandbox-agent, mode 0555), so that the session's own image needs nothing.
 * The copy is atomic: the bytes go to a new temporary name in DIR (O_EXCL), are synced and made 0555, then renamed
 * over DIR/sandbox-agent; a reader of DIR sees the old file or the whole new one, never a part.
 */
#include "agent.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define INSTALL_NAME "sandbox-agent"

static int install_fail(const char *dir, const char *what, int err) {
    fprintf(stderr, "sandbox-agent: install into '%s': %s: %s\n", dir, what, strerror(err));
    return 1;
}

/* Copies every byte of in to out: 0, or -1 with errno set (a short write that makes no progress is ENOSPC). */
static int copy_all(int in, int out) {
    static uint8_t buf[65536];
    for (;;) {
        ssize_t n = read(in, buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return -1;
        if (n == 0) return 0;
        size_t len = (size_t)n, off = 0;
        while (off < len) {
            ssize_t k = write(out, buf + off, len - off);
            if (k < 0 && errno == EINTR) continue;
            if (k < 0) return -1;
            if (k == 0) {
                errno = ENOSPC;
                return -1;
            }
            off += (size_t)k;
        }
    }
}

int install_self(const char *dir) {
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0) {
        if (errno == ENOTDIR) {
            fprintf(stderr, "sandbox-agent: install: '%s' is not a directory\n", dir);
            return 1;
        }
        return install_fail(dir, "cannot open the directory", errno);
    }
    int in = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
    if (in < 0) {
        int e = errno;
        close(dfd);
        return install_fail(dir, "cannot read /proc/self/exe", e);
    }
    char tmp[64];
    int len = snprintf(tmp, sizeof tmp, "." INSTALL_NAME ".%ld.tmp", (long)getpid());
    if (len < 0 || (size_t)len >= sizeof tmp) { /* cannot happen with a pid, but checked like every length */
        close(in);
        close(dfd);
        fprintf(stderr, "sandbox-agent: install into '%s': temporary name too long\n", dir);
        return 1;
    }
    int out = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (out < 0) {
        int e = errno;
        close(in);
        close(dfd);
        return install_fail(dir, "cannot create a temporary file", e);
    }
    const char *step = NULL; /* the step that failed */
    if (copy_all(in, out) < 0) step = "copy";
    else if (fchmod(out, 0555) < 0) step = "fchmod";
    else if (fsync(out) < 0) step = "fsync";
    int e = errno;
    if (close(out) < 0 && !step) step = "close", e = errno;
    close(in);
    if (!step && renameat(dfd, tmp, dfd, INSTALL_NAME) < 0) step = "rename", e = errno;
    if (step) {
        unlinkat(dfd, tmp, 0);
        close(dfd);
        return install_fail(dir, step, e);
    }
    /* the rename itself durable; a file system that cannot sync a directory (EINVAL) still has the file */
    if (fsync(dfd) < 0 && errno != EINVAL) {
        e = errno;
        close(dfd);
        return install_fail(dir, "fsync of the directory", e);
    }
    close(dfd);
    return 0;
}
