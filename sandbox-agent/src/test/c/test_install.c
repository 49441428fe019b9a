/*
 * test_install.c: tests of `sandbox-agent install DIR`, run against the binary given as argv[1] (the shipped build and
 * the ASan/UBSan one): the copy lands as DIR/sandbox-agent, mode 0555, byte for byte the binary, nothing else left in
 * DIR, and the copy runs; installing again replaces it; a DIR that is a file or is missing fails with a message
 * naming it. Every wait is bounded (the child is killed after WAIT_S seconds).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define WAIT_S 30

static int failures;

#define CHECK(cond, ...)                                                                                               \
    do {                                                                                                               \
        if (!(cond)) {                                                                                                 \
            fprintf(stderr, "FAIL test_install (%s:%d): %s: ", __FILE__, __LINE__, #cond);                            \
            fprintf(stderr, __VA_ARGS__);                                                                              \
            fprintf(stderr, "\n");                                                                                     \
            failures++;                                                                                                \
        }                                                                                                              \
    } while (0)

/* Runs prog with one or two arguments; its stdout and stderr (up to cap - 1 bytes) in out; its exit code, or -1. */
static int run(const char *prog, const char *a1, const char *a2, char *out, size_t cap) {
    int p[2];
    if (pipe(p) < 0) return -1;
    pid_t pid = fork();
    if (pid == 0) {
        dup2(p[1], 1);
        dup2(p[1], 2);
        close(p[0]);
        alarm(WAIT_S); /* survives exec: a hung child is killed */
        execl(prog, prog, a1, a2, (char *)NULL);
        _exit(127);
    }
    close(p[1]);
    size_t n = 0;
    for (;;) {
        ssize_t k = read(p[0], out + n, cap - 1 - n);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) break;
        n += (size_t)k;
        if (n == cap - 1) break;
    }
    out[n] = 0;
    close(p[0]);
    int st;
    if (waitpid(pid, &st, 0) != pid) return -1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* 1 when the files at a and b hold the same bytes. */
static int same_bytes(const char *a, const char *b) {
    FILE *fa = fopen(a, "rb"), *fb = fopen(b, "rb");
    int same = fa && fb;
    while (same) {
        int ca = fgetc(fa), cb = fgetc(fb);
        if (ca != cb) same = 0;
        if (ca == EOF) break;
    }
    if (fa) fclose(fa);
    if (fb) fclose(fb);
    return same;
}

/* The number of entries of dir besides . and .., or -1. */
static int entries(const char *dir) {
    DIR *d = opendir(dir);
    if (!d) return -1;
    int n = 0;
    for (struct dirent *e; (e = readdir(d));)
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) n++;
    closedir(d);
    return n;
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: test_install PATH-TO-sandbox-agent\n");
        return 2;
    }
    const char *agent = argv[1];
    char dir[64], copy[96], file[96], missing[96], out[4096];
    snprintf(dir, sizeof dir, "/tmp/test_install.XXXXXX");
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    snprintf(copy, sizeof copy, "%s/sandbox-agent", dir);
    snprintf(file, sizeof file, "%s/a-file", dir);
    snprintf(missing, sizeof missing, "%s/missing", dir);

    int rc = run(agent, "install", dir, out, sizeof out);
    CHECK(rc == 0, "install exited %d: %s", rc, out);
    struct stat st;
    CHECK(stat(copy, &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & 07777) == 0555, "%s: mode %o", copy,
          (unsigned)(st.st_mode & 07777));
    CHECK(same_bytes(agent, copy), "%s differs from %s", copy, agent);
    CHECK(entries(dir) == 1, "%d entries in %s (a temporary file left behind?)", entries(dir), dir);
    rc = run(copy, "--version", NULL, out, sizeof out);
    CHECK(rc == 0 && strncmp(out, "sandbox-agent ", 14) == 0 && strstr(out, " protocol 1..1\n"),
          "installed copy --version exited %d: '%s'", rc, out);

    /* again, over the 0555 copy: replaced by the rename, still one file */
    rc = run(agent, "install", dir, out, sizeof out);
    CHECK(rc == 0, "second install exited %d: %s", rc, out);
    CHECK(same_bytes(agent, copy) && entries(dir) == 1, "after a second install");

    /* a DIR that is a regular file, and one that does not exist: non-zero, the message names it */
    int fd = open(file, O_WRONLY | O_CREAT | O_EXCL, 0600);
    CHECK(fd >= 0, "create %s", file);
    if (fd >= 0) close(fd);
    rc = run(agent, "install", file, out, sizeof out);
    CHECK(rc != 0 && strstr(out, file) && strstr(out, "not a directory"), "install into a file: %d '%s'", rc, out);
    rc = run(agent, "install", missing, out, sizeof out);
    CHECK(rc != 0 && strstr(out, missing), "install into a missing directory: %d '%s'", rc, out);
    rc = run(agent, "install", NULL, out, sizeof out);
    CHECK(rc == 2 && strstr(out, "install DIR"), "install without DIR: %d '%s'", rc, out);

    unlink(copy);
    unlink(file);
    rmdir(dir);
    printf("%s install (%s)\n", failures ? "FAIL" : "ok  ", agent);
    return failures ? 1 : 0;
}
