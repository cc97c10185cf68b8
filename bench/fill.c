/* SPDX-License-Identifier: Apache-2.0 */
/* bench/fill.c: fill a mod_sitemap store fast, without HTTP.
 *
 * Links the module's core (src/) and calls sm_store_apply with batches of
 * 10,000 SM_CHANGE_RECORD changes, exactly as the module's writer thread
 * does, so the file holds what the module would have written for a site
 * that served these URLs (page summaries, id ranges and all).
 *
 *   fill DB BASE COUNT [PAGE_SIZE [FIRST [PAD]]]
 *
 * DB         the store file (created when missing), or a postgresql://
 *            URI (its tables created when missing)
 * BASE       the site's base URL as the module computes it (the vhost's
 *            SitemapBaseURL, canonicalised by sm_url_parse_base here too)
 * COUNT      how many URLs to add: /catalog/item-NNNNNNNNN.html, numbered
 *            from FIRST (default 0)
 * PAGE_SIZE  the site's SitemapPageSize (default 50000)
 * PAD        make every path PAD characters longer (/catalog/xxx.../item-
 *            ...), for pages of many bytes (default 0)
 *
 * URL number i was served (seen) FIRST + COUNT - i seconds before a day
 * ago (recent enough for the default SitemapExpire of 365 days, which the
 * module applies to the store), and has no Last-Modified, so its lastmod is
 * that time.  Prints what was
 * done and how fast; exits non-zero when the store refuses anything. */
#include "store/sm_store.h"
#include "util/sm_url.h"

#include <apr_general.h>
#include <apr_strings.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sqlite3.h>

#define BATCH 10000

/* A bulk load only: every connection this process opens (the core's, in
 * sm_store_open_sqlite) gets a bigger page cache and fewer, larger WAL
 * checkpoints.  The file is the same; the module's own settings (WAL,
 * synchronous=NORMAL) are still set by the core after this. */
#ifndef FILL_PRAGMAS
#define FILL_PRAGMAS \
    "PRAGMA cache_size = -262144; PRAGMA wal_autocheckpoint = 16384"
#endif

static int tune_connection(sqlite3 *db, char **err,
                           const struct sqlite3_api_routines *api)
{
    (void)err; (void)api;
    return sqlite3_exec(db, FILL_PRAGMAS, NULL, NULL, NULL);
}

/* FILL_PROFILE=1 (for diagnosis): SQLite's own time per statement, summed
 * by SQL text (a statement's triggers count in its time), printed at the
 * end.  FILL_BATCH=N: batches of N changes instead of 10,000 (the module's
 * writer commits up to 1,000). */
#define PROF_MAX 64
static struct {
    const char *sql;
    double ns;
    long n;
} prof[PROF_MAX];

static int prof_cb(unsigned type, void *ctx, void *p, void *x)
{
    const char *sql = sqlite3_sql((sqlite3_stmt *)p);
    int i;
    (void)type; (void)ctx;
    if (!sql)
        return 0;
    for (i = 0; i < PROF_MAX && prof[i].sql; i++)
        if (strcmp(prof[i].sql, sql) == 0)
            break;
    if (i == PROF_MAX)
        return 0;
    if (!prof[i].sql)
        prof[i].sql = strdup(sql);
    prof[i].ns += (double)*(sqlite3_int64 *)x;
    prof[i].n++;
    return 0;
}

static int profile_connection(sqlite3 *db, char **err,
                              const struct sqlite3_api_routines *api)
{
    (void)err; (void)api;
    sqlite3_trace_v2(db, SQLITE_TRACE_PROFILE, prof_cb, NULL);
    return SQLITE_OK;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
    apr_pool_t *pool, *batch_pool;
    sm_store *st;
    sm_site_conf site;
    sm_change *changes;
    sm_apply_stats stats;
    apr_int64_t count, first = 0, done = 0, added = 0, seen0;
    const char *err = NULL;
    char errmsg[512];
    double t0, t1;
    int page_size = SM_PAGE_MAX_URLS, pad = 0, batch = BATCH;
    int profile = getenv("FILL_PROFILE") && atoi(getenv("FILL_PROFILE"));
    char *padding = "";

    sm_store_init();             /* as the module and sitemapctl */
    if (argc < 4 || argc > 7) {
        fprintf(stderr, "usage: %s DB BASE COUNT [PAGE_SIZE [FIRST [PAD]]]\n",
                argv[0]);
        return 2;
    }
    count = apr_atoi64(argv[3]);
    if (argc > 4)
        page_size = atoi(argv[4]);
    if (argc > 5)
        first = apr_atoi64(argv[5]);
    if (argc > 6)
        pad = atoi(argv[6]);
    if (count < 0 || page_size < 1 || page_size > SM_PAGE_MAX_URLS
        || first < 0 || pad < 0 || pad > 1900) {
        fprintf(stderr, "fill: bad COUNT, PAGE_SIZE, FIRST or PAD\n");
        return 2;
    }

    sqlite3_auto_extension((void (*)(void))tune_connection);
    if (profile)
        sqlite3_auto_extension((void (*)(void))profile_connection);
    if (getenv("FILL_BATCH") && atoi(getenv("FILL_BATCH")) > 0)
        batch = atoi(getenv("FILL_BATCH"));
    apr_initialize();
    atexit(apr_terminate);
    apr_pool_create(&pool, NULL);
    apr_pool_create(&batch_pool, pool);

    if (pad) {
        padding = apr_palloc(pool, pad + 1);
        memset(padding, 'x', pad);
        padding[0] = '/';
        padding[pad] = '\0';
    }
    memset(&site, 0, sizeof(site));
    if (!(site.base = sm_url_parse_base(pool, argv[2], &err))) {
        fprintf(stderr, "fill: base URL '%s': %s\n", argv[2], err);
        return 2;
    }
    site.page_size = page_size;
    site.max_urls = 0;          /* no limit */
    site.expire = 0;
    site.settings = NULL;       /* as sitemapctl: never overwrite the
                                   module's settings */

    if (sm_store_open(&st, pool, argv[1], SM_STORE_CREATE, 5000, NULL,
                      errmsg, sizeof(errmsg)) != APR_SUCCESS) {
        fprintf(stderr, "fill: %s: %s\n", argv[1], errmsg);
        return 1;
    }

    seen0 = apr_time_sec(apr_time_now()) - 86400 - first - count;
    changes = apr_pcalloc(pool, sizeof(*changes) * batch);
    t0 = now_s();
    while (done < count) {
        int i, n = count - done < batch ? (int)(count - done) : batch;

        apr_pool_clear(batch_pool);
        for (i = 0; i < n; i++) {
            apr_int64_t k = first + done + i;
            changes[i].op = SM_CHANGE_RECORD;
            changes[i].site = &site;
            changes[i].url = apr_psprintf(batch_pool,
                                          "/catalog%s/item-%09"
                                          APR_INT64_T_FMT ".html", padding,
                                          k);
            changes[i].last_modified = 0;
            changes[i].etag = NULL;
            changes[i].seen = apr_time_from_sec(seen0 + k);
        }
        if (sm_store_apply(st, changes, n, &stats) != APR_SUCCESS) {
            fprintf(stderr, "fill: after %" APR_INT64_T_FMT " URLs: %s\n",
                    done, sm_store_error(st));
            sm_store_close(st);
            return 1;
        }
        if (stats.refused_full) {
            fprintf(stderr, "fill: %d URLs refused (max_urls)\n",
                    stats.refused_full);
            sm_store_close(st);
            return 1;
        }
        added += stats.added;
        done += n;
    }
    sm_store_close(st);
    t1 = now_s();
    printf("fill: %s: %" APR_INT64_T_FMT " URLs (%" APR_INT64_T_FMT
           " new) for %s in %.1f s (%.0f URLs/s)\n", argv[1], done, added,
           site.base, t1 - t0, (t1 > t0 ? done / (t1 - t0) : 0.0));
    if (profile && done) {
        int i;
        double sum = 0;
        for (i = 0; i < PROF_MAX && prof[i].sql; i++)
            sum += prof[i].ns;
        printf("fill: SQLite statements: %.2f us per URL of %.2f us in "
               "all\n", sum / 1e3 / done, (t1 - t0) * 1e6 / done);
        for (i = 0; i < PROF_MAX && prof[i].sql; i++)
            if (prof[i].ns / 1e3 / done >= 0.005)
                printf("  %6.2f us/URL  %9ld x  %.110s\n",
                       prof[i].ns / 1e3 / done, prof[i].n, prof[i].sql);
    }
    return 0;
}
