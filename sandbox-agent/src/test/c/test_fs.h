/*
 * test_fs.h: what the unit tests of agent_fs.c share: the CHECK macros (a failed check is counted and printed, the run
 * goes on), the test directory and path helpers. test_fs.c holds the tests of the operations and main, test_fs_watch.c
 * the tests of watches; both build into one binary, test_fs.
 */
#ifndef TEST_FS_H
#define TEST_FS_H

#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>

extern int failures, checks;
extern char root[PATH_MAX]; /* the fresh mkdtemp directory the tests work in */

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

/* snprintf that stops the test on truncation (the paths here are built to fit); returns the length. */
__attribute__((format(printf, 3, 4))) int fmt(char *buf, size_t cap, const char *f, ...);
/* root + "/" + rel into a static rotating buffer (a few live at once) */
const char *P(const char *rel);
/* Writes a file with this content and mode (ends the run if it cannot). */
void put(const char *path, const char *content, mode_t mode);

/* test_fs_watch.c */
void test_watch_basic(void);
void test_watch_recursive(void);
void test_watch_atomic_write(void);
void test_watch_walk_no_duplicates(void);
void test_watch_fast_trees(void);
void test_watch_overflow(void);
void test_watch_too_deep(void);
void test_watch_root_deleted(void);

#endif
