/*
 * fuzz_reaper.c: a libFuzzer target for what sandbox-reaper reads from the Docker daemon. One input is an answer to
 * the listing request: the HTTP reader (resp_feed, fed in slices of the size the first byte gives, as a socket may
 * cut them), then, when the answer is complete, the JSON scan of its body (parse_list) and the checks and decision
 * the round makes for each container. The input after the first byte is also scanned as a body on its own, so the
 * JSON scanner is fuzzed without having to find a valid HTTP head first.
 * Checked: the reader never holds more than its bounds; a complete Content-Length body has exactly that length; a
 * listed container's strings are NUL-terminated within their fields.
 *
 * Built twice: with clang -fsanitize=fuzzer (make fuzz), and with FUZZ_REPLAY by the plain compiler under
 * ASan/UBSan (make test), which replays the kept corpus and the regression inputs given as arguments.
 */
#define REAPER_TEST
#include "../../main/c/sandbox-reaper.c"

#include <stdint.h>

/* the round itself talks to Docker: not fuzzed here (its parts are) */
static int (*const round_unused)(const struct opts *) __attribute__((unused)) = reap_round;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fail(const char *what) {
    fprintf(stderr, "fuzz_reaper: %s\n", what);
    abort();
}

/* what one round does with a parsed listing, without the Docker calls; state is a directory that does not exist */
static void check_list(const char *body, size_t len) {
    struct container *cs;
    size_t n;
    int more;
    if (parse_list(body, len, &cs, &n, &more) != 0) {
        if (cs || n) fail("a failed parse handed out containers");
        return;
    }
    for (size_t i = 0; i < n; i++) {
        const struct container *c = &cs[i];
        if (memchr(c->id, 0, sizeof c->id) == NULL || memchr(c->state, 0, sizeof c->state) == NULL
            || memchr(c->session, 0, sizeof c->session) == NULL || memchr(c->expires, 0, sizeof c->expires) == NULL
            || memchr(c->lease, 0, sizeof c->lease) == NULL) {
            fail("a container field without its NUL");
        }
        if (valid_id(c) && valid_session(c)) {
            int d = decide(c, "/nonexistent/sandbox-reaper-fuzz-state", 1700000000);
            if (d < KEEP || d > R_NEVER_STARTED) fail("a decision out of range");
        }
    }
    free(cs);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1) return 0;
    size_t step = data[0] ? (size_t)data[0] : size;
    const char *d = (const char *)data + 1;
    size_t n = size - 1;
    check_list(d, n);

    struct resp *r = calloc(1, sizeof *r);
    if (!r) fail("calloc");
    int f = 0;
    for (size_t at = 0; at < n && f == 0; at += step) f = resp_feed(r, d + at, n - at < step ? n - at : step);
    if (f == 0) f = resp_finish(r) == 0 ? 1 : -1;
    if (r->hlen >= sizeof r->head || r->llen >= sizeof r->line || r->body.len > MAX_BODY) fail("a bound passed");
    if (f == 1) {
        if (r->state != H_DONE) fail("complete but not done");
        check_list(r->body.p ? r->body.p : "", r->body.len);
    }
    free(r->body.p);
    free(r);
    return 0;
}

#ifdef FUZZ_REPLAY
#include <dirent.h>

/* Replays files (or every file of directories) through the target: the kept corpus and the regression inputs. */
static int replay(const char *path, int *count) {
    struct stat st;
    if (stat(path, &st) < 0) return fprintf(stderr, "%s: %s\n", path, strerror(errno)), -1;
    if (S_ISDIR(st.st_mode)) {
        struct dirent **names;
        int k = scandir(path, &names, NULL, alphasort), rc = 0;
        for (int i = 0; i < k; i++) {
            char sub[4096];
            if (names[i]->d_name[0] != '.' && (size_t)snprintf(sub, sizeof sub, "%s/%s", path, names[i]->d_name)
                < sizeof sub) {
                rc |= replay(sub, count);
            }
            free(names[i]);
        }
        free(k >= 0 ? names : NULL);
        return rc;
    }
    FILE *fp = fopen(path, "rb");
    if (!fp) return -1;
    uint8_t *b = malloc((size_t)st.st_size + 1);
    if (!b) fail("malloc");
    size_t n = fread(b, 1, (size_t)st.st_size, fp);
    fclose(fp);
    LLVMFuzzerTestOneInput(b, n);
    free(b);
    (*count)++;
    return 0;
}

int main(int argc, char **argv) {
    int count = 0, rc = 0;
    for (int i = 1; i < argc; i++) rc |= replay(argv[i], &count);
    printf("fuzz_reaper replay: %d inputs, none crashed\n", count);
    return rc ? 1 : 0;
}
#endif
