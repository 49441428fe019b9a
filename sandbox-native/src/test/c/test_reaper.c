/*
 * Unit tests of sandbox-reaper's HTTP reader, JSON scanner, decision and state-store garbage collection.
 * Built twice by the Makefile: plain and with -fsanitize=address,undefined. Exit 0 when every check passes.
 */
#define REAPER_TEST
#include "../../main/c/sandbox-reaper.c"

#include <sys/stat.h>
#include <sys/wait.h>

static int failures, checks;
#define CHECK(cond)                                                                   \
    do {                                                                              \
        checks++;                                                                     \
        if (!(cond)) failures++, fprintf(stderr, "FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond); \
    } while (0)

#define ID_A "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
#define ID_B "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

/* a realistic list: nested Ports, Mounts, NetworkSettings, escapes, unicode, numbers of every shape */
static const char LIST[] =
    "[{\"Id\":\"" ID_A "\",\"Names\":[\"/s1\"],\"Image\":\"sandbox-test:busybox\",\"Command\":\"sleep 600\","
    "\"Created\":1700000000,\"Ports\":[],\"Labels\":{\"dev.sandbox.session\":\"s-1\","
    "\"dev.sandbox.expires-at\":\"1700000600\",\"dev.sandbox.lease-seconds\":\"30\",\"other\":\"x\\\"y\\\\z\\/\"},"
    "\"State\":\"running\",\"Status\":\"Up 2 minutes\",\"HostConfig\":{\"NetworkMode\":\"none\"},"
    "\"NetworkSettings\":{\"Networks\":{\"none\":{\"IPAMConfig\":null,\"Links\":null,\"MacAddress\":\"\","
    "\"IPPrefixLen\":0,\"Ratio\":-1.5e-3,\"Ok\":true,\"No\":false}}},\"Mounts\":[{\"Type\":\"volume\",\"RW\":true}]},\n"
    " {\"Id\":\"" ID_B "\",\"Created\":1700000001,\"State\":\"exited\",\"Labels\":{\"dev.sandbox.session\":"
    "\"\\u0073\\u002D2\",\"note\":\"caf\\u00e9 \\ud83d\\ude00\"}}]";

static int parse(const char *s, struct container **cs, size_t *n) {
    int more;
    return parse_list(s, strlen(s), cs, n, &more);
}

static void test_normal_list(void) {
    struct container *cs;
    size_t n;
    CHECK(parse(LIST, &cs, &n) == 0);
    CHECK(n == 2);
    if (n != 2) return;
    CHECK(valid_id(&cs[0]) && !strcmp(cs[0].id, ID_A));
    CHECK(!strcmp(cs[0].state, "running"));
    CHECK(cs[0].has_created && cs[0].created == 1700000000);
    CHECK(valid_session(&cs[0]) && !strcmp(cs[0].session, "s-1"));
    CHECK(!strcmp(cs[0].expires, "1700000600") && !strcmp(cs[0].lease, "30"));
    CHECK(!strcmp(cs[1].session, "s-2") && !strcmp(cs[1].state, "exited"));
    CHECK(cs[1].expires_len == -1 && cs[1].lease_len == -1);
    free(cs);
    CHECK(parse("[]", &cs, &n) == 0 && n == 0);
    CHECK(parse(" [ ] \n", &cs, &n) == 0 && n == 0);
    CHECK(parse("[{}]", &cs, &n) == 0 && n == 1 && !valid_id(&cs[0]));
    free(cs);
    CHECK(parse("[{\"Labels\":null,\"Created\":\"x\",\"Id\":5}]", &cs, &n) == 0 && n == 1 && !cs[0].has_created);
    free(cs);
    /* numbers out of range are not a Created, whatever their sign */
    CHECK(parse("[{\"Created\":-99999999999999999999999}]", &cs, &n) == 0 && n == 1 && !cs[0].has_created);
    free(cs);
    CHECK(parse("[{\"Created\":-9223372036854775808}]", &cs, &n) == 0 && n == 1 && !cs[0].has_created);
    free(cs);
    CHECK(parse("[{\"Created\":99999999999999999999999}]", &cs, &n) == 0 && n == 1 && !cs[0].has_created);
    free(cs);
    CHECK(parse("[{\"Created\":-1700000000}]", &cs, &n) == 0 && cs[0].has_created && cs[0].created == -1700000000);
    free(cs);
    CHECK(parse("[{\"Created\":1.7e9}]", &cs, &n) == 0 && !cs[0].has_created);
    free(cs);
}

static void test_malformed(void) {
    static const char *bad[] = {"", "{}", "[", "[{]", "[{}", "[{},]", "[,{}]", "[{}{}]", "[{\"Id\" \"x\"}]",
                                "[{\"Id\":\"x}]", "[{\"Id\":\"\\x\"}]", "[{\"Id\":\"\\u12\"}]", "[{\"a\":01}]",
                                "[{\"a\":-}]", "[{\"a\":1.}]", "[{\"a\":1e}]", "[{\"a\":tru}]", "[{\"a\":nul}]",
                                "[{\"a\":\"\x01\"}]", "[] x", "[{\"Labels\":[]}]", "[{\"a\":\"\\ud800\"}]",
                                "[{\"a\":\"\\udc00\"}]", "[{\"a\":\"\\ud800\\u0041\"}]", "[1 2]", "[{1:2}]"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        struct container *cs = (void *)1;
        size_t n = 7;
        int r = parse(bad[i], &cs, &n);
        if (r != -1) fprintf(stderr, "accepted: %s\n", bad[i]);
        CHECK(r == -1 && cs == NULL && n == 0);
    }
    /* every truncation of a valid list is rejected, without reading past the end (an exact-size heap copy) */
    size_t len = strlen(LIST);
    for (size_t cut = 0; cut < len; cut++) {
        char *copy = malloc(cut ? cut : 1);
        memcpy(copy, LIST, cut);
        struct container *cs;
        size_t n;
        int more;
        CHECK(parse_list(copy, cut, &cs, &n, &more) == -1);
        free(copy);
    }
    /* every byte replaced by a few hostile values: never a crash, either a clean parse or a clean error */
    static const char subst[] = {'"', '\\', '[', '{', ']', '}', ',', ':', 0, '\n', 'u', '0', (char)0xff};
    for (size_t i = 0; i < len; i++)
        for (size_t s = 0; s < sizeof subst; s++) {
            char *copy = malloc(len);
            memcpy(copy, LIST, len);
            copy[i] = subst[s];
            struct container *cs;
            size_t n;
            int more;
            if (parse_list(copy, len, &cs, &n, &more) == 0) free(cs);
            free(copy);
        }
}

static void test_deep_nesting(void) {
    size_t depth = 100000;
    char *s = malloc(depth * 2 + 64);
    size_t k = (size_t)sprintf(s, "[{\"x\":");
    for (size_t i = 0; i < depth; i++) s[k++] = '[';
    for (size_t i = 0; i < depth; i++) s[k++] = ']';
    strcpy(s + k, "}]");
    struct container *cs;
    size_t n;
    CHECK(parse(s, &cs, &n) == -1);
    /* a modest nesting within the cap is fine */
    k = (size_t)sprintf(s, "[{\"x\":");
    for (size_t i = 0; i < 40; i++) s[k++] = '[';
    for (size_t i = 0; i < 40; i++) s[k++] = ']';
    strcpy(s + k, "}]");
    CHECK(parse(s, &cs, &n) == 0 && n == 1);
    free(cs);
    free(s);
}

static void test_huge_strings_and_bad_labels(void) {
    size_t big = 4u << 20;
    char *s = malloc(big + 512);
    int k = sprintf(s, "[{\"Id\":\"" ID_A "\",\"Junk\":\"");
    memset(s + k, 'a', big);
    k += (int)big;
    k += sprintf(s + k, "\",\"Labels\":{\"dev.sandbox.session\":\"");
    memset(s + k, 'b', 200);
    sprintf(s + k + 200, "\",\"dev.sandbox.expires-at\":\"123\"}}]");
    struct container *cs;
    size_t n;
    CHECK(parse(s, &cs, &n) == 0 && n == 1);
    if (n == 1) {
        CHECK(cs[0].session_len == 200 && !valid_session(&cs[0]));
        CHECK(strlen(cs[0].session) == MAX_SESSION + 1);
        CHECK(!strcmp(cs[0].expires, "123"));
    }
    free(cs);
    free(s);
    /* an oversized Id is not valid and does not overflow its buffer */
    CHECK(parse("[{\"Id\":\"" ID_A ID_A "\"}]", &cs, &n) == 0 && n == 1 && !valid_id(&cs[0]));
    free(cs);
    CHECK(parse("[{\"Id\":\"" ID_A "\",\"State\":\"runningrunningrunning\"}]", &cs, &n) == 0 && cs[0].state[0] == 0);
    free(cs);

    static const char *bad[] = {"", "-a", ".a", "_a", "a b", "a/b", "../x", "a\\u0000b", "\\u00e9", "a\\nb", "a:b",
                                "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
                                "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char doc[512];
        snprintf(doc, sizeof doc, "[{\"Id\":\"%s\",\"Labels\":{\"dev.sandbox.session\":\"%s\"}}]", ID_A, bad[i]);
        CHECK(parse(doc, &cs, &n) == 0 && n == 1 && !valid_session(&cs[0]));
        free(cs);
    }
    static const char *good[] = {"a", "A.b_c-d", "0", "\\u0061bc",
                                 "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
                                 "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"};
    for (size_t i = 0; i < sizeof good / sizeof *good; i++) {
        char doc[512];
        snprintf(doc, sizeof doc, "[{\"Id\":\"%s\",\"Labels\":{\"dev.sandbox.session\":\"%s\"}}]", ID_A, good[i]);
        CHECK(parse(doc, &cs, &n) == 0 && n == 1 && valid_session(&cs[0]));
        free(cs);
    }
    /* a label that is not a string counts as absent */
    CHECK(parse("[{\"Labels\":{\"dev.sandbox.session\":5,\"dev.sandbox.lease-seconds\":{\"a\":[1]}}}]", &cs, &n) == 0
          && cs[0].session_len == -1 && cs[0].lease_len == -1);
    free(cs);
}

static void test_unicode(void) {
    struct js j;
    char out[32];
    const char *s = "\"\\u00e9\\u20ac\\ud83d\\ude00\\u0041\"";
    j = (struct js){s, s + strlen(s), 0};
    CHECK(js_str(&j, out, sizeof out) == 2 + 3 + 4 + 1);
    CHECK(!strcmp(out, "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80" "A"));
    s = "\"\\b\\f\\n\\r\\t\\\"\\\\\\/x\"";
    j = (struct js){s, s + strlen(s), 0};
    CHECK(js_str(&j, out, sizeof out) == 9 && !strcmp(out, "\b\f\n\r\t\"\\/x"));
    s = "\"\\u0000\"";
    j = (struct js){s, s + strlen(s), 0};
    CHECK(js_str(&j, out, sizeof out) == 1 && out[0] == 0);
    /* cut to the buffer, full length reported */
    s = "\"0123456789\"";
    j = (struct js){s, s + strlen(s), 0};
    CHECK(js_str(&j, out, 4) == 10 && !strcmp(out, "012"));
}

/* ---------- HTTP ---------- */
static int feed_split(const char *raw, size_t len, size_t at, struct resp *r) {
    memset(r, 0, sizeof *r);
    int f = resp_feed(r, raw, at);
    if (f == 0) f = resp_feed(r, raw + at, len - at);
    if (f == 0) f = resp_finish(r) == 0 ? 1 : -1;
    return f;
}

static void test_http(void) {
    static struct resp r;
    const char *chunked = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTRANSFER-ENCODING: chunked\r\n\r\n"
                          "3\r\n[{}\r\n1;ext=1\r\n,\r\n000a\r\n{\"Id\":\"x\"}\r\n1\r\n]\r\n0\r\nX-Trailer: 1\r\n\r\n";
    size_t len = strlen(chunked);
    for (size_t at = 0; at <= len; at++) {
        int f = feed_split(chunked, len, at, &r);
        CHECK(f == 1 && r.status == 200 && r.body.len == 15 && !strcmp(r.body.p, "[{},{\"Id\":\"x\"}]"));
        free(r.body.p);
    }
    /* byte by byte, then every truncation is incomplete */
    memset(&r, 0, sizeof r);
    int f = 0;
    for (size_t i = 0; i < len && f == 0; i++) f = resp_feed(&r, chunked + i, 1);
    CHECK(f == 1 && !strcmp(r.body.p, "[{},{\"Id\":\"x\"}]"));
    free(r.body.p);
    for (size_t cut = 0; cut < len; cut++) {
        memset(&r, 0, sizeof r);
        f = resp_feed(&r, chunked, cut);
        CHECK(f == 0 && resp_finish(&r) == -1);
        free(r.body.p);
    }
    const char *cl = "HTTP/1.0 404 Not Found\r\ncontent-length:  5 \r\n\r\nhello--ignored";
    for (size_t at = 0; at <= strlen(cl); at++) {
        CHECK(feed_split(cl, strlen(cl), at, &r) == 1 && r.status == 404 && !strcmp(r.body.p, "hello"));
        free(r.body.p);
    }
    const char *eof = "HTTP/1.1 200 OK\r\n\r\n[1]";
    CHECK(feed_split(eof, strlen(eof), 5, &r) == 1 && !strcmp(r.body.p, "[1]"));
    free(r.body.p);
    const char *nc = "HTTP/1.1 204 No Content\r\n\r\n";
    CHECK(feed_split(nc, strlen(nc), 3, &r) == 1 && r.status == 204 && r.body.len == 0);
    static const char *bad[] = {"HTTP/1.1 2x0 OK\r\n\r\n", "HTTP/2 200 OK\r\n\r\n",
                                "HTTP/1.1 200 OK\r\nContent-Length: 1x\r\n\r\n",
                                "HTTP/1.1 200 OK\r\nContent-Length: 99999999999999999999\r\n\r\n",
                                "HTTP/1.1 200 OK\r\nContent-Length: 67108865\r\n\r\n",
                                "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n",
                                "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
                                "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n\r\n",
                                "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nab\r\n",
                                "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4000001\r\n",
                                "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nffffffffffffffffffff\r\n"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        memset(&r, 0, sizeof r);
        CHECK(resp_feed(&r, bad[i], strlen(bad[i])) == -1);
        free(r.body.p);
    }
    /* an endless header or chunk-size line is cut off */
    char *longhead = malloc(MAX_HEADER + 100);
    memset(longhead, 'h', MAX_HEADER + 100);
    memcpy(longhead, "HTTP/1.1 200 OK\r\nX: ", 20);
    memset(&r, 0, sizeof r);
    CHECK(resp_feed(&r, longhead, MAX_HEADER + 100) == -1);
    free(longhead);
    /* the body cap: a chunked stream past 64 MiB is refused */
    memset(&r, 0, sizeof r);
    const char *h = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n";
    CHECK(resp_feed(&r, h, strlen(h)) == 0);
    char *mb = malloc(1 << 20);
    memset(mb, 'x', 1 << 20);
    f = 0;
    for (int i = 0; i < 70 && f == 0; i++) {
        f = resp_feed(&r, "100000\r\n", 8);
        if (f == 0) f = resp_feed(&r, mb, 1 << 20);
        if (f == 0) f = resp_feed(&r, "\r\n", 2);
    }
    CHECK(f == -1 && r.body.len <= MAX_BODY);
    free(r.body.p);
    free(mb);
}

/* ---------- decisions and state files ---------- */
static char g_dir[64];

static void put_file(const char *sub, const char *name, const char *content) {
    char p[512];
    snprintf(p, sizeof p, "%s/%s/%s", g_dir, sub, name);
    unlink(p);
    FILE *f = fopen(p, "w");
    fputs(content, f);
    fclose(f);
}

static int exists(const char *sub, const char *name) {
    char p[512];
    struct stat st;
    snprintf(p, sizeof p, "%s/%s/%s", g_dir, sub, name);
    return lstat(p, &st) == 0;
}

static void age(const char *sub, const char *name, long long seconds) {
    char p[512];
    snprintf(p, sizeof p, "%s/%s/%s", g_dir, sub, name);
    struct timespec ts[2] = {{time(NULL) - seconds, 0}, {time(NULL) - seconds, 0}};
    CHECK(utimensat(AT_FDCWD, p, ts, AT_SYMLINK_NOFOLLOW) == 0);
}

static struct container mk(const char *session, const char *state, long long created, const char *expires,
                           const char *lease) {
    struct container c = {.id_len = 64, .created = created, .has_created = 1, .expires_len = -1, .lease_len = -1};
    memcpy(c.id, ID_A, 65);
    snprintf(c.state, sizeof c.state, "%s", state);
    c.session_len = (long)strlen(session);
    snprintf(c.session, sizeof c.session, "%s", session);
    if (expires) c.expires_len = (long)strlen(expires), snprintf(c.expires, sizeof c.expires, "%s", expires);
    if (lease) c.lease_len = (long)strlen(lease), snprintf(c.lease, sizeof c.lease, "%s", lease);
    return c;
}

static void test_decide(void) {
    const long long now = 1800000000;
    struct container c;
    /* labels only */
    c = mk("d1", "running", now - 10, "1800000000", NULL);
    CHECK(decide(&c, g_dir, now) == R_DEADLINE);
    c = mk("d2", "running", now - 10, "1800000001", NULL);
    CHECK(decide(&c, g_dir, now) == KEEP);
    c = mk("d3", "running", now - 10, "never", NULL);
    CHECK(decide(&c, g_dir, now) == KEEP);
    c = mk("d4", "running", now - 10, "12x", NULL); /* malformed: as if absent */
    CHECK(decide(&c, g_dir, now) == KEEP);
    c = mk("d5", "running", now - 10, "0000000000000000000000001", NULL); /* longer than its buffer: absent */
    CHECK(decide(&c, g_dir, now) == KEEP);
    c = mk("d6", "running", now - 10, "1 ", NULL); /* labels allow no whitespace */
    CHECK(decide(&c, g_dir, now) == KEEP);
    c = mk("l0", "running", now - 30, NULL, "0000000000000000000000030");
    CHECK(decide(&c, g_dir, now) == KEEP);
    c = mk("l1", "running", now - 30, NULL, "30");
    CHECK(decide(&c, g_dir, now) == R_LEASE);
    c = mk("l2", "running", now - 29, NULL, "30");
    CHECK(decide(&c, g_dir, now) == KEEP);
    c = mk("l3", "running", now - 30, "1900000000", "30"); /* a far deadline does not save a lapsed lease */
    CHECK(decide(&c, g_dir, now) == R_LEASE);
    c = mk("l3b", "running", now - 29, "1900000000", "30"); /* nor does a live lease outlast the deadline */
    CHECK(decide(&c, g_dir, now) == KEEP);
    c = mk("l4", "running", now - 30, "never", "30");
    CHECK(decide(&c, g_dir, now) == R_LEASE);
    c = mk("l5", "running", now - 30, NULL, "0");
    CHECK(decide(&c, g_dir, now) == KEEP);
    c = mk("l6", "running", now - 30, NULL, "-5");
    CHECK(decide(&c, g_dir, now) == KEEP);
    c = mk("l7", "running", 9223372036854775000LL, NULL, "999999999999999999"); /* no overflow */
    CHECK(decide(&c, g_dir, now) == KEEP);
    c = mk("x1", "exited", now, NULL, NULL);
    CHECK(decide(&c, g_dir, now) == R_EXITED);
    c = mk("x2", "dead", now, "never", NULL);
    CHECK(decide(&c, g_dir, now) == R_EXITED);
    c = mk("x3", "paused", now - 100000, NULL, NULL);
    CHECK(decide(&c, g_dir, now) == KEEP);
    c = mk("c1", "created", now - 300, NULL, NULL);
    CHECK(decide(&c, g_dir, now) == R_NEVER_STARTED);
    c = mk("c2", "created", now - 299, NULL, NULL);
    CHECK(decide(&c, g_dir, now) == KEEP);

    /* file overrides */
    put_file("deadlines", "fd1", "1900000000\n"); /* extended */
    c = mk("fd1", "running", now - 10, "1700000000", NULL);
    CHECK(decide(&c, g_dir, now) == KEEP);
    put_file("deadlines", "fd2", "1799999999"); /* shortened */
    c = mk("fd2", "running", now - 10, "1900000000", NULL);
    CHECK(decide(&c, g_dir, now) == R_DEADLINE);
    put_file("deadlines", "fd3", "0 \n"); /* cleared: the lease label applies */
    c = mk("fd3", "running", now - 60, "1700000000", "30");
    CHECK(decide(&c, g_dir, now) == R_LEASE);
    put_file("deadlines", "fd4", "soon"); /* garbage: the label applies */
    c = mk("fd4", "running", now - 10, "1700000000", NULL);
    CHECK(decide(&c, g_dir, now) == R_DEADLINE);
    put_file("deadlines", "fd5", "00000000000000000000000000000000000000000000000000000000000000001900000000");
    c = mk("fd5", "running", now - 10, "1700000000", NULL); /* over 64 bytes: ignored */
    CHECK(decide(&c, g_dir, now) == R_DEADLINE);
    put_file("leases", "fl1", "1800000100\n"); /* renewed */
    c = mk("fl1", "running", now - 3600, NULL, "30");
    CHECK(decide(&c, g_dir, now) == KEEP);
    put_file("leases", "fl2", "1799999000"); /* renewed once, lapsed since */
    c = mk("fl2", "running", now - 10, NULL, "30");
    CHECK(decide(&c, g_dir, now) == R_LEASE);
    put_file("leases", "fl3", "1800000100 x"); /* garbage: Created + lease-seconds */
    c = mk("fl3", "running", now - 3600, NULL, "30");
    CHECK(decide(&c, g_dir, now) == R_LEASE);
    put_file("leases", "fl4", "");
    c = mk("fl4", "running", now - 3600, NULL, "30");
    CHECK(decide(&c, g_dir, now) == R_LEASE);
    put_file("leases", "fl1-target", "1800000100\n"); /* a symlink to a renewed value is not followed */
    char link[512];
    snprintf(link, sizeof link, "%s/leases/fl5", g_dir);
    CHECK(symlink("fl1-target", link) == 0);
    c = mk("fl5", "running", now - 3600, NULL, "30");
    CHECK(decide(&c, g_dir, now) == R_LEASE);
    snprintf(link, sizeof link, "%s/leases/fl6", g_dir); /* a FIFO does not block the reaper */
    CHECK(mkfifo(link, 0600) == 0);
    c = mk("fl6", "running", now - 3600, NULL, "30");
    CHECK(decide(&c, g_dir, now) == R_LEASE);
    put_file("leases", "fl7", "1800000100"); /* no lease label: the lease file alone does not matter */
    c = mk("fl7", "exited", now, NULL, NULL);
    CHECK(decide(&c, g_dir, now) == R_EXITED);

    /* a file caught mid-write (the archive API truncates, then writes) decides nothing for a few seconds */
    long long real = (long long)time(NULL);
    put_file("leases", "fw1", "");
    c = mk("fw1", "running", real - 3600, NULL, "30"); /* Created + lease long past, yet a renewal is landing */
    CHECK(decide(&c, g_dir, real) == KEEP);
    put_file("deadlines", "fw2", "17");
    put_file("deadlines", "fw2", "");
    c = mk("fw2", "running", real - 3600, "1000", NULL); /* label deadline past, yet an extension is landing */
    CHECK(decide(&c, g_dir, real) == KEEP);
    age("deadlines", "fw2", 60); /* still unparsable a minute later: the label applies */
    CHECK(decide(&c, g_dir, real) == R_DEADLINE);
    put_file("leases", "fw3", "x");
    age("leases", "fw3", 20); /* an old unparsable renewal counts from its mtime: 20 s ago + 30 s lease */
    c = mk("fw3", "running", real - 3600, NULL, "30");
    CHECK(decide(&c, g_dir, real) == KEEP);
    age("leases", "fw3", 31);
    CHECK(decide(&c, g_dir, real) == R_LEASE);
}


static void test_garbage(void) {
    put_file("deadlines", "gone-old", "1");
    put_file("deadlines", "gone-new", "1");
    put_file("leases", "listed-old", "1");
    put_file("leases", "gone-old", "1");
    put_file("deadlines", "-not a session", "1");
    age("deadlines", "-not a session", 601);
    age("deadlines", "gone-old", 601);
    age("deadlines", "gone-new", 590);
    age("leases", "listed-old", 10000);
    age("leases", "gone-old", 10000);
    char *listed[] = {"listed-old"};
    collect_garbage(g_dir, listed, 1, (long long)time(NULL));
    CHECK(!exists("deadlines", "gone-old"));
    CHECK(!exists("deadlines", "-not a session"));
    CHECK(exists("deadlines", "gone-new"));
    CHECK(exists("leases", "listed-old"));
    CHECK(!exists("leases", "gone-old"));
    CHECK(exists("leases", "fl1")); /* fresh from test_decide */
}


/* ---------- one round against a fake daemon: a child process serving HTTP on a Unix socket ---------- */
static void serve(int lfd, int report, const char *list_status) {
    for (int i = 0; i < 4; i++) {
        int c = accept(lfd, NULL, NULL);
        if (c < 0) _exit(3);
        char req[4096];
        size_t n = 0;
        while (n < sizeof req - 1) {
            ssize_t k = read(c, req + n, sizeof req - 1 - n);
            if (k <= 0) break;
            n += (size_t)k;
            req[n] = 0;
            if (strstr(req, "\r\n\r\n")) break;
        }
        req[n] = 0;
        char *eol = strstr(req, "\r\n");
        if (eol) *eol = 0;
        dprintf(report, "%s\n", req);
        const char *a;
        if (!strncmp(req, "GET ", 4)) {
            const char *body = "[{\"Id\":\"" ID_A "\",\"State\":\"exited\",\"Created\":1,\"Labels\":{\"dev.sandbox.session\":"
                               "\"r1\"}},{\"Id\":\"" ID_B "\",\"State\":\"paused\",\"Created\":1,\"Labels\":{"
                               "\"dev.sandbox.session\":\"r2\",\"dev.sandbox.expires-at\":\"2\"}},{\"Id\":\"" ID_B
                               "\",\"State\":\"running\",\"Created\":1,\"Labels\":{\"dev.sandbox.session\":\"bad/one\"}}]";
            dprintf(c, "HTTP/1.1 %s\r\nTransfer-Encoding: chunked\r\n\r\n", list_status);
            for (size_t off = 0; off < strlen(body); off += 7) {
                size_t k = strlen(body) - off < 7 ? strlen(body) - off : 7;
                dprintf(c, "%zx\r\n%.*s\r\n", k, (int)k, body + off);
            }
            a = "0\r\n\r\n";
        } else if (strstr(req, ID_A)) a = "HTTP/1.1 409 Conflict\r\nContent-Length: 2\r\n\r\n{}";
        else a = "HTTP/1.1 204 No Content\r\n\r\n";
        if (write(c, a, strlen(a)) < 0) _exit(4);
        close(c);
        if (!strncmp(list_status, "500", 3)) break;
    }
    _exit(0);
}

static int round_against_fake(const char *list_status, char *log, size_t cap, int *rc) {
    struct opts o = {.state = g_dir};
    static char sock[100];
    snprintf(sock, sizeof sock, "%s/docker.sock", g_dir);
    unlink(sock);
    o.socket = sock;
    snprintf(o.list_path, sizeof o.list_path, "/v1.41/containers/json?all=1");
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    memcpy(a.sun_path, sock, sizeof sock);
    int lfd = socket(AF_UNIX, SOCK_STREAM, 0), p[2];
    if (lfd < 0 || bind(lfd, (struct sockaddr *)&a, sizeof a) || listen(lfd, 4) || pipe(p)) return -1;
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        close(p[0]);
        serve(lfd, p[1], list_status);
    }
    close(lfd);
    close(p[1]);
    *rc = reap_round(&o);
    int st;
    waitpid(pid, &st, 0);
    ssize_t n = read(p[0], log, cap - 1);
    log[n > 0 ? n : 0] = 0;
    close(p[0]);
    return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}

static void test_round(void) {
    char log[4096];
    int rc;
    CHECK(round_against_fake("200 OK", log, sizeof log, &rc) == 0);
    CHECK(rc == 0);
    CHECK(strstr(log, "GET /v1.41/containers/json?all=1 HTTP/1.1\n") == log);
    CHECK(strstr(log, "DELETE /v1.41/containers/" ID_A "?force=1&v=1 HTTP/1.1\n") != NULL);
    CHECK(strstr(log, "DELETE /v1.41/containers/" ID_B "?force=1&v=1 HTTP/1.1\n") != NULL);
    /* the paused one is unpaused first, and only it */
    char *unpause = strstr(log, "POST /v1.41/containers/" ID_B "/unpause HTTP/1.1\n");
    CHECK(unpause != NULL && unpause < strstr(log, "DELETE /v1.41/containers/" ID_B));
    CHECK(strstr(log, "POST /v1.41/containers/" ID_A) == NULL);
    CHECK(round_against_fake("500 Internal Server Error", log, sizeof log, &rc) == 0);
    CHECK(rc == 1 && strstr(log, "DELETE") == NULL);
}

/* --session-label: the session is named by that label, and dev.sandbox.session is then just another label */
static void test_session_label(void) {
    struct container *cs;
    size_t n;
    g_session_label = "dev.sandbox.e2e.session";
    CHECK(parse("[{\"Labels\":{\"dev.sandbox.session\":\"a\",\"dev.sandbox.e2e.session\":\"b\","
                "\"dev.sandbox.expires-at\":\"5\"}},{\"Labels\":{\"dev.sandbox.session\":\"c\"}}]",
                &cs, &n) == 0);
    CHECK(n == 2);
    if (n == 2) {
        CHECK(valid_session(&cs[0]) && !strcmp(cs[0].session, "b") && !strcmp(cs[0].expires, "5"));
        CHECK(!valid_session(&cs[1]) && cs[1].session_len == -1);
    }
    free(cs);
    g_session_label = "dev.sandbox.session";
    CHECK(parse("[{\"Labels\":{\"dev.sandbox.e2e.session\":\"b\"}}]", &cs, &n) == 0 && n == 1);
    CHECK(n == 1 && !valid_session(&cs[0]));
    free(cs);
}

int main(void) {
    test_normal_list();
    test_session_label();
    test_malformed();
    test_deep_nesting();
    test_huge_strings_and_bad_labels();
    test_unicode();
    test_http();
    snprintf(g_dir, sizeof g_dir, "/tmp/reaper-test-XXXXXX");
    if (!mkdtemp(g_dir)) return perror("mkdtemp"), 2;
    char p[512];
    snprintf(p, sizeof p, "%s/deadlines", g_dir);
    mkdir(p, 0700);
    snprintf(p, sizeof p, "%s/leases", g_dir);
    mkdir(p, 0700);
    test_decide();
    test_garbage();
    test_round();
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", g_dir);
    printf("test_reaper: %d checks, %d failures\n", checks, failures);
    return failures ? 1 : 0;
}
