/* SPDX-License-Identifier: Apache-2.0 */
/* Unit tests of crawl coverage in the store (SQLite): SM_CHANGE_CRAWL
 * written in batches, sm_store_coverage's figures (listed, crawled within
 * 1/7/30 days, never crawled, stale, unlisted hits, sitemap fetches) and
 * sitemapctl coverage's listings, a page changed after its crawl stale
 * until fetched again, a URL's fetches gone with it, the unlisted bound,
 * the upgrade from schema 7 and the pruning of sites made from a Host. */
#include "unit.h"

#include "record/sm_recorder.h"
#include "store/sm_store_backend.h"

#include <string.h>

static sm_site_conf site = { "https://c.example", 2, 0, 0, NULL, 0 };
static sm_site_conf other = { "https://o.example", 50000, 0, 0, NULL, 0 };

#define DAY 86400
#define T0 1800000000       /* "now", in seconds */

/* The _pg variants of the tests run on the PostgreSQL database
 * SM_UNIT_PG_URI names (skipped without it; t/unit/coverage_pg runs them
 * on a throwaway server), each test a site of its own; SQLite-only checks
 * of the tables are left out there. */
static const char *pg_uri;

static sm_store *open_store(unit_ctx *u, const char *name, char **path)
{
    sm_store *st;
    char err[512];

    *path = apr_pstrcat(u->pool, u->dir, "/", name, NULL);
    if (pg_uri) {
        if (sm_store_open(&st, u->pool, pg_uri, SM_STORE_CREATE, 1000, NULL,
                          err, sizeof(err)) != APR_SUCCESS)
            fail_msg("open: %s", err);
        return st;
    }
    if (sm_store_open_sqlite(&st, u->pool, *path, SM_STORE_CREATE, 1000,
                             NULL, err, sizeof(err)) != APR_SUCCESS)
        fail_msg("open: %s", err);
    return st;
}

static sm_change record(const sm_site_conf *s, const char *url,
                        apr_int64_t lastmod, apr_int64_t seen)
{
    sm_change c;

    memset(&c, 0, sizeof(c));
    c.op = SM_CHANGE_RECORD;
    c.site = s;
    c.url = url;
    c.last_modified = apr_time_from_sec(lastmod);
    c.seen = apr_time_from_sec(seen);
    c.status = 200;
    return c;
}

static sm_change crawl(const sm_site_conf *s, const char *crawler,
                       const char *url, apr_int64_t at, int status,
                       int sitemap)
{
    sm_change c;

    memset(&c, 0, sizeof(c));
    c.op = SM_CHANGE_CRAWL;
    c.site = s;
    c.url = url;
    c.seen = apr_time_from_sec(at);
    c.status = status;
    c.crawler = crawler;
    c.sitemap = sitemap;
    return c;
}

static void apply_n(sm_store *st, sm_change *c, int n)
{
    sm_apply_stats stats;

    if (sm_store_apply(st, c, n, &stats) != APR_SUCCESS)
        fail_msg("apply: %s", sm_store_error(st));
}

static void apply(sm_store *st, sm_change c)
{
    apply_n(st, &c, 1);
}

static sm_coverage coverage(sm_store *st, const char *base,
                            const char *crawler)
{
    sm_coverage cv;

    assert_int_equal(sm_store_coverage(st, base, crawler,
                                       apr_time_from_sec(T0), &cv),
                     APR_SUCCESS);
    assert_string_equal(cv.crawler, crawler);
    return cv;
}

/* sitemapctl coverage's lines: "url lastmod fetched status\n" */
typedef struct {
    apr_pool_t *p;
    char *text;
    int stop_after;
} lines;

static apr_status_t add_line(void *baton, const char *url, apr_time_t lastmod,
                             apr_time_t fetched, int status)
{
    lines *l = baton;

    l->text = apr_psprintf(l->p, "%s%s %" APR_INT64_T_FMT " %"
                           APR_INT64_T_FMT " %d\n", l->text, url,
                           (apr_int64_t)apr_time_sec(lastmod),
                           (apr_int64_t)apr_time_sec(fetched), status);
    if (l->stop_after && --l->stop_after == 0)
        return APR_EOF;
    return APR_SUCCESS;
}

static const char *listing(unit_ctx *u, sm_store *st, const char *crawler,
                           sm_coverage_which which)
{
    lines l = { u->pool, "", 0 };

    assert_int_equal(sm_store_coverage_urls(st, site.base, crawler, which,
                                            add_line, &l), APR_SUCCESS);
    return l.text;
}

/* The site: /a, /b, /c on page 1 and 2 (2 a page), in that order. */
static sm_store *three_urls(unit_ctx *u, char **path)
{
    sm_store *st = open_store(u, "c.db", path);
    sm_change c[3];

    c[0] = record(&site, "/a", T0 - 10 * DAY, T0 - 10 * DAY);
    c[1] = record(&site, "/b", T0 - 10 * DAY, T0 - 10 * DAY);
    c[2] = record(&site, "/c", T0 - 10 * DAY, T0 - 10 * DAY);
    apply_n(st, c, 3);
    return st;
}

static void test_figures(void **state)
{
    unit_ctx *u = *state;
    char *path;
    sm_store *st = three_urls(u, &path);
    sm_coverage cv;
    sm_change c[4];

    /* Nothing yet: every listed URL never crawled. */
    cv = coverage(st, site.base, "Googlebot");
    assert_int_equal(cv.listed_urls, 3);
    assert_int_equal(cv.never_crawled, 3);
    assert_int_equal(cv.crawled_30d + cv.stale + cv.unlisted_hits
                     + cv.sitemap_fetches, 0);
    assert_true(cv.last_sitemap_fetch == 0);

    /* /a today, /b 20 days ago (before its lastmod: stale), /nope twice
     * (not listed), the sitemap twice (one fetch older), in one batch. */
    c[0] = crawl(&site, "Googlebot", "/a", T0 - 3600, 200, 0);
    c[1] = crawl(&site, "Googlebot", "/b", T0 - 20 * DAY, 304, 0);
    c[2] = crawl(&site, "Googlebot", "/nope", T0 - 100, 404, 0);
    c[3] = crawl(&site, "Googlebot", "/sitemap.xml", T0 - 50, 200, 1);
    apply_n(st, c, 4);
    apply(st, crawl(&site, "Googlebot", "/nope", T0 - 90, 404, 0));
    apply(st, crawl(&site, "Googlebot", "/sitemap.xml", T0 - 500, 200, 1));
    cv = coverage(st, site.base, "Googlebot");
    assert_int_equal(cv.listed_urls, 3);
    assert_int_equal(cv.crawled_1d, 1);
    assert_int_equal(cv.crawled_7d, 1);
    assert_int_equal(cv.crawled_30d, 2);
    assert_int_equal(cv.never_crawled, 1);
    assert_int_equal(cv.stale, 1);
    assert_int_equal(cv.unlisted_hits, 2);
    assert_int_equal(cv.sitemap_fetches, 2);
    assert_true(cv.last_sitemap_fetch == apr_time_from_sec(T0 - 50));
    /* Nothing of the listing changed; a crawler's fetch is no visit. */
    if (!pg_uri)
        assert_int_equal(sql_int(path, "SELECT count(*) FROM urls"), 3);
    if (!pg_uri)
        assert_int_equal(sql_int(path, "SELECT max(last_seen) FROM urls"),
                         T0 - 10 * DAY);

    /* Another crawler, another site: their own figures. */
    cv = coverage(st, site.base, "Bingbot");
    assert_int_equal(cv.never_crawled, 3);
    assert_int_equal(cv.unlisted_hits, 0);
    cv = coverage(st, other.base, "Googlebot");
    assert_int_equal(cv.listed_urls, 0);
    assert_int_equal(cv.sitemap_fetches, 0);

    /* sitemapctl coverage: sitemap order; never, stale, unlisted */
    assert_string_equal(listing(u, st, "Googlebot", SM_COVERAGE_LISTED),
        apr_psprintf(u->pool, "/a %d %d 200\n/b %d %d 304\n/c %d 0 0\n",
                     T0 - 10 * DAY, T0 - 3600, T0 - 10 * DAY, T0 - 20 * DAY,
                     T0 - 10 * DAY));
    assert_string_equal(listing(u, st, "Googlebot", SM_COVERAGE_NEVER),
        apr_psprintf(u->pool, "/c %d 0 0\n", T0 - 10 * DAY));
    assert_string_equal(listing(u, st, "Googlebot", SM_COVERAGE_STALE),
        apr_psprintf(u->pool, "/b %d %d 304\n", T0 - 10 * DAY,
                     T0 - 20 * DAY));
    assert_string_equal(listing(u, st, "Googlebot", SM_COVERAGE_UNLISTED),
        apr_psprintf(u->pool, "/nope 0 %d 404\n", T0 - 90));
    /* A walk stops when the callback says so. */
    {
        lines l = { u->pool, "", 1 };
        assert_int_equal(sm_store_coverage_urls(st, site.base, "Googlebot",
                                                SM_COVERAGE_LISTED, add_line,
                                                &l), APR_EOF);
        assert_string_equal(l.text, apr_psprintf(u->pool, "/a %d %d 200\n",
                                                 T0 - 10 * DAY, T0 - 3600));
    }
    sm_store_close(st);
}

/* A page changed after its crawl is stale until the crawler fetches it
 * again; an older fetch arriving late changes nothing. */
static void test_stale_until_fetched(void **state)
{
    unit_ctx *u = *state;
    char *path;
    sm_store *st = three_urls(u, &path);
    sm_coverage cv;

    apply(st, crawl(&site, "Googlebot", "/a", T0 - 5 * DAY, 200, 0));
    cv = coverage(st, site.base, "Googlebot");
    assert_int_equal(cv.stale, 0);
    /* /a changes */
    apply(st, record(&site, "/a", T0 - 2 * DAY, T0 - 2 * DAY));
    cv = coverage(st, site.base, "Googlebot");
    assert_int_equal(cv.stale, 1);
    /* A late fetch from before: still stale */
    apply(st, crawl(&site, "Googlebot", "/a", T0 - 6 * DAY, 200, 0));
    cv = coverage(st, site.base, "Googlebot");
    assert_int_equal(cv.stale, 1);
    assert_int_equal(cv.crawled_7d, 1);
    assert_non_null(strstr(listing(u, st, "Googlebot", SM_COVERAGE_LISTED),
                           apr_psprintf(u->pool, "/a %d %d 200\n",
                                        T0 - 2 * DAY, T0 - 5 * DAY)));
    /* Fetched again */
    apply(st, crawl(&site, "Googlebot", "/a", T0 - DAY, 200, 0));
    cv = coverage(st, site.base, "Googlebot");
    assert_int_equal(cv.stale, 0);
    assert_non_null(strstr(listing(u, st, "Googlebot", SM_COVERAGE_LISTED),
                           apr_psprintf(u->pool, "/a %d %d 200\n",
                                        T0 - 2 * DAY, T0 - DAY)));
    sm_store_close(st);
}

/* A new page and its crawler's fetch in one batch, the record first:
 * listed; a URL removed takes its fetches with it. */
static void test_same_batch_and_removal(void **state)
{
    unit_ctx *u = *state;
    char *path;
    sm_store *st = open_store(u, "b.db", &path);
    sm_change c[2], f;
    sm_coverage cv;

    c[0] = record(&site, "/new", T0 - 100, T0 - 100);
    c[1] = crawl(&site, "Googlebot", "/new", T0 - 100, 200, 0);
    apply_n(st, c, 2);
    cv = coverage(st, site.base, "Googlebot");
    assert_int_equal(cv.listed_urls, 1);
    assert_int_equal(cv.crawled_1d, 1);
    assert_int_equal(cv.unlisted_hits, 0);

    memset(&f, 0, sizeof(f));
    f.op = SM_CHANGE_FORGET;
    f.site = &site;
    f.url = "/new";
    f.seen = apr_time_from_sec(T0 - 50);
    apply(st, f);
    if (!pg_uri)
        assert_int_equal(sql_int(path, "SELECT count(*) FROM crawls"), 0);
    /* Back again: never crawled since */
    apply(st, record(&site, "/new", T0 - 40, T0 - 40));
    cv = coverage(st, site.base, "Googlebot");
    assert_int_equal(cv.never_crawled, 1);
    sm_store_close(st);
}

/* Fetches of URLs not listed: all counted, the newest kept. */
static void test_unlisted_bounded(void **state)
{
    unit_ctx *u = *state;
    char *path;
    sm_store *st = open_store(u, "u.db", &path);
    int n = SM_CRAWL_UNLISTED_MAX + 25, i;
    sm_change *c = apr_palloc(u->pool, sizeof(*c) * (apr_size_t)n);
    sm_coverage cv;

    for (i = 0; i < n; i++)
        c[i] = crawl(&site, "Googlebot", apr_psprintf(u->pool, "/x%d", i),
                     T0 - n + i, 404, 0);
    apply_n(st, c, n);
    cv = coverage(st, site.base, "Googlebot");
    assert_int_equal(cv.unlisted_hits, n);
    /* The newest SM_CRAWL_UNLISTED_MAX, newest first */
    {
        const char *text = listing(u, st, "Googlebot", SM_COVERAGE_UNLISTED);
        const char *first = apr_psprintf(u->pool, "/x%d 0 ", n - 1), *at;
        int lines = 0;

        for (at = text; (at = strchr(at, '\n')) != NULL; at++)
            lines++;
        assert_int_equal(lines, SM_CRAWL_UNLISTED_MAX);
        assert_int_equal(strncmp(text, first, strlen(first)), 0);
        assert_null(strstr(text, "/x24 "));
        assert_non_null(strstr(text, "/x25 "));
    }
    if (!pg_uri)
        assert_int_equal(sql_int(path, "SELECT count(*) FROM crawl_unlisted"),
                         SM_CRAWL_UNLISTED_MAX);
    sm_store_close(st);
}

/* A schema-7 store: a reader cannot tell (APR_ENOTIMPL), the first writer
 * upgrades it. */
static void test_upgrade_from_7(void **state)
{
    unit_ctx *u = *state;
    char *path, err[512];
    sm_store *st = three_urls(u, &path);
    sm_coverage cv;

    sm_store_close(st);
    sql_exec(path, SM_UNIT_DROP_CRAWLS " PRAGMA user_version = 7;");
    if (sm_store_open_sqlite(&st, u->pool, path,
                             SM_STORE_READONLY | SM_STORE_PROBE, 1000, NULL,
                             err, sizeof(err)) != APR_SUCCESS)
        fail_msg("probe: %s", err);
    assert_int_equal(sm_store_coverage(st, site.base, "Googlebot",
                                       apr_time_from_sec(T0), &cv),
                     APR_ENOTIMPL);
    sm_store_close(st);
    st = open_store(u, "c.db", &path);
    assert_int_equal(sql_int(path, "PRAGMA user_version"),
                     SM_SCHEMA_VERSION);
    apply(st, crawl(&site, "Googlebot", "/c", T0, 200, 0));
    cv = coverage(st, site.base, "Googlebot");
    assert_int_equal(cv.crawled_1d, 1);
    assert_int_equal(cv.never_crawled, 2);
    sm_store_close(st);
}

/* The day's figures of crawler (listed, crawled), -1 -1: no row. */
static void day_row(unit_ctx *u, sm_store *st, const char *crawler,
                    apr_int64_t day, apr_int64_t *listed, apr_int64_t *crawled)
{
    apr_array_header_t *days;
    int i;

    *listed = *crawled = -1;
    assert_int_equal(sm_store_crawl_days(st, u->pool, site.base, crawler, 0,
                                         &days), APR_SUCCESS);
    for (i = 0; i < days->nelts; i++) {
        const sm_crawl_day *d = &APR_ARRAY_IDX(days, i, sm_crawl_day);
        if (i)
            assert_true(d->day > APR_ARRAY_IDX(days, i - 1, sm_crawl_day).day);
        if (d->day == day) {
            *listed = d->listed;
            *crawled = d->crawled;
        }
    }
}

static int note(sm_store *st, apr_int64_t now_s)
{
    int taken = -1;

    assert_int_equal(sm_store_crawl_days_note(st, site.base,
                                              apr_time_from_sec(now_s),
                                              &taken), APR_SUCCESS);
    return taken;
}

/* Per UTC day: the day that ended taken once, with every crawler the
 * store knows for the site (fetches of listed URLs within 30 days of the
 * taking), SM_CRAWL_DAYS days kept. */
static void test_days(void **state)
{
    unit_ctx *u = *state;
    char *path;
    sm_store *st = three_urls(u, &path);
    apr_int64_t d0 = T0 / DAY - 1, listed, crawled;
    sm_change c[3];

    c[0] = crawl(&site, "Googlebot", "/a", T0 - 3600, 200, 0);
    c[1] = crawl(&site, "Googlebot", "/b", T0 - 40 * DAY, 200, 0);
    c[2] = crawl(&site, "Bingbot", "/sitemap.xml", T0 - 60, 200, 1);
    apply_n(st, c, 3);
    assert_int_equal(note(st, T0), 1);
    day_row(u, st, "Googlebot", d0, &listed, &crawled);
    assert_int_equal(listed, 3);
    assert_int_equal(crawled, 1);
    day_row(u, st, "Bingbot", d0, &listed, &crawled);
    assert_int_equal(listed, 3);
    assert_int_equal(crawled, 0);
    day_row(u, st, "", d0, &listed, &crawled);
    assert_int_equal(listed, 3);

    /* Once a day: a later fetch changes the taken day in no way. */
    apply(st, crawl(&site, "Googlebot", "/c", T0 - 10, 200, 0));
    assert_int_equal(note(st, T0 + 60), 0);
    day_row(u, st, "Googlebot", d0, &listed, &crawled);
    assert_int_equal(crawled, 1);

    /* The next day counts /a and /c; a day 30 days on drops the first. */
    assert_int_equal(note(st, T0 + DAY), 1);
    day_row(u, st, "Googlebot", d0 + 1, &listed, &crawled);
    assert_int_equal(crawled, 2);
    assert_int_equal(note(st, T0 + SM_CRAWL_DAYS * DAY), 1);
    day_row(u, st, "Googlebot", d0, &listed, &crawled);
    assert_int_equal(listed, -1);
    day_row(u, st, "Googlebot", d0 + 1, &listed, &crawled);
    assert_int_equal(crawled, 2);
    day_row(u, st, "Googlebot", d0 + SM_CRAWL_DAYS, &listed, &crawled);
    assert_int_equal(listed, 3);
    assert_int_equal(crawled, 0);
    sm_store_close(st);
}

static apr_int64_t pending(unit_ctx *u, sm_store *st)
{
    apr_array_header_t *stats;

    assert_int_equal(sm_store_indexnow_stats(st, u->pool, site.base, &stats),
                     APR_SUCCESS);
    return stats->nelts ? APR_ARRAY_IDX(stats, 0, sm_indexnow_stats).pending
                        : 0;
}

/* SitemapIndexNowStale: a listed URL fetched before its lastmod, a
 * lastmod over a day old, goes on the pending list; fetched after it, or
 * never, or changed within the day, it does not; once pending, not again. */
static void test_indexnow_stale(void **state)
{
    unit_ctx *u = *state;
    char *path;
    sm_store *st = three_urls(u, &path);
    sm_change c[2];
    int queued = -1;

    c[0] = crawl(&site, "Googlebot", "/a", T0 - 20 * DAY, 200, 0);
    c[1] = crawl(&site, "Bingbot", "/b", T0 - 3600, 200, 0);
    apply_n(st, c, 2);
    assert_int_equal(sm_store_indexnow_stale(st, site.base,
                                             apr_time_from_sec(T0), &queued),
                     APR_SUCCESS);
    assert_int_equal(queued, 1);
    assert_int_equal(pending(u, st), 1);
    assert_int_equal(sm_store_indexnow_stale(st, site.base,
                                             apr_time_from_sec(T0 + 60),
                                             &queued), APR_SUCCESS);
    assert_int_equal(queued, 0);
    /* /b changed an hour after Bingbot's fetch: not a day ago yet. */
    apply(st, record(&site, "/b", T0 - 60, T0 - 60));
    assert_int_equal(sm_store_indexnow_stale(st, site.base,
                                             apr_time_from_sec(T0), &queued),
                     APR_SUCCESS);
    assert_int_equal(queued, 0);
    assert_int_equal(sm_store_indexnow_stale(st, site.base,
                                             apr_time_from_sec(T0 + DAY),
                                             &queued), APR_SUCCESS);
    assert_int_equal(queued, 1);
    assert_int_equal(pending(u, st), 2);
    sm_store_close(st);
}

static int any_base(void *baton, const char *base)
{
    (void)baton;
    (void)base;
    return 1;
}

/* A site made from a Host that never held a URL goes with its crawler
 * rows. */
static void test_prune_takes_crawls(void **state)
{
    unit_ctx *u = *state;
    char *path;
    sm_store *st = open_store(u, "p.db", &path);
    int pruned = 0;

    apply(st, crawl(&other, "Googlebot", "/nope", T0, 404, 0));
    apply(st, crawl(&other, "Googlebot", "/sitemap.xml", T0, 200, 1));
    assert_int_equal(sql_int(path, "SELECT count(*) FROM crawlers"), 1);
    assert_int_equal(sm_store_prune_sites(st, any_base, NULL, &pruned),
                     APR_SUCCESS);
    assert_int_equal(pruned, 1);
    assert_int_equal(sql_int(path, "SELECT count(*) FROM crawlers"), 0);
    assert_int_equal(sql_int(path, "SELECT count(*) FROM crawl_unlisted"),
                     0);
    sm_store_close(st);
}

/* Through the recorder: a page's record, a note of another URL and two
 * crawlers' fetches of the page in one batch all go in, the record
 * first; a fetch of the same URL by the same crawler later in the batch
 * takes the earlier one's place. */
static void test_recorder_crawl(void **state)
{
    unit_ctx *u = *state;
    char *path = apr_pstrcat(u->pool, u->dir, "/r.db", NULL);
    sm_logger logger = { NULL, NULL, SM_LOG_ERR };
    sm_recorder_conf conf = { path, apr_time_from_sec(60), 100, 1000, 200,
                              &logger, NULL, NULL, NULL, 0, 0, 0, 0 };
    sm_change r = record(&site, "/p", T0 - 100, T0 - 100);
    sm_change n, g1, g2, b;
    sm_recorder *rec;
    sm_store *st;
    sm_coverage cv;

    memset(&n, 0, sizeof(n));
    n.op = SM_CHANGE_NOTE;
    n.site = &site;
    n.url = "/p";
    n.why = "session";
    n.seen = apr_time_from_sec(T0 - 100);
    g1 = crawl(&site, "Googlebot", "/p", T0 - 100, 200, 0);
    g2 = crawl(&site, "Googlebot", "/p", T0 - 90, 304, 0);
    b = crawl(&site, "Bingbot", "/p", T0 - 80, 200, 0);
    assert_int_equal(sm_recorder_create(&rec, u->pool, &conf), APR_SUCCESS);
    sm_recorder_add_site(rec, &site);
    sm_recorder_add(rec, &r, 0);
    sm_recorder_note(rec, &n);
    assert_int_equal(sm_recorder_crawl(rec, &g1), 1);
    assert_int_equal(sm_recorder_crawl(rec, &g2), 1);
    assert_int_equal(sm_recorder_crawl(rec, &b), 1);
    assert_int_equal(sm_recorder_flush(rec), APR_SUCCESS);
    sm_recorder_stop(rec);

    assert_int_equal(sql_int(path, "SELECT count(*) FROM urls"), 1);
    assert_int_equal(sql_int(path, "SELECT count(*) FROM verdicts"), 1);
    assert_int_equal(sql_int(path, "SELECT count(*) FROM crawls"), 2);
    assert_int_equal(sql_int(path, "SELECT status FROM crawls"
                                   " WHERE crawler = 'Googlebot'"), 304);
    st = open_store(u, "r.db", &path);
    cv = coverage(st, site.base, "Bingbot");
    assert_int_equal(cv.crawled_1d, 1);
    assert_int_equal(cv.unlisted_hits, 0);
    sm_store_close(st);
}

UNIT_PG_VARIANT(test_figures)

UNIT_PG_VARIANT(test_stale_until_fetched)

UNIT_PG_VARIANT(test_same_batch_and_removal)

UNIT_PG_VARIANT(test_unlisted_bounded)

UNIT_PG_VARIANT(test_days)

UNIT_PG_VARIANT(test_indexnow_stale)

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_figures, unit_setup, unit_teardown),
        cmocka_unit_test_setup_teardown(test_stale_until_fetched, unit_setup, unit_teardown),
        cmocka_unit_test_setup_teardown(test_same_batch_and_removal, unit_setup, unit_teardown),
        cmocka_unit_test_setup_teardown(test_unlisted_bounded, unit_setup, unit_teardown),
        cmocka_unit_test_setup_teardown(test_upgrade_from_7, unit_setup, unit_teardown),
        cmocka_unit_test_setup_teardown(test_prune_takes_crawls, unit_setup, unit_teardown),
        cmocka_unit_test_setup_teardown(test_figures_pg, unit_setup, unit_teardown),
        cmocka_unit_test_setup_teardown(test_stale_until_fetched_pg, unit_setup, unit_teardown),
        cmocka_unit_test_setup_teardown(test_same_batch_and_removal_pg, unit_setup, unit_teardown),
        cmocka_unit_test_setup_teardown(test_unlisted_bounded_pg, unit_setup, unit_teardown),
        cmocka_unit_test_setup_teardown(test_days, unit_setup, unit_teardown),
        cmocka_unit_test_setup_teardown(test_days_pg, unit_setup, unit_teardown),
        cmocka_unit_test_setup_teardown(test_indexnow_stale, unit_setup, unit_teardown),
        cmocka_unit_test_setup_teardown(test_indexnow_stale_pg, unit_setup, unit_teardown),
        /* Last: stopping a recorder stops every store of the process for
         * good (sm_store_stop_all, as a child's exit does); a store used
         * after it gives up on any answer slower than its busy timeout. */
        cmocka_unit_test_setup_teardown(test_recorder_crawl, unit_setup, unit_teardown),
    };

    UNIT_STORE_RUN(tests);
}
