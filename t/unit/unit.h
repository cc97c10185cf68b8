/* SPDX-License-Identifier: Apache-2.0 */
/* unit.h: what the core's unit tests share: cmocka, an APR pool per test,
 * and a fresh temporary directory for SQLite files. */
#ifndef SM_UNIT_H
#define SM_UNIT_H

#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <unistd.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <apr_general.h>
#include <apr_pools.h>
#include <apr_strings.h>
#include <apr_file_io.h>
#include <apr_file_info.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <unistd.h>
#include <string.h>
#include <dirent.h>
#include <stdio.h>

/* A pool and an empty directory for one test; removed afterwards. */
typedef struct {
    apr_pool_t *pool;
    char *dir;
} unit_ctx;

static int unit_setup(void **state)
{
    unit_ctx *u = calloc(1, sizeof(*u));
    char tmpl[] = "/tmp/sm-unit-XXXXXX";

    apr_pool_create(&u->pool, NULL);
    assert_non_null(mkdtemp(tmpl));
    u->dir = apr_pstrdup(u->pool, tmpl);
    *state = u;
    return 0;
}

static int unit_teardown(void **state)
{
    unit_ctx *u = *state;
    char *cmd = apr_psprintf(u->pool, "rm -rf '%s'", u->dir);
    assert_int_equal(system(cmd), 0);
    apr_pool_destroy(u->pool);
    free(u);
    return 0;
}

/* The file at TOP_SRCDIR (or .) / rel, its first 256 KiB, NUL-terminated,
 * from p; NULL when it cannot be read. */
static inline char *unit_read_src(apr_pool_t *p, const char *rel,
                                  apr_size_t *len)
{
    const char *top = getenv("TOP_SRCDIR");
    FILE *f = fopen(apr_pstrcat(p, top ? top : ".", "/", rel, NULL), "rb");
    char *buf;

    if (!f)
        return NULL;
    buf = apr_palloc(p, 256 * 1024 + 1);
    *len = fread(buf, 1, 256 * 1024, f);
    fclose(f);
    buf[*len] = '\0';
    return buf;
}

/* fn(baton, rel, text, len) for each file of the source directory reldir
 * (t/fuzz/corpus/head...), read by unit_read_src; the number of files,
 * -1 when the directory is not there (a tarball without it). */
static inline int unit_each_src_file(apr_pool_t *p, const char *reldir,
                                     void (*fn)(void *baton, const char *rel,
                                                const char *text,
                                                apr_size_t len),
                                     void *baton)
{
    const char *top = getenv("TOP_SRCDIR");
    apr_dir_t *dir;
    apr_finfo_t fi;
    int files = 0;

    if (apr_dir_open(&dir, apr_pstrcat(p, top ? top : ".", "/", reldir,
                                       NULL), p) != APR_SUCCESS)
        return -1;
    while (apr_dir_read(&fi, APR_FINFO_NAME | APR_FINFO_TYPE, dir)
           == APR_SUCCESS) {
        const char *rel;
        apr_size_t len = 0;
        char *text;

        if (fi.filetype != APR_REG)
            continue;
        rel = apr_pstrcat(p, reldir, "/", fi.name, NULL);
        text = unit_read_src(p, rel, &len);
        assert_non_null(text);
        fn(baton, rel, text, len);
        files++;
    }
    apr_dir_close(dir);
    return files;
}

/* main()'s body for a test of the store (its file includes the store's
 * header): APR and the store set up, the tests run, APR ended. */
#define UNIT_STORE_RUN(tests)                                               \
    do {                                                                    \
        int rc_;                                                            \
        apr_initialize();                                                   \
        sm_store_init();                                                    \
        rc_ = cmocka_run_group_tests(tests, NULL, NULL);                    \
        apr_terminate();                                                    \
        return rc_;                                                         \
    } while (0)

/* Run test against the PostgreSQL database SM_UNIT_PG_URI names (the
 * test is skipped without it; t/integration/test_unit_pg.py sets it):
 * *pg_uri is the URI while it runs (the test opens its store there), and
 * *base, its site's base, a new one each run so that runs and earlier
 * runs share the database without seeing each other's rows. */
static inline void unit_pg_variant(void **state, void (*test)(void **),
                                   const char **pg_uri, const char **base)
{
    unit_ctx *u = *state;
    static int seq;
    const char *uri = getenv("SM_UNIT_PG_URI"), *was = *base;

    if (!uri || !*uri)
        skip();
    *pg_uri = uri;
    *base = apr_psprintf(u->pool, "https://pg%d-%ld.example", ++seq,
                         (long)getpid());
    test(state);
    *base = was;
    *pg_uri = NULL;
}

/* name##_pg: name run by unit_pg_variant (the file's pg_uri and site). */
#define UNIT_PG_VARIANT(name) \
    static void name##_pg(void **state) \
    { \
        unit_pg_variant(state, name, &pg_uri, &site.base); \
    }

/* SQL that takes a store back to before schema 13 (each page's oldest
 * last_seen, for expiry), for the tests that make an older store from a
 * new one. */
#define SM_UNIT_DROP_OLDEST " ALTER TABLE pages DROP COLUMN oldest_seen;"

/* SQL that takes a store back to before schema 12 (the site's robots.txt),
 * and so before every later step too. */
#define SM_UNIT_DROP_ROBOTS SM_UNIT_DROP_OLDEST " DROP TABLE robots;"

/* SQL that takes a store back to before schema 11 (the news sitemap's
 * description and publication time), and so before every later step
 * too. */
#define SM_UNIT_DROP_NEWS SM_UNIT_DROP_ROBOTS \
    " DROP INDEX urls_published; ALTER TABLE urls DROP COLUMN description;" \
    " ALTER TABLE urls DROP COLUMN published;"

/* SQL that takes a store back to before schema 10 (crawl coverage per
 * day, SitemapIndexNowStale's mark), and so before every later step too. */
#define SM_UNIT_DROP_DAYS SM_UNIT_DROP_NEWS \
    " DROP TABLE crawl_days; ALTER TABLE crawls DROP COLUMN stale_sent;"

/* SQL that takes a store back to before schema 9 (SitemapImages), and so
 * before every later step too. */
#define SM_UNIT_DROP_IMAGES SM_UNIT_DROP_DAYS \
    " DROP TRIGGER urls_images; DROP TABLE images;"

/* SQL that takes a store back to before schema 8 (crawl coverage), and
 * so before every later step too. */
#define SM_UNIT_DROP_CRAWLS SM_UNIT_DROP_IMAGES \
    " DROP TRIGGER urls_crawls; DROP TABLE crawls; DROP TABLE crawlers;" \
    " DROP TABLE crawl_unlisted;"

/* One integer from an SQL query against a file, through a separate
 * connection (as a second process would see it). */
static inline sqlite3_int64 sql_int(const char *path, const char *sql)
{
    sqlite3 *db;
    sqlite3_stmt *q;
    sqlite3_int64 v = -1;

    assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL),
                     SQLITE_OK);
    sqlite3_busy_timeout(db, 5000);
    if (sqlite3_prepare_v2(db, sql, -1, &q, NULL) != SQLITE_OK)
        fail_msg("bad test SQL %s: %s", sql, sqlite3_errmsg(db));
    if (sqlite3_step(q) == SQLITE_ROW)
        v = sqlite3_column_int64(q, 0);
    sqlite3_finalize(q);
    sqlite3_close(db);
    return v;
}

/* Run SQL against a file through a separate connection (creating it). */
static inline void sql_exec(const char *path, const char *sql)
{
    sqlite3 *db;
    char *err = NULL;

    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    sqlite3_busy_timeout(db, 5000);
    if (sqlite3_exec(db, sql, NULL, NULL, &err) != SQLITE_OK)
        fail_msg("test SQL failed: %s", err ? err : "?");
    sqlite3_close(db);
}

/* A sink (sm_xml_sink) that keeps everything written, NUL-terminated. */
typedef struct {
    char *data;
    apr_size_t len, calls;
    apr_pool_t *pool;
} sink_buf;

static inline apr_status_t to_buf(void *baton, const char *data,
                                  apr_size_t len)
{
    sink_buf *b = baton;
    char *n = apr_palloc(b->pool, b->len + len + 1);
    memcpy(n, b->data, b->len);
    memcpy(n + b->len, data, len);
    b->len += len;
    n[b->len] = '\0';
    b->data = n;
    b->calls++;
    return APR_SUCCESS;
}

/* Descriptors of this process open on path or anything whose name starts
 * with it (a store's -wal and -shm, the files of a directory). */
static inline int unit_open_on(const char *path)
{
    DIR *d = opendir("/proc/self/fd");
    struct dirent *e;
    char link[512], target[1024];
    int n = 0;

    if (!d)
        return -1;
    while ((e = readdir(d))) {
        ssize_t len;
        snprintf(link, sizeof(link), "/proc/self/fd/%s", e->d_name);
        len = readlink(link, target, sizeof(target) - 1);
        if (len <= 0)
            continue;
        target[len] = '\0';
        n += strncmp(target, path, strlen(path)) == 0;
    }
    closedir(d);
    return n;
}

#endif
