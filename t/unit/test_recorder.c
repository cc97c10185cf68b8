/* SPDX-License-Identifier: Apache-2.0 */
/* Unit tests of the recorder: repeats skipped, batches deduplicated, the
 * writer thread flushing on time, backpressure, faults and recovery, and
 * nothing lost at stop. */
#include "unit.h"

#include "util/sm_hash.h"
#include "record/sm_recorder.h"

#include <apr_thread_proc.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

static sm_site_conf site = { "http://r.example", 50000, 0, 0, NULL, 0 };

static int log_errors;
static char last_log[1024];

static void count_log(void *baton, sm_log_level level, apr_status_t rv,
                      const char *msg)
{
    (void)baton; (void)rv;
    if (level <= SM_LOG_ERR)
        log_errors++;
    apr_cpystrn(last_log, msg, sizeof(last_log));
}

static sm_logger logger = { count_log, NULL, SM_LOG_DEBUG };

static sm_recorder *make(unit_ctx *u, const char *path,
                         apr_interval_time_t interval, int batch, int qmax)
{
    sm_recorder *rec;
    sm_recorder_conf conf = { path, interval, batch, qmax, 200, &logger,
                              NULL, NULL, NULL, 0, 0, 0, 0 };
    assert_int_equal(sm_recorder_create(&rec, u->pool, &conf), APR_SUCCESS);
    sm_recorder_add_site(rec, &site);
    log_errors = 0;
    return rec;
}

static void add(sm_recorder *rec, sm_change_op op, const char *url,
                const char *etag)
{
    sm_change c = { op, &site, url, 0, etag, apr_time_now(), NULL, NULL, NULL, NULL, NULL, 0, 0, NULL, 0, NULL, NULL, NULL, 0, 0 };
    sm_recorder_add(rec, &c, 0);
}

/* As the module: a change handed over with the hash of its raw facts. */
static void add_raw(sm_recorder *rec, sm_change_op op, const char *url,
                    const char *etag, apr_uint64_t raw, apr_time_t seen)
{
    sm_change c = { op, &site, url, 0, etag, seen, NULL, NULL, NULL, NULL, NULL, 0, 0, NULL, 0, NULL, NULL, NULL, 0, 0 };
    sm_recorder_add(rec, &c, raw);
}

static sqlite3_int64 count_urls(const char *path)
{
    /* The writer may be creating the file and its schema right now. */
    if (access(path, F_OK) != 0
        || sql_int(path, "SELECT count(*) FROM sqlite_master WHERE "
                         "name = 'urls'") != 1)
        return 0;
    return sql_int(path, "SELECT count(*) FROM urls");
}

static void test_repeats_are_skipped(void **state)
{
    unit_ctx *u = *state;
    char *path = apr_pstrcat(u->pool, u->dir, "/r.db", NULL);
    sm_recorder *rec = make(u, path, apr_time_from_sec(3600), 100, 1000);
    sm_recorder_stats st;
    int i;

    for (i = 0; i < 10; i++)
        add(rec, SM_CHANGE_RECORD, "/same", "\"1\"");
    sm_recorder_get_stats(rec, &st);
    assert_int_equal(st.offered, 10);
    assert_int_equal(st.queued, 1);
    assert_int_equal(st.skipped, 9);
    assert_int_equal(sm_recorder_flush(rec), APR_SUCCESS);
    assert_int_equal(count_urls(path), 1);
    /* The same ETag, weak: not news (httpd makes it weak for a second). */
    add(rec, SM_CHANGE_RECORD, "/same", "W/\"1\"");
    sm_recorder_get_stats(rec, &st);
    assert_int_equal(st.queued, 1);
    /* A changed ETag is news again. */
    add(rec, SM_CHANGE_RECORD, "/same", "\"2\"");
    sm_recorder_get_stats(rec, &st);
    assert_int_equal(st.queued, 2);
    sm_recorder_stop(rec);
    assert_int_equal(sql_int(path, "SELECT count(*) FROM urls WHERE "
                                   "etag='\"2\"'"), 1);
}

static void test_raw_repeats_are_recognised(void **state)
{
    unit_ctx *u = *state;
    char *path = apr_pstrcat(u->pool, u->dir, "/r.db", NULL);
    sm_recorder *rec = make(u, path, apr_time_from_sec(3600), 100, 1000);
    apr_time_t now = apr_time_now();
    apr_uint64_t a = sm_hash_str(SM_HASH_SEED, "raw a");
    apr_uint64_t b = sm_hash_str(SM_HASH_SEED, "raw b");
    apr_uint64_t c = sm_hash_str(SM_HASH_SEED, "raw c");
    sm_recorder_stats st;

    assert_int_equal(sm_recorder_repeat(rec, 0, now), 0);
    assert_int_equal(sm_recorder_repeat(rec, a, now), 0);
    add_raw(rec, SM_CHANGE_RECORD, "/x", "\"1\"", a, now);
    assert_int_equal(sm_recorder_repeat(rec, a, now), 1);
    assert_int_equal(sm_recorder_repeat(rec, b, now), 0);
    /* Another raw form of the same URL and facts: skipped, and known. */
    add_raw(rec, SM_CHANGE_RECORD, "/x", "\"1\"", b, now);
    assert_int_equal(sm_recorder_repeat(rec, b, now), 1);
    sm_recorder_get_stats(rec, &st);
    assert_int_equal(st.offered, 2);
    assert_int_equal(st.queued, 1);
    assert_int_equal(st.skipped, 1);

    /* The URL written since with other facts: a's facts are news again. */
    add_raw(rec, SM_CHANGE_RECORD, "/x", "\"2\"", c, now);
    assert_int_equal(sm_recorder_repeat(rec, c, now), 1);
    assert_int_equal(sm_recorder_repeat(rec, a, now), 0);
    assert_int_equal(sm_recorder_repeat(rec, b, now), 0);

    /* A refresh is due after an hour (up to a minute later: a repeat
     * checked within the minute is trusted for the rest of it). */
    assert_int_equal(sm_recorder_repeat(rec, c, now
                                        + apr_time_from_sec(3599)), 1);
    assert_int_equal(sm_recorder_repeat(rec, c, now
                                        + apr_time_from_sec(3599)), 1);
    assert_int_equal(sm_recorder_repeat(rec, c, now
                                        + apr_time_from_sec(3660)), 0);

    /* A forgotten URL is forgotten again after a minute (or two).  (The
     * clock only moves forward from here: ticks never go back.) */
    now += apr_time_from_sec(3660);
    add_raw(rec, SM_CHANGE_FORGET, "/x", NULL, a, now);
    assert_int_equal(sm_recorder_repeat(rec, c, now), 0);
    assert_int_equal(sm_recorder_repeat(rec, a, now
                                        + apr_time_from_sec(59)), 1);
    assert_int_equal(sm_recorder_repeat(rec, a, now
                                        + apr_time_from_sec(59)), 1);
    assert_int_equal(sm_recorder_repeat(rec, a, now
                                        + apr_time_from_sec(121)), 0);
    sm_recorder_stop(rec);
    assert_int_equal(count_urls(path), 0);
}

/* With a short SitemapExpire the refresh comes sooner (a quarter of it),
 * and so does the end of the time a checked repeat is trusted alone: a
 * URL served on is refreshed within a second or two, never expired. */
static void test_short_expiry_refreshes_soon(void **state)
{
    unit_ctx *u = *state;
    char *path = apr_pstrcat(u->pool, u->dir, "/r.db", NULL);
    sm_site_conf quick = { "http://q.example", 50000, 0,
                           apr_time_from_sec(4), NULL, 0 };
    sm_recorder_conf conf = { path, apr_time_from_sec(3600), 100, 1000, 200,
                              &logger, NULL, NULL, NULL, 0, 0, 0, 0 };
    sm_change c = { SM_CHANGE_RECORD, &quick, "/q", 0, NULL, 0, NULL, NULL, NULL, NULL, NULL, 0, 0, NULL, 0, NULL, NULL, NULL, 0, 0 };
    apr_uint64_t raw = sm_hash_str(SM_HASH_SEED, "raw q");
    apr_time_t now = apr_time_from_sec(apr_time_sec(apr_time_now()));
    sm_recorder *rec;

    assert_int_equal(sm_recorder_create(&rec, u->pool, &conf), APR_SUCCESS);
    sm_recorder_add_site(rec, &quick);
    c.seen = now;
    sm_recorder_add(rec, &c, raw);
    assert_int_equal(sm_recorder_repeat(rec, raw, now), 1);
    assert_int_equal(sm_recorder_repeat(rec, raw,
                                        now + apr_time_from_msec(999)), 1);
    assert_int_equal(sm_recorder_repeat(rec, raw,
                                        now + apr_time_from_sec(1)), 0);
    sm_recorder_stop(rec);
}

/* A URL pushed out of the memory of written URLs (four newer URLs of its
 * set) is no longer vouched for by its aliases, even within the minute:
 * it is offered again, and its raw facts once more lead to it. */
static void test_evicted_url_is_offered_again(void **state)
{
    unit_ctx *u = *state;
    char *path = apr_pstrcat(u->pool, u->dir, "/r.db", NULL);
    sm_recorder *rec = make(u, path, apr_time_from_sec(3600), 100, 1000);
    apr_time_t now = apr_time_now();
    apr_uint64_t raw = sm_hash_str(SM_HASH_SEED, "raw x");
    const char *strs[2] = { site.base, "/x" };
    /* A URL's key in the memory (sm_recorder.c): seeded with its store's
     * path, mixed with the store's generation (0 until a fault). */
    apr_uint64_t seed = sm_hash_str(SM_HASH_SEED, path);
    apr_uint64_t mix = sm_hash_u64(seed, 0);
    apr_uint64_t set = (sm_hash_strs(seed, strs, 2) ^ mix) % 4096;
    sm_recorder_stats st;
    char url[32];
    int i, others = 0;

    add_raw(rec, SM_CHANGE_RECORD, "/x", "\"1\"", raw, now);
    assert_int_equal(sm_recorder_repeat(rec, raw, now), 1);
    assert_int_equal(sm_recorder_repeat(rec, raw, now), 1);
    /* URLs that share /x's set in the memory (SEEN_SETS 4096, 4 ways) */
    for (i = 0; others < 4 && i < 10000000; i++) {
        snprintf(url, sizeof(url), "/o%d", i);
        strs[1] = url;
        if ((sm_hash_strs(seed, strs, 2) ^ mix) % 4096 == set) {
            add_raw(rec, SM_CHANGE_RECORD, url, NULL, 0, now);
            others++;
        }
    }
    assert_int_equal(others, 4);
    assert_int_equal(sm_recorder_repeat(rec, raw, now), 0);
    add_raw(rec, SM_CHANGE_RECORD, "/x", "\"1\"", raw, now);
    assert_int_equal(sm_recorder_repeat(rec, raw, now), 1);
    sm_recorder_get_stats(rec, &st);
    assert_int_equal(st.queued, 6);
    sm_recorder_stop(rec);
}

/* sm_recorder_repeat reads without the lock while other threads change
 * the memory.  Two adders flip 64 URLs (each its own half) between two
 * ETags; two readers ask about both raw forms all along.  A reader that
 * hears "repeat" for an ETag while no add of that URL was under way from
 * before its question to after the answer must be hearing about the
 * URL's last ETag: never a stale or a never-added one (a "no" is always
 * allowed: the caller just decides again).  When everything has settled,
 * each URL's last ETag is a repeat and the other is not.  tools/check
 * runs this under valgrind and under ThreadSanitizer. */
#define FLIP_URLS 64
#define FLIP_ROUNDS 4000

typedef struct {
    sm_recorder *rec;
    apr_time_t now;
    int adder, seed;
    int repeats, noes, wrong;   /* what a reader heard */
} flip_ctx;

/* Per URL: odd while its adder changes it; the ETag last added (-1:
 * none).  Atomic: the readers look at them while the adders write. */
static apr_uint32_t flip_version[FLIP_URLS];
static int flip_etag[FLIP_URLS];
/* Adders still running: readers go on until they are done, and some
 * rounds more, so that the race is run however the threads are scheduled
 * (on a loaded machine the readers could otherwise finish first). */
static int flip_adders_left;

static apr_uint64_t flip_raw(int url, int etag)
{
    return sm_hash_u64(SM_HASH_SEED, (apr_uint64_t)(url * 2 + etag + 1));
}

static void *APR_THREAD_FUNC flip_thread(apr_thread_t *t, void *data)
{
    flip_ctx *fc = data;
    unsigned x = (unsigned)fc->seed;
    char url[32];
    int i, after_adders = 0;

    for (i = 0; fc->adder ? i < FLIP_ROUNDS
                : i < FLIP_ROUNDS || after_adders < FLIP_ROUNDS / 4; i++) {
        int u, e;
        if (!fc->adder
            && __atomic_load_n(&flip_adders_left, __ATOMIC_SEQ_CST) == 0)
            after_adders++;
        x = x * 1103515245u + 12345u;
        u = (int)((x >> 8) % FLIP_URLS);
        e = (int)((x >> 20) & 1);
        if (fc->adder) {
            u = (u & ~1) | (fc->adder - 1);     /* this adder's half */
            apr_snprintf(url, sizeof(url), "/flip/%d", u);
            __atomic_add_fetch(&flip_version[u], 1, __ATOMIC_SEQ_CST);
            add_raw(fc->rec, SM_CHANGE_RECORD, url, e ? "\"b\"" : "\"a\"",
                    flip_raw(u, e), fc->now);
            __atomic_store_n(&flip_etag[u], e, __ATOMIC_SEQ_CST);
            __atomic_add_fetch(&flip_version[u], 1, __ATOMIC_SEQ_CST);
        }
        else {
            apr_uint32_t before = __atomic_load_n(&flip_version[u],
                                                  __ATOMIC_SEQ_CST);
            int last = __atomic_load_n(&flip_etag[u], __ATOMIC_SEQ_CST);
            int repeat = sm_recorder_repeat(fc->rec, flip_raw(u, e),
                                            fc->now);
            apr_uint32_t after = __atomic_load_n(&flip_version[u],
                                                 __ATOMIC_SEQ_CST);
            if (!repeat)
                fc->noes++;
            else if (before == after && !(before & 1) && last != e)
                fc->wrong++;
            else
                fc->repeats++;
        }
    }
    if (fc->adder)
        __atomic_sub_fetch(&flip_adders_left, 1, __ATOMIC_SEQ_CST);
    apr_thread_exit(t, APR_SUCCESS);
    return NULL;
}

static void test_raw_repeats_while_changing(void **state)
{
    unit_ctx *u = *state;
    char *path = apr_pstrcat(u->pool, u->dir, "/r.db", NULL);
    sm_recorder *rec = make(u, path, apr_time_from_sec(3600), 100000,
                            100000);
    apr_thread_t *threads[4];
    flip_ctx fc[4];
    apr_status_t rv;
    char url[32];
    int i, repeats = 0, noes = 0, wrong = 0;

    for (i = 0; i < FLIP_URLS; i++) {
        flip_version[i] = 0;
        flip_etag[i] = -1;
    }
    memset(fc, 0, sizeof(fc));
    flip_adders_left = 2;
    for (i = 0; i < 4; i++) {
        fc[i].rec = rec;
        fc[i].now = apr_time_now();
        fc[i].adder = i < 2 ? i + 1 : 0;
        fc[i].seed = i + 1;
        assert_int_equal(apr_thread_create(&threads[i], NULL, flip_thread,
                                           &fc[i], u->pool), APR_SUCCESS);
    }
    for (i = 0; i < 4; i++)
        apr_thread_join(&rv, threads[i]);
    for (i = 2; i < 4; i++) {
        repeats += fc[i].repeats;
        noes += fc[i].noes;
        wrong += fc[i].wrong;
    }
    if (wrong)
        fail_msg("%d stale repeats (and %d right ones)", wrong, repeats);
    /* The race was run: the readers heard both answers. */
    assert_true(repeats > 0);
    assert_true(noes > 0);
    /* Settled: set every URL to ETag "a" last; "a" repeats, "b" not. */
    for (i = 0; i < FLIP_URLS; i++) {
        apr_snprintf(url, sizeof(url), "/flip/%d", i);
        add_raw(rec, SM_CHANGE_RECORD, url, "\"a\"", flip_raw(i, 0),
                fc[0].now);
    }
    for (i = 0; i < FLIP_URLS; i++) {
        assert_int_equal(sm_recorder_repeat(rec, flip_raw(i, 0), fc[0].now),
                         1);
        assert_int_equal(sm_recorder_repeat(rec, flip_raw(i, 1), fc[0].now),
                         0);
    }
    sm_recorder_stop(rec);
    assert_int_equal(count_urls(path), FLIP_URLS);
}

/* Refused by SitemapMaxURLs: offered again, so never a known repeat. */
static void test_raw_refused_is_not_a_repeat(void **state)
{
    unit_ctx *u = *state;
    char *path = apr_pstrcat(u->pool, u->dir, "/r.db", NULL);
    sm_site_conf small = { "http://small.example", 50000, 1, 0, NULL, 0 };
    sm_recorder *rec;
    sm_recorder_conf conf = { path, apr_time_from_sec(3600), 100, 1000, 200,
                              &logger, NULL, NULL, NULL, 0, 0, 0, 0 };
    apr_time_t now = apr_time_now();
    sm_change c1 = { SM_CHANGE_RECORD, &small, "/one", 0, NULL, now, NULL,
                     NULL, NULL, NULL, NULL, 0, 0, NULL, 0, NULL, NULL, NULL, 0, 0 };
    sm_change c2 = { SM_CHANGE_RECORD, &small, "/two", 0, NULL, now, NULL,
                     NULL, NULL, NULL, NULL, 0, 0, NULL, 0, NULL, NULL, NULL, 0, 0 };

    assert_int_equal(sm_recorder_create(&rec, u->pool, &conf), APR_SUCCESS);
    sm_recorder_add_site(rec, &small);
    sm_recorder_add(rec, &c1, 1);
    sm_recorder_add(rec, &c2, 2);
    assert_int_equal(sm_recorder_repeat(rec, 2, now), 1);
    assert_int_equal(sm_recorder_flush(rec), APR_SUCCESS);
    assert_int_equal(sm_recorder_repeat(rec, 2, now), 0);
    sm_recorder_stop(rec);
    assert_int_equal(count_urls(path), 1);
}

static void test_hash(void **state)
{
    apr_uint64_t h = SM_HASH_SEED;
    (void)state;
    /* Concatenations differ, NULL differs from "", every length counts. */
    assert_true(sm_hash_str(sm_hash_str(h, "ab"), "c")
                != sm_hash_str(sm_hash_str(h, "a"), "bc"));
    assert_true(sm_hash_str(h, NULL) != sm_hash_str(h, ""));
    assert_true(sm_hash_str(h, "/p/0001.html")
                != sm_hash_str(h, "/p/0002.html"));
    assert_true(sm_hash_bytes(h, "12345678", 8)
                != sm_hash_bytes(h, "12345678\0", 9));
    assert_true(sm_hash_u64(h, 1) != sm_hash_u64(h, 2));
    assert_int_equal(sm_hash_str(h, "same"), sm_hash_str(h, "same"));
}

/* The module's raw facts come in two parts (sm_recorder_raw): whatever the
 * parts, the joined hash is never "none", keeps both parts' differences,
 * and responses that share the first part (one URL, several answers) are
 * told apart and recognised, with their line prefetched or not. */
static void test_raw_from_two_parts(void **state)
{
    unit_ctx *u = *state;
    char *path = apr_pstrcat(u->pool, u->dir, "/r.db", NULL);
    sm_recorder *rec = make(u, path, apr_time_from_sec(3600), 100, 1000);
    apr_time_t now = apr_time_now();
    apr_uint64_t first = sm_hash_str(SM_HASH_SEED, "/one/url");
    apr_uint64_t other = sm_hash_str(SM_HASH_SEED, "/another/url");
    apr_uint64_t raw[6];
    char url[16];
    int i, j;

    assert_true(sm_recorder_raw(0, 0) != 0);
    assert_true(sm_recorder_raw(first, 0) != 0);
    assert_int_equal(sm_recorder_raw(first, 42), sm_recorder_raw(first, 42));
    assert_true(sm_recorder_raw(first, 42) != sm_recorder_raw(other, 42));
    for (i = 0; i < 6; i++) {
        raw[i] = sm_recorder_raw(first,
                                 sm_hash_u64(first, (apr_uint64_t)i));
        for (j = 0; j < i; j++)
            assert_true(raw[i] != raw[j]);
    }
    /* Prefetching is only a hint: the answers are the same either way. */
    sm_recorder_prefetch(rec, first);
    assert_int_equal(sm_recorder_repeat(rec, raw[0], now), 0);
    add_raw(rec, SM_CHANGE_RECORD, "/u0", "\"1\"", raw[0], now);
    sm_recorder_prefetch(rec, first);
    assert_int_equal(sm_recorder_repeat(rec, raw[0], now), 1);
    assert_int_equal(sm_recorder_repeat(rec, raw[1], now), 0);
    /* More answers with one first part than a memory line holds (three
     * ways): they all share that line, so the three newest push the three
     * oldest out, and none is ever taken for another. */
    for (i = 1; i < 6; i++) {
        sprintf(url, "/u%d", i);
        add_raw(rec, SM_CHANGE_RECORD, url, "\"1\"", raw[i], now);
    }
    for (i = 0; i < 6; i++)
        assert_int_equal(sm_recorder_repeat(rec, raw[i], now), i >= 3);
    assert_int_equal(sm_recorder_repeat(rec,
                                        sm_recorder_raw(first, 7), now), 0);
    sm_recorder_prefetch(rec, other);
    assert_int_equal(sm_recorder_repeat(rec, sm_recorder_raw(other, 7),
                                        now), 0);
    sm_recorder_stop(rec);
    assert_int_equal(count_urls(path), 6);
}

static void test_last_change_wins(void **state)
{
    unit_ctx *u = *state;
    char *path = apr_pstrcat(u->pool, u->dir, "/r.db", NULL);
    sm_recorder *rec = make(u, path, apr_time_from_sec(3600), 100, 1000);

    add(rec, SM_CHANGE_RECORD, "/gone", NULL);
    add(rec, SM_CHANGE_FORGET, "/gone", NULL);
    add(rec, SM_CHANGE_RECORD, "/kept", NULL);
    sm_recorder_stop(rec);
    assert_int_equal(count_urls(path), 1);
    assert_int_equal(sql_int(path, "SELECT count(*) FROM urls WHERE "
                                   "url='/kept'"), 1);
}

/* A later record of a URL in the same batch whose head was not read (title
 * and alternates NULL) keeps what an earlier one read; one that read them
 * replaces them ("" for none); a forget in between drops them. */
static void test_unread_head_keeps_what_the_batch_read(void **state)
{
    unit_ctx *u = *state;
    char *path = apr_pstrcat(u->pool, u->dir, "/r.db", NULL);
    sm_recorder *rec = make(u, path, apr_time_from_sec(3600), 100, 1000);
    apr_time_t now = apr_time_now();
    sm_change read1 = { SM_CHANGE_RECORD, &site, "/a", 0, "\"1\"", now, "T",
                        "de https://r.example/de", NULL, NULL, NULL, 0, 0, NULL, 0, NULL, NULL, NULL, 0, 0 };
    sm_change unread = { SM_CHANGE_RECORD, &site, "/a", 0, "\"2\"", now,
                         NULL, NULL, NULL, NULL, NULL, 0, 0, NULL, 0, NULL, NULL, NULL, 0, 0 };
    sm_change none = { SM_CHANGE_RECORD, &site, "/b", 0, "\"3\"", now, "",
                       "", NULL, NULL, NULL, 0, 0, NULL, 0, NULL, NULL, NULL, 0, 0 };
    sm_change forget = { SM_CHANGE_FORGET, &site, "/b", 0, NULL, now, NULL,
                         NULL, NULL, NULL, NULL, 0, 0, NULL, 0, NULL, NULL, NULL, 0, 0 };

    sm_recorder_add(rec, &read1, 0);
    sm_recorder_add(rec, &unread, 0);
    read1.url = "/b";
    sm_recorder_add(rec, &read1, 0);
    sm_recorder_add(rec, &none, 0);
    read1.url = "/c";
    sm_recorder_add(rec, &read1, 0);
    forget.url = "/c";
    sm_recorder_add(rec, &forget, 0);
    unread.url = "/c";
    sm_recorder_add(rec, &unread, 0);
    sm_recorder_stop(rec);
    /* the same response with other alternates is not a repeat */
    {
        sm_recorder_stats st;
        char *path2 = apr_pstrcat(u->pool, u->dir, "/r2.db", NULL);
        sm_recorder *rec2 = make(u, path2, apr_time_from_sec(3600), 100,
                                 1000);
        sm_recorder_add(rec2, &read1, 0);
        sm_recorder_add(rec2, &read1, 0);
        read1.alternates = "fr https://r.example/fr";
        sm_recorder_add(rec2, &read1, 0);
        sm_recorder_get_stats(rec2, &st);
        assert_int_equal(st.queued, 2);
        sm_recorder_stop(rec2);
        assert_int_equal(sql_int(path2, "SELECT count(*) FROM urls WHERE"
                                        " alternates = 'fr https://r.example"
                                        "/fr'"), 1);
    }
    assert_int_equal(sql_int(path, "SELECT count(*) FROM urls WHERE url='/a'"
                                   " AND etag='\"2\"' AND title='T' AND"
                                   " alternates='de https://r.example/de'"),
                     1);
    assert_int_equal(sql_int(path, "SELECT count(*) FROM urls WHERE url='/b'"
                                   " AND title IS NULL"
                                   " AND alternates IS NULL"), 1);
    assert_int_equal(sql_int(path, "SELECT count(*) FROM urls WHERE url='/c'"
                                   " AND title IS NULL"
                                   " AND alternates IS NULL"), 1);
}

/* Many URLs in one batch (its index grows several times): each change
 * still replaces the earlier one of its own URL, and no other. */
static void test_big_batch_last_change_wins(void **state)
{
    unit_ctx *u = *state;
    char *path = apr_pstrcat(u->pool, u->dir, "/r.db", NULL);
    sm_recorder *rec = make(u, path, apr_time_from_sec(3600), 100000,
                            100000);
    sm_recorder_stats st;
    char url[32];
    int i;

    for (i = 0; i < 5000; i++) {
        apr_snprintf(url, sizeof(url), "/p/%d", i);
        add(rec, SM_CHANGE_RECORD, url, NULL);
    }
    for (i = 0; i < 5000; i += 50) {
        apr_snprintf(url, sizeof(url), "/p/%d", i);
        add(rec, SM_CHANGE_FORGET, url, NULL);
    }
    sm_recorder_get_stats(rec, &st);
    assert_int_equal(st.queued, 5100);
    sm_recorder_stop(rec);
    assert_int_equal(count_urls(path), 4900);
    assert_int_equal(sql_int(path, "SELECT count(*) FROM urls WHERE "
                                   "url IN ('/p/0', '/p/50', '/p/4950')"), 0);
    assert_int_equal(sql_int(path, "SELECT count(*) FROM urls WHERE "
                                   "url IN ('/p/1', '/p/49', '/p/4999')"), 3);
}

static void test_writer_thread_flushes_in_time(void **state)
{
    unit_ctx *u = *state;
    char *path = apr_pstrcat(u->pool, u->dir, "/r.db", NULL);
    sm_recorder *rec = make(u, path, apr_time_from_msec(50), 1000, 10000);
    int i;

    assert_int_equal(sm_recorder_start(rec), APR_SUCCESS);
    add(rec, SM_CHANGE_RECORD, "/timely", NULL);
    /* No more traffic: the interval alone must bring it to the store. */
    for (i = 0; i < 200 && count_urls(path) < 1; i++)
        apr_sleep(apr_time_from_msec(25));
    assert_int_equal(count_urls(path), 1);
    sm_recorder_stop(rec);
}

static void test_stop_writes_everything(void **state)
{
    unit_ctx *u = *state;
    char *path = apr_pstrcat(u->pool, u->dir, "/r.db", NULL);
    sm_recorder *rec = make(u, path, apr_time_from_sec(3600), 100000, 100000);
    char url[32];
    int i;

    assert_int_equal(sm_recorder_start(rec), APR_SUCCESS);
    for (i = 0; i < 5000; i++) {
        snprintf(url, sizeof(url), "/u%d", i);
        add(rec, SM_CHANGE_RECORD, url, NULL);
    }
    assert_int_equal(count_urls(path), 0);   /* an hour's interval */
    sm_recorder_stop(rec);
    assert_int_equal(count_urls(path), 5000);
}

static void test_backpressure_loses_nothing(void **state)
{
    unit_ctx *u = *state;
    char *path = apr_pstrcat(u->pool, u->dir, "/r.db", NULL);
    sm_recorder *rec = make(u, path, apr_time_from_sec(3600), 5, 10);
    sm_recorder_stats st;
    char url[32];
    int i;

    /* With the thread, and without it (writes in the caller). */
    for (i = 0; i < 100; i++) {
        snprintf(url, sizeof(url), "/n%d", i);
        add(rec, SM_CHANGE_RECORD, url, NULL);
    }
    assert_int_equal(sm_recorder_start(rec), APR_SUCCESS);
    for (i = 100; i < 300; i++) {
        snprintf(url, sizeof(url), "/n%d", i);
        add(rec, SM_CHANGE_RECORD, url, NULL);
    }
    sm_recorder_stop(rec);
    sm_recorder_get_stats(rec, &st);
    /* A queue of 10 took 300 changes: every one written, none lost, no
     * error logged. */
    assert_int_equal(count_urls(path), 300);
    assert_int_equal(st.written, 300);
    assert_int_equal(st.dropped, 0);
    assert_int_equal(log_errors, 0);
}

static void test_fault_then_recovery(void **state)
{
    unit_ctx *u = *state;
    char *dir = apr_pstrcat(u->pool, u->dir, "/later", NULL);
    char *path = apr_pstrcat(u->pool, dir, "/r.db", NULL);
    sm_recorder *rec = make(u, path, apr_time_from_sec(3600), 100, 1000);
    sm_recorder_stats st;

    add(rec, SM_CHANGE_RECORD, "/while-broken", NULL);
    assert_int_not_equal(sm_recorder_flush(rec), APR_SUCCESS);
    assert_int_equal(log_errors, 1);
    assert_non_null(strstr(last_log, path));
    /* Logged once a minute, not per failure. */
    assert_int_not_equal(sm_recorder_flush(rec), APR_SUCCESS);
    assert_int_equal(log_errors, 1);

    mkdir(dir, 0755);
    add(rec, SM_CHANGE_RECORD, "/after", NULL);
    assert_int_equal(sm_recorder_flush(rec), APR_SUCCESS);
    assert_non_null(strstr(last_log, "works again"));
    /* The change kept through the fault is there too. */
    assert_int_equal(count_urls(path), 2);
    sm_recorder_get_stats(rec, &st);
    assert_int_equal(st.dropped, 0);

    /* The file deleted under us: reopened (recreated) on the next batch. */
    unlink(path);
    add(rec, SM_CHANGE_RECORD, "/recreated", NULL);
    assert_int_equal(sm_recorder_flush(rec), APR_SUCCESS);
    assert_int_equal(count_urls(path), 1);
    sm_recorder_stop(rec);
}

static void test_full_queue_while_faulty_drops_loudly(void **state)
{
    unit_ctx *u = *state;
    char *path = apr_pstrcat(u->pool, u->dir, "/missing/r.db", NULL);
    sm_recorder *rec = make(u, path, apr_time_from_sec(3600), 2, 4);
    sm_recorder_stats st;
    char url[32];
    int i;

    for (i = 0; i < 20; i++) {
        snprintf(url, sizeof(url), "/d%d", i);
        add(rec, SM_CHANGE_RECORD, url, NULL);
    }
    sm_recorder_get_stats(rec, &st);
    assert_true(st.dropped > 0);
    assert_true(log_errors >= 1);
    assert_int_equal(st.queued + st.dropped, 20);
    sm_recorder_stop(rec);
}

/* A queue longer than a batch is written in transactions of batch_size
 * changes (a long one would hold a PostgreSQL site's row lock against the
 * other servers of a farm past their lock timeout). */
static void test_long_queue_written_in_batches(void **state)
{
    unit_ctx *u = *state;
    char *path = apr_pstrcat(u->pool, u->dir, "/r.db", NULL);
    sm_recorder *rec = make(u, path, apr_time_from_sec(3600), 5, 100);
    sm_recorder_stats st;
    char url[32];
    int i;

    for (i = 0; i < 23; i++) {
        snprintf(url, sizeof(url), "/b%d", i);
        add(rec, SM_CHANGE_RECORD, url, NULL);
    }
    assert_int_equal(sm_recorder_flush(rec), APR_SUCCESS);
    sm_recorder_get_stats(rec, &st);
    assert_int_equal(st.written, 23);
    assert_int_equal(st.batches, 5);
    assert_int_equal(count_urls(path), 23);
    sm_recorder_stop(rec);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_repeats_are_skipped, unit_setup, unit_teardown),
        cmocka_unit_test_setup_teardown(test_long_queue_written_in_batches,
                                        unit_setup, unit_teardown),
        cmocka_unit_test_setup_teardown(test_short_expiry_refreshes_soon,
                                        unit_setup, unit_teardown),
        cmocka_unit_test_setup_teardown(test_evicted_url_is_offered_again,
                                        unit_setup, unit_teardown),
        cmocka_unit_test_setup_teardown(test_raw_repeats_are_recognised, unit_setup, unit_teardown),
        cmocka_unit_test_setup_teardown(test_raw_refused_is_not_a_repeat, unit_setup, unit_teardown),
        cmocka_unit_test_setup_teardown(test_raw_repeats_while_changing, unit_setup, unit_teardown),
        cmocka_unit_test(test_hash),
        cmocka_unit_test_setup_teardown(test_raw_from_two_parts, unit_setup, unit_teardown),
        cmocka_unit_test_setup_teardown(
            test_unread_head_keeps_what_the_batch_read, unit_setup,
            unit_teardown),
        cmocka_unit_test_setup_teardown(test_last_change_wins, unit_setup, unit_teardown),
        cmocka_unit_test_setup_teardown(test_big_batch_last_change_wins, unit_setup, unit_teardown),
        cmocka_unit_test_setup_teardown(test_writer_thread_flushes_in_time, unit_setup, unit_teardown),
        cmocka_unit_test_setup_teardown(test_stop_writes_everything, unit_setup, unit_teardown),
        cmocka_unit_test_setup_teardown(test_backpressure_loses_nothing, unit_setup, unit_teardown),
        cmocka_unit_test_setup_teardown(test_fault_then_recovery, unit_setup, unit_teardown),
        cmocka_unit_test_setup_teardown(test_full_queue_while_faulty_drops_loudly, unit_setup, unit_teardown),
    };
    apr_initialize();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
