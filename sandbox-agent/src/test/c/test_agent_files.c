/*
 * test_agent_files.c: file operations and watches through the protocol (agent_fs.c does the work; its own unit tests
 * are test_fs.c and test_fs_watch.c). Skipped while the agent is built with the agent_fs stub, which answers ENOSYS.
 * The harness is agent_test.c (agent_test.h).
 */
#include "agent_test.h"

#include <errno.h>
#include <string.h>

/* An INFO payload: type, mode, size and path. */
static void parse_info(const uint8_t *p, uint8_t *type, uint32_t *mode, uint64_t *size, char *path, size_t cap) {
    *type = p[0];
    *mode = g32(p + 1);
    *size = g64(p + 13);
    uint32_t n = g32(p + 29);
    CHECK(n < cap, "path length %u", n);
    memcpy(path, p + 33, n);
    path[n] = 0;
}

static void fs_req(int fd, uint8_t type, uint32_t id, const char *path, const void *rest, size_t n) {
    struct buf *b = malloc(sizeof *b);
    b->n = 0;
    b_str(b, path);
    b_bytes(b, rest, n);
    sendb(fd, type, id, b);
    free(b);
}

void t_files(void) {
    struct agent a = start_stdio();
    hello(a.fd);
    struct frame *f = malloc(sizeof *f);
    char dir[128], file[160], moved[160], sub[160], got_path[4096];
    snprintf(dir, sizeof dir, "%s/files", tmpdir);
    snprintf(file, sizeof file, "%s/a.txt", dir);
    snprintf(moved, sizeof moved, "%s/b.txt", dir);
    snprintf(sub, sizeof sub, "%s/sub", dir);
    uint8_t mk[5] = {0, 0, 0x01, 0xed, 1}; /* mode 0755, parents */
    fs_req(a.fd, 0x24, 1, dir, mk, 5);
    expect_on(a.fd, 1, f);
    if (f->type == 0xEE && g32(f->p) == ENOSYS) {
        printf("  skipped: the agent was built with the agent_fs stub\n");
        free(f);
        stop_agent(&a);
        return;
    }
    CHECK(f->type == 0x80, "MKDIR: 0x%02x", f->type);
    /* WATCH first, so the write below shows up */
    struct buf b = {.n = 0};
    b_u8(&b, 0);
    b_u32(&b, 4096);
    fs_req(a.fd, 0x27, 2, dir, b.d, b.n);
    expect_on(a.fd, 2, f);
    CHECK(f->type == 0x98 && g32(f->p) == 0, "WATCH READY: 0x%02x", f->type);
    /* WRITE */
    b.n = 0;
    b_u32(&b, 0640);
    b_u32(&b, 0);
    b_u32(&b, 0);
    fs_req(a.fd, 0x21, 3, file, b.d, b.n);
    expect_on(a.fd, 3, f);
    CHECK(f->type == 0x98 && g32(f->p) > 0, "WRITE READY: 0x%02x", f->type);
    send_frame(a.fd, 0x11, 3, "hello, file", 11);
    send_frame(a.fd, 0x12, 3, NULL, 0);
    expect_on(a.fd, 3, f);
    CHECK(f->type == 0x80, "WRITE OK: 0x%02x", f->type);
    uint8_t type;
    uint32_t mode;
    uint64_t size;
    parse_info(f->p, &type, &mode, &size, got_path, sizeof got_path);
    CHECK(type == 1 && mode == 0640 && size == 11 && strcmp(got_path, file) == 0, "info %u %o %llu %s", type, mode,
          (unsigned long long)size, got_path);
    expect_on(a.fd, 2, f);
    CHECK(f->type == 0x97 && f->p[0] == 1, "EVENT created: 0x%02x kind %u", f->type, f->p[0]);
    CHECK(g32(f->p + 1) == strlen(file) && memcmp(f->p + 5, file, strlen(file)) == 0, "event path");
    /* READ from offset 7 with a credit of 2, then more */
    b.n = 0;
    b_u64(&b, 7);
    b_u64(&b, UINT64_MAX);
    b_u32(&b, 2);
    fs_req(a.fd, 0x20, 4, file, b.d, b.n);
    expect_on(a.fd, 4, f);
    CHECK(f->type == 0x94 && f->len == 2 && memcmp(f->p, "fi", 2) == 0, "READ DATA 0x%02x len %u", f->type, f->len);
    ping(a.fd, 5); /* nothing more without credit */
    credit(a.fd, 4, 0, 100);
    expect_on(a.fd, 4, f);
    CHECK(f->type == 0x94 && f->len == 2 && memcmp(f->p, "le", 2) == 0, "READ rest");
    expect_on(a.fd, 4, f);
    CHECK(f->type == 0x95, "END");
    /* a ranged READ: 3 bytes from offset 2, then END; a range past the end: END at once */
    b.n = 0;
    b_u64(&b, 2);
    b_u64(&b, 3);
    b_u32(&b, 100);
    fs_req(a.fd, 0x20, 40, file, b.d, b.n);
    expect_on(a.fd, 40, f);
    CHECK(f->type == 0x94 && f->len == 3 && memcmp(f->p, "llo", 3) == 0, "ranged READ 0x%02x len %u", f->type,
          f->len);
    expect_on(a.fd, 40, f);
    CHECK(f->type == 0x95, "ranged READ END");
    b.n = 0;
    b_u64(&b, 1000);
    b_u64(&b, 5);
    b_u32(&b, 100);
    fs_req(a.fd, 0x20, 41, file, b.d, b.n);
    expect_on(a.fd, 41, f);
    CHECK(f->type == 0x95, "READ past the end: END, got 0x%02x", f->type);
    /* STAT, LIST, MOVE, REMOVE */
    fs_req(a.fd, 0x23, 5, file, NULL, 0);
    expect_on(a.fd, 5, f);
    CHECK(f->type == 0x80 && f->p[0] == 1, "STAT");
    fs_req(a.fd, 0x24, 6, sub, mk, 5);
    expect_on(a.fd, 6, f);
    CHECK(f->type == 0x80, "MKDIR sub");
    /* an empty directory lists as END alone, at any depth */
    b.n = 0;
    b_u32(&b, 3);
    b_u32(&b, 1 << 20);
    fs_req(a.fd, 0x22, 42, sub, b.d, b.n);
    expect_on(a.fd, 42, f);
    CHECK(f->type == 0x95, "LIST of an empty directory: END, got 0x%02x", f->type);
    b.n = 0;
    b_u32(&b, 1);
    b_u32(&b, 1 << 20);
    fs_req(a.fd, 0x22, 7, dir, b.d, b.n);
    int entries = 0;
    for (;;) {
        expect_on(a.fd, 7, f);
        if (f->type == 0x95) break;
        CHECK(f->type == 0x96, "ENTRY 0x%02x", f->type);
        entries++;
    }
    CHECK(entries == 2, "%d entries", entries);
    b.n = 0;
    b_str(&b, moved);
    fs_req(a.fd, 0x26, 8, file, b.d, b.n);
    expect_on(a.fd, 8, f);
    CHECK(f->type == 0x80, "MOVE");
    fs_req(a.fd, 0x23, 9, file, NULL, 0);
    expect_error(a.fd, 9, ENOENT, f);
    /* SYMLINK (a relative target, stored as given; an existing path is EEXIST), CHMOD (not through a link) */
    char link[180];
    snprintf(link, sizeof link, "%s/l", dir);
    b.n = 0;
    b_str(&b, "b.txt");
    fs_req(a.fd, 0x28, 13, link, b.d, b.n);
    expect_on(a.fd, 13, f);
    CHECK(f->type == 0x80, "SYMLINK: 0x%02x", f->type);
    fs_req(a.fd, 0x28, 14, link, b.d, b.n);
    expect_error(a.fd, 14, EEXIST, f);
    b.n = 0;
    b_str(&b, "");
    fs_req(a.fd, 0x28, 15, link, b.d, b.n);
    expect_error(a.fd, 15, EINVAL, f);
    b.n = 0;
    b_u32(&b, 0700);
    fs_req(a.fd, 0x29, 16, moved, b.d, b.n);
    expect_on(a.fd, 16, f);
    CHECK(f->type == 0x80, "CHMOD: 0x%02x", f->type);
    fs_req(a.fd, 0x29, 17, link, b.d, b.n); /* the link is left alone, and its target too */
    expect_on(a.fd, 17, f);
    CHECK(f->type == 0x80, "CHMOD of a link: 0x%02x", f->type);
    fs_req(a.fd, 0x23, 18, moved, NULL, 0);
    expect_on(a.fd, 18, f);
    parse_info(f->p, &type, &mode, &size, got_path, sizeof got_path);
    CHECK(f->type == 0x80 && mode == 0700, "mode after CHMOD %o", mode);
    b.n = 0;
    b_u32(&b, 010000);
    fs_req(a.fd, 0x29, 19, moved, b.d, b.n);
    expect_error(a.fd, 19, EINVAL, f);
    uint8_t rec = 1;
    fs_req(a.fd, 0x25, 10, dir, &rec, 1);
    expect_on(a.fd, 10, f);
    CHECK(f->type == 0x80, "REMOVE");
    fs_req(a.fd, 0x23, 11, "relative/path", NULL, 0);
    expect_error(a.fd, 11, EINVAL, f);
    b.n = 0;
    b_u32(&b, 1);
    b_u32(&b, 100);
    fs_req(a.fd, 0x22, 12, "/etc/passwd", b.d, b.n);
    expect_error(a.fd, 12, ENOTDIR, f);
    send_frame(a.fd, 0x1F, 2, NULL, 0);
    ping(a.fd, 6);
    free(f);
    stop_agent(&a);
}
