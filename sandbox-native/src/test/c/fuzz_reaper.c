/*
 * fuzz_reaper.c: a libFuzzer target for what sandbox-reaper reads from the Docker daemon. One input is an answer to
 * the listing request: the HTTP reader (resp_feed, fed in slices of the size the first byte gives, as a socket may
 * cut them), then, when the answer is complete, the JSON scan of its body (parse_list) and the checks and decision
 * the round makes for each container. The input after the first byte is also scanned as a body on its own, so the
 * JSON scanner is fuzzed without having to find a valid HTTP head first.
 * Checked: the answer read in slices gives what it gives read whole (completion, status, body); the reader never holds
 * more than its bounds and is complete only with no body bytes still due; a failed scan hands out nothing; a listed
 * container's strings are NUL-terminated within their fields; the decision is one of the five.
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

/* Feeds n bytes in slices of step, then the end of the stream: 1 complete, -1 refused (or cut short). */
static int feed_all(struct resp *r, const char *d, size_t n, size_t step) {
    int f = 0;
    for (size_t at = 0; at < n && f == 0; at += step) f = resp_feed(r, d + at, n - at < step ? n - at : step);
    if (f == 0) f = resp_finish(r) == 0 ? 1 : -1;
    if (r->hlen >= sizeof r->head || r->llen >= sizeof r->line || r->body.len > MAX_BODY) fail("a bound passed");
    if (f == 1 && r->state != H_DONE) fail("complete but not done");
    if (f == 1 && r->state == H_DONE && r->remaining != 0 && !(r->status / 100 == 1 || r->status == 204
                                                                || r->status == 304)) {
        fail("complete with bytes still due");
    }
    return f;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1) return 0;
    size_t step = data[0] ? (size_t)data[0] : size;
    const char *d = (const char *)data + 1;
    size_t n = size - 1;
    check_list(d, n);

    /* the same answer read whole and read in slices: the reader keeps no state that depends on where a read ends */
    struct resp *whole = calloc(1, sizeof *whole), *r = calloc(1, sizeof *r);
    if (!whole || !r) fail("calloc");
    int fw = feed_all(whole, d, n, n ? n : 1), f = feed_all(r, d, n, step);
    if (f != fw || (f == 1 && (r->status != whole->status || r->body.len != whole->body.len
                               || (r->body.len && memcmp(r->body.p, whole->body.p, r->body.len) != 0)))) {
        fail("an answer read in slices differs from the same answer read whole");
    }
    if (f == 1) check_list(r->body.p ? r->body.p : "", r->body.len);
    free(whole->body.p);
    free(whole);
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
