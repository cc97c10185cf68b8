/* SPDX-License-Identifier: Apache-2.0 */
/* sm_store.h: the store of recorded URLs, behind one small interface.
 *
 * Two backends: one SQLite file (sm_store_sqlite.c) and a PostgreSQL
 * database shared by a farm of servers (sm_store_pg.c); callers only see
 * this vtable (sm_store_open picks the backend).
 *
 * Model: a site is named by its base URL ("https://www.example.com").  Each
 * URL of a site sits on a page (1, 2, ...) for as long as it is stored; new
 * URLs fill the site's last page until it holds page_size URLs or its XML
 * would pass SM_PAGE_MAX_BYTES, then open the next page.  Every page keeps a
 * small summary (URL count, XML size, newest lastmod, a version that grows
 * on every change), so the sitemap handler never has to count or scan the
 * whole site. */
#ifndef SM_STORE_H
#define SM_STORE_H

#include <apr_pools.h>
#include <apr_tables.h>
#include <apr_time.h>

#include "util/sm_log.h"

#define SM_PAGE_MAX_URLS   50000
#define SM_PAGE_MAX_BYTES  52428800
/* Bytes a <url> entry needs besides its escaped <loc> text: the tags, a
 * lastmod, and room for the longest changefreq and priority elements. */
#define SM_ENTRY_OVERHEAD  160
/* Bytes of the XML declaration, <urlset ...> and </urlset>. */
#define SM_PAGE_OVERHEAD   256

/* The schema version this code writes (PRAGMA user_version). */
#define SM_SCHEMA_VERSION  13
/* Days of removal counts the store keeps per site (the status page's
 * chart shows 42). */
#define SM_REMOVED_DAYS 60

/* How a site is configured where that shapes what is stored. */
typedef struct {
    const char *base;           /* canonical base URL: the site's name */
    int page_size;              /* 1..SM_PAGE_MAX_URLS */
    apr_int64_t max_urls;       /* new URLs beyond this are refused */
    apr_interval_time_t expire; /* 0: never */
    /* What else of the configuration shapes the site's sitemap (see
     * sm_settings_format), kept with the site so that sitemapctl export
     * can reproduce the module's output; NULL: not known. */
    const char *settings;
    /* SitemapIndexNow On: every URL added, whose lastmod moved, or removed
     * is also put on the site's IndexNow pending list, in the same
     * transaction; a URL added by traffic once it is corroborated
     * (sm_store_tx.h). */
    int indexnow;
} sm_site_conf;
/* indexnow's bit for SitemapIndexNowStale On (indexnow is non-zero, On,
 * with it): the writer's upkeep puts on the pending list, once a change,
 * listed URLs a crawler fetched before they last changed, more than a day
 * ago (sm_store_indexnow_stale). */
#define SM_SITE_INDEXNOW_STALE 2

/* ---- IndexNow (see sm_indexnow.h for the sender) ---------------------------
 * The pending list lives in the store, so every process of a server and
 * every server of a farm sharing the store sees one list: a sender claims
 * a site's batch for a lease (one sender at a time per site), posts it, and
 * then removes what it sent. */

/* Pending URLs kept per site; changes beyond it are counted as overflow. */
#define SM_INDEXNOW_BACKLOG_MAX 100000
/* URLs per submission: the protocol's limit. */
#define SM_INDEXNOW_BATCH_MAX   10000

typedef struct {
    const char *url;            /* path[?query], as stored */
    apr_int64_t queued;         /* identifies this change of the URL */
} sm_indexnow_item;

/* What a claim gives the sender. */
typedef struct {
    apr_array_header_t *items;      /* sm_indexnow_item, oldest first */
    apr_interval_time_t backoff;    /* the last retry delay, 0: none */
    apr_int64_t overflow, overflow_logged;
} sm_indexnow_batch;

/* How a claimed batch ended. */
typedef enum {
    SM_INDEXNOW_SENT = 1,   /* accepted: its rows go, counted as sent */
    SM_INDEXNOW_DROPPED,    /* refused for good: its rows go, counted */
    SM_INDEXNOW_RETRY       /* kept for next_try */
} sm_indexnow_outcome;

typedef struct {
    sm_indexnow_outcome outcome;
    int status;                 /* HTTP status, 0: no answer */
    const char *reason;         /* the answer, or why there was none */
    apr_time_t now, next_try;
    apr_interval_time_t backoff;
    apr_int64_t overflow_logged;
} sm_indexnow_result;

/* One site's IndexNow numbers, for sitemapctl stats. */
typedef struct {
    const char *base;
    apr_int64_t pending, sent, dropped, overflow;
    apr_time_t last_sent;       /* 0: never answered */
    int last_status;            /* 0: no answer (connection failed) */
    const char *last_reason;
    apr_time_t next_try;
} sm_indexnow_stats;

/* SM_CHANGE_SEED (sitemapctl import/add): a URL learned from an access log
 * or named by an administrator.  A new URL is added as by SM_CHANGE_RECORD
 * (lastmod = last_modified, or seen); a stored URL keeps its lastmod and
 * ETag (what the module saw in real responses is better evidence than a
 * log line) and only has its last_seen raised to seen. */
/* SM_CHANGE_CRAWL: a crawler's verified fetch (crawler, url, seen,
 * status; sitemap: it fetched one of the site's sitemap documents, url is
 * then only its name).  Nothing of the URL's listing changes: for a listed
 * URL the crawler's last fetch of it moves to seen; a URL not listed
 * counts as the crawler's unlisted hit and is kept among its latest
 * (SM_CRAWL_UNLISTED_MAX); a sitemap document's fetch is counted.  A
 * RECORD of the same response goes first in the batch, so that a page's
 * first fetch counts as listed. */
/* SM_CHANGE_NOTE: a response the rules left out (why, detail, status):
 * nothing of the URL's listing changes, only its latest verdict is kept
 * (sm_verdict_row) for sitemapctl why and the status page.  A forget with
 * a why keeps one likewise ("removed" when the URL was stored). */
/* SM_CHANGE_IMAGE: an image (image, an absolute URL in stored form) a
 * browser fetched with the page url as its Referer (SitemapImages): kept
 * with the page when it is listed, else nothing.  SM_CHANGE_IMAGE_GONE:
 * the image answered 404 or 410: it leaves every page of the site.
 * Neither changes a page's lastmod nor goes to IndexNow: an image is not
 * a page; a page whose images change has its page's version moved (its
 * document's validators follow). */
typedef enum {
    SM_CHANGE_RECORD = 1, SM_CHANGE_FORGET, SM_CHANGE_SEED, SM_CHANGE_NOTE,
    SM_CHANGE_CRAWL,
    /* The site's robots.txt as a process read or served it (detail: its
     * body, at most SM_ROBOTS_BODY_MAX bytes; url "/robots.txt"): stored
     * when it differs from the stored one, which starts a sweep
     * (sm_store_robots_row).  Nothing of any URL's listing changes. */
    SM_CHANGE_ROBOTS,
    SM_CHANGE_IMAGE, SM_CHANGE_IMAGE_GONE
} sm_change_op;

/* Images kept per page; beyond it the oldest seen go. */
#define SM_IMAGES_MAX 1000

/* Fetches of URLs not listed kept per site and crawler (the newest; the
 * counter counts them all), for sitemapctl coverage --unlisted. */
#define SM_CRAWL_UNLISTED_MAX 1000

/* Verdicts kept per site (the newest; older ones are dropped), and how
 * many of the latest the status page shows. */
#define SM_VERDICTS_MAX 10000
#define SM_VERDICTS_SHOWN 20
/* The newest verdicts sm_store_left_out looks among (each a probe of
 * the urls table). */
#define SM_VERDICTS_SCAN 1000

/* One thing learned from traffic (or from a log, or an admin). */
typedef struct {
    sm_change_op op;
    const sm_site_conf *site;
    const char *url;        /* canonical path[?query] */
    apr_time_t last_modified; /* the response's Last-Modified, 0 if none */
    const char *etag;       /* the response's ETag, NULL if none; compared
                               weakly (sm_etag_opaque) */
    apr_time_t seen;        /* when it was served */
    const char *title;      /* the page's <title> as the head reader saw
                               it (SM_CHANGE_RECORD), NULL: not read, or
                               none; stored for the HTML site map */
    const char *alternates; /* the page's hreflang alternates as the head
                               reader saw them (SM_CHANGE_RECORD), in their
                               stored form (sm_alternates.h: "hreflang
                               href" lines, normalised and checked); ""
                               the head has none (stored ones are
                               cleared), NULL: not read (stored ones
                               stay); served in the page's <url> */
    const char *same_as;    /* a script's path-info URL (/index.php/x): the
                               script's own URL (/index.php).  When that is
                               stored with the same ETag (a content
                               fingerprint, sm_fingerprint), this URL is
                               the same page again: not added, removed if
                               stored.  NULL: none */
    /* Why a URL is left out (SM_CHANGE_NOTE) or forgotten (SM_CHANGE_FORGET;
     * NULL: no verdict is kept, as for sitemapctl's removals), what it
     * names (a canonical's target, a robots.txt line; NULL: nothing) and
     * the response's status. */
    const char *why;
    const char *detail;
    int status;
    /* Who was served (SM_CHANGE_RECORD): sm_client_tag of the client's
     * address, never the address; 0: not known.  IndexNow's corroboration
     * (sm_store_tx.h) compares it with the tag of the URL's first client. */
    unsigned client;
    /* SM_CHANGE_CRAWL: the crawler's name, and whether the URL was one of
     * the site's sitemap documents. */
    const char *crawler;
    int sitemap;
    /* SM_CHANGE_RECORD: the images the page's head declares (og:image,
     * twitter:image, image_src), absolute URLs in stored form joined by
     * "\n" ("" the head has none: the head's stored ones go), NULL: not
     * read (stored ones stay).  SM_CHANGE_IMAGE, SM_CHANGE_IMAGE_GONE:
     * image is the image's URL. */
    const char *images;
    const char *image;
    /* SM_CHANGE_RECORD: the page's <meta name="description"> as the head
     * reader saw it (sm_head_news.h), "" none, NULL not read (what is
     * stored stays, published too); and its publication time (0: none).
     * Read by the news sitemap and llms.txt; a change of either moves the
     * page's version as a title's does, never its lastmod. */
    const char *description;
    apr_time_t published;
    /* SM_CHANGE_RECORD: 1 when url is a file's own URL, served by that
     * file with no path info and not rewritten (/index.php).  URLs stored
     * under it ("url/...") with its ETag are the file again under path
     * info, recorded before url was (sm_change.same_as, the other order):
     * they leave, with the verdict "path info" naming url.  0: none */
    int file_url;
} sm_change;

/* ---- crawl coverage (SM_CHANGE_CRAWL) -------------------------------------
 * One site's figures for one crawler, as the status page and sitemapctl
 * coverage show them.  A listed URL is crawled within N days when the
 * crawler's last verified fetch of it is at most N days old; never
 * crawled when it has none; stale when its lastmod is later than that
 * fetch (sm_coverage_kind). */
typedef struct {
    const char *crawler;
    apr_int64_t listed_urls;
    apr_int64_t crawled_1d, crawled_7d, crawled_30d;
    apr_int64_t never_crawled, stale;
    apr_int64_t unlisted_hits;      /* verified fetches of URLs not listed */
    apr_int64_t sitemap_fetches;    /* verified fetches of its sitemaps */
    apr_time_t last_sitemap_fetch;  /* 0: never */
} sm_coverage;

/* Which URLs sm_store_coverage_urls gives. */
typedef enum {
    SM_COVERAGE_LISTED = 0,     /* every listed URL */
    SM_COVERAGE_NEVER,          /* listed, never fetched */
    SM_COVERAGE_STALE,          /* listed, changed since the last fetch */
    SM_COVERAGE_UNLISTED        /* fetched, not listed (the newest kept) */
} sm_coverage_which;

/* Called per URL: lastmod 0 for a URL not listed, fetched 0 when never
 * (status then 0); a non-success return stops the walk and is returned. */
typedef apr_status_t sm_coverage_fn(void *baton, const char *url,
                                    apr_time_t lastmod, apr_time_t fetched,
                                    int status);

/* The latest verdict kept of a URL that was left out or removed. */
typedef struct {
    const char *url;
    const char *verdict;        /* "left out" or "removed" */
    const char *reason;
    const char *detail;         /* NULL: none */
    int status;
    apr_time_t at;
} sm_verdict_row;

/* What sitemapctl why reads of one URL. */
typedef struct {
    int listed;                 /* in the urls table */
    apr_time_t lastmod, last_seen;
    int has_verdict;
    sm_verdict_row verdict;
} sm_why_info;

/* An ETag without its weakness mark ("W/"), for the weak comparison
 * (RFC 9110, 8.8.3.2) that the store and the recorder both use: httpd makes
 * a file's ETag weak for its first second, strong afterwards. */
const char *sm_etag_opaque(const char *etag);

/* A client address's tag for sm_change.client: 16 bits of a hash, never 0
 * (sm_store_tx.c).  So few bits that it names no one (each tag stands for
 * tens of thousands of IPv4 addresses); two clients sharing one only
 * delay a corroboration, never make one. */
unsigned sm_client_tag(const char *addr);

/* What one sm_store_apply did. */
typedef struct {
    int added, updated, touched, removed;
    int refused_full;       /* new URLs refused by max_urls */
    /* RECORDs of URLs that wait for IndexNow's corroboration after the
     * write (sm_store_tx.h; sm_store_apply_held says which). */
    int held;
} sm_apply_stats;

/* The summary of one page, as the handler needs it. */
typedef struct {
    apr_int64_t page;
    apr_int64_t url_count;
    apr_int64_t version;    /* grows on every change of the page */
    apr_time_t lastmod;     /* newest lastmod of its URLs (or of a removal) */
    apr_time_t changed;     /* when the page last changed */
    apr_int64_t xml_bytes;  /* the bytes its <url> entries may take at
                               most without alternates (SM_ENTRY_OVERHEAD
                               each plus the escaped <loc>): what the page's
                               document leaves to alternates follows */
} sm_page_info;

typedef struct {
    const char *store_id;       /* random, made with the store */
    int known;                  /* the site has a row */
    apr_array_header_t *pages;  /* sm_page_info of non-empty pages,
                                   ascending */
    apr_time_t index_changed;   /* when the index's bytes last changed */
    apr_time_t settings_changed;/* when the stored settings last changed */
    const char *settings;       /* the stored settings (sm_settings_format) */
} sm_site_info;

/* Called for each URL of a page, in page order, with its stored
 * alternates (sm_alternates.h; NULL: none); a non-success return stops
 * the walk and is returned. */
typedef apr_status_t sm_url_fn(void *baton, const char *url,
                               apr_time_t lastmod, const char *alternates);

/* Called for each URL of the news sitemap (sm_store_news_urls): its
 * stored title (NULL: none) and publication time. */
typedef apr_status_t sm_news_fn(void *baton, const char *url,
                                const char *title, apr_time_t published);

/* Called for each URL of llms.txt (sm_store_llms_urls): its stored title
 * and description (NULL: none) and lastmod. */
typedef apr_status_t sm_llms_fn(void *baton, const char *url,
                                const char *title, const char *description,
                                apr_time_t lastmod);

/* Called for each URL of a page that has a stored title. */
typedef apr_status_t sm_title_fn(void *baton, const char *url,
                                 const char *title);

/* Called for each image of a page's URLs (SitemapImages), in page order
 * and, within a URL, in the images' order. */
typedef apr_status_t sm_image_fn(void *baton, const char *url,
                                 const char *image);

/* ---- what sitemapctl reads (see the functions at the end) ------------ */

/* What the store keeps about one site. */
typedef struct {
    int known;                  /* 0: no row; the rest is zero */
    apr_int64_t url_count;
    apr_int64_t last_page;
    int page_size;              /* the page size new URLs follow */
    const char *settings;       /* sm_settings_format text; "" when no
                                   module has stored it yet */
} sm_site_row;

/* One site's numbers, for sitemapctl stats. */
typedef struct {
    const char *base;
    apr_int64_t url_count;
    apr_int64_t pages;          /* non-empty pages */
    apr_int64_t last_page;
    int page_size;
    apr_time_t lastmod_newest, lastmod_oldest;  /* 0 when it has no URL */
    apr_time_t seen_newest, seen_oldest;        /* last_seen, likewise */
    apr_int64_t urls_with_alternates;   /* URLs with hreflang alternates */
    apr_int64_t alternates;             /* their alternates in all */
} sm_site_stats;

/* The file as a whole. */
typedef struct {
    int schema_version;         /* PRAGMA user_version */
    const char *store_id;
    apr_time_t created;
    apr_int64_t db_bytes;       /* page_count * page_size (without WAL) */
    apr_int64_t free_bytes;     /* of which on the freelist */
} sm_store_about;

/* Called for each URL by sm_store_url_rows (alternates as for
 * sm_url_fn); a non-success return stops the walk and is returned. */
typedef apr_status_t sm_url_row_fn(void *baton, const char *url,
                                   apr_int64_t page, apr_time_t lastmod,
                                   apr_time_t last_seen,
                                   const char *alternates);

/* What the status page shows of a site's recent history. */
typedef struct {
    const char *url;
    apr_time_t lastmod;
} sm_recent_url;
typedef struct {
    apr_int64_t day;            /* days since the epoch (UTC) */
    apr_int64_t added;          /* URLs first seen that day still stored */
    apr_int64_t removed;        /* URLs removed that day (forgotten,
                                   expired, removed by sitemapctl) */
} sm_day_count;

/* ---- the site's robots.txt (SM_CHANGE_ROBOTS) ------------------------
 * The body a process last handed over, kept per site so that every
 * process (and every server of a farm) follows the rules of a robots.txt
 * an application makes, whichever process served it.  A change of the
 * body starts a sweep: the writers walk the site's URLs in URL order, in
 * chunks, removing those the new rules disallow; sweep is the last URL
 * walked ("" from the start), NULL when no sweep is due. */
#define SM_ROBOTS_BODY_MAX (500 * 1024)
typedef struct {
    const char *base;
    const char *body;           /* sm_store_robots_body only, else NULL */
    apr_int64_t hash;           /* of the body (sm_hash_str, SM_HASH_SEED) */
    apr_time_t seen;            /* when it was last handed over changed */
    const char *sweep;
} sm_robots_row;

typedef struct sm_store sm_store;

/* A caller's test of a site's base (1: yes), for sm_store_prune_sites. */
typedef int sm_base_test_fn(void *baton, const char *base);

typedef struct {
    const char *name;
    apr_status_t (*apply)(sm_store *st, const sm_change *changes, int n,
                          sm_apply_stats *stats);
    apr_status_t (*expire)(sm_store *st, const sm_site_conf *site,
                           apr_time_t now, apr_interval_time_t every,
                           int *removed);
    /* Is the file we have open still the one at the configured path? */
    int (*is_current)(sm_store *st);
    void (*close)(sm_store *st);
    apr_status_t (*read_begin)(sm_store *st);
    void (*read_end)(sm_store *st);
    apr_status_t (*site_info)(sm_store *st, apr_pool_t *p, const char *base,
                              apr_int64_t page, sm_site_info *out);
    apr_status_t (*page_urls)(sm_store *st, const char *base,
                              apr_int64_t page, sm_url_fn *fn, void *baton);
    /* The titles of a page's URLs (those that have one), in page order. */
    apr_status_t (*page_titles)(sm_store *st, const char *base,
                                apr_int64_t page, sm_title_fn *fn,
                                void *baton);
    /* Added for sitemapctl; see the functions below. */
    apr_status_t (*site_row)(sm_store *st, apr_pool_t *p, const char *base,
                             sm_site_row *out);
    apr_status_t (*site_stats)(sm_store *st, apr_pool_t *p, const char *base,
                               apr_array_header_t **out);
    apr_status_t (*url_rows)(sm_store *st, const char *base,
                             apr_int64_t page, sm_url_row_fn *fn,
                             void *baton);
    apr_status_t (*about)(sm_store *st, apr_pool_t *p, sm_store_about *out);
    apr_status_t (*sync_sites)(sm_store *st, const sm_site_conf *const *sites,
                               int n);
    /* Added for the status handler; see sm_store_recent. */
    apr_status_t (*recent)(sm_store *st, apr_pool_t *p, const char *base,
                           int n, apr_time_t since,
                           apr_array_header_t **urls,
                           apr_array_header_t **days);
    /* IndexNow; see the functions below. */
    apr_status_t (*indexnow_claim)(sm_store *st, apr_pool_t *p,
                                   const char *base, apr_time_t now,
                                   apr_interval_time_t lease,
                                   sm_indexnow_batch *out);
    apr_status_t (*indexnow_finish)(sm_store *st, const char *base,
                                    const sm_indexnow_batch *batch,
                                    const sm_indexnow_result *result);
    apr_status_t (*indexnow_queue)(sm_store *st, const char *base,
                                   const char *const *urls, int n,
                                   int *queued);
    apr_status_t (*indexnow_stats)(sm_store *st, apr_pool_t *p,
                                   const char *base,
                                   apr_array_header_t **out);
    /* Added for the status page; see sm_store_site_list. */
    apr_status_t (*site_list)(sm_store *st, apr_pool_t *p,
                              apr_array_header_t **out);
    /* Added for sitemapctl why; see sm_store_why. */
    apr_status_t (*why)(sm_store *st, apr_pool_t *p, const char *base,
                        const char *url, sm_why_info *out);
    apr_status_t (*left_out)(sm_store *st, apr_pool_t *p, const char *base,
                             int n, apr_array_header_t **out);
    /* Added for SitemapSiteFromHost; see sm_store_prune_sites. */
    apr_status_t (*prune_sites)(sm_store *st, sm_base_test_fn *test,
                                void *baton, int *pruned);
    /* Added for crawl coverage; see sm_store_coverage. */
    apr_status_t (*coverage)(sm_store *st, const char *base,
                             const char *crawler, apr_time_t now,
                             sm_coverage *out);
    apr_status_t (*coverage_urls)(sm_store *st, const char *base,
                                  const char *crawler,
                                  sm_coverage_which which,
                                  sm_coverage_fn *fn, void *baton);
    /* Added for SitemapImages; see sm_store_page_images. */
    apr_status_t (*page_images)(sm_store *st, const char *base,
                                apr_int64_t page, sm_image_fn *fn,
                                void *baton);
    /* Added for crawl coverage per day; see sm_store_crawl_days_note. */
    apr_status_t (*crawl_days_note)(sm_store *st, const char *base,
                                    apr_int64_t day, apr_int64_t now_s,
                                    int *taken);
    apr_status_t (*crawl_days)(sm_store *st, apr_pool_t *p,
                               const char *base, const char *crawler,
                               apr_int64_t since, apr_array_header_t **out);
    /* Added for SitemapIndexNowStale; see sm_store_indexnow_stale. */
    apr_status_t (*indexnow_stale)(sm_store *st, const char *base,
                                   apr_time_t now, int *queued);
    /* Added for the news sitemap and llms.txt; see sm_store_news_urls. */
    apr_status_t (*news_urls)(sm_store *st, const char *base,
                              apr_time_t since, int max, sm_news_fn *fn,
                              void *baton);
    apr_status_t (*llms_urls)(sm_store *st, const char *base, int max,
                              sm_llms_fn *fn, void *baton);
    /* Added for the site's robots.txt rules; see sm_store_robots_list. */
    apr_status_t (*robots_list)(sm_store *st, apr_pool_t *p,
                                apr_array_header_t **out);
    apr_status_t (*robots_body)(sm_store *st, apr_pool_t *p,
                                const char *base, sm_robots_row *out);
    apr_status_t (*robots_urls)(sm_store *st, apr_pool_t *p,
                                const char *base, const char *after, int n,
                                apr_array_header_t **out);
    apr_status_t (*robots_swept)(sm_store *st, const char *base,
                                 apr_int64_t hash, const char *upto);
} sm_store_ops;

struct sm_store {
    const sm_store_ops *ops;
    const char *path;
    apr_pool_t *pool;       /* the pool the store was opened in */
    const sm_logger *log;
    char errmsg[512];       /* the last failure, for logs */
    /* Close without the work a last close does (SQLite: no checkpoint,
     * the -wal and -shm kept): sm_store_close_idle. */
    int close_lightly;
    /* Set by the writer and the IndexNow sender (their stop flag): once
     * *stopping is non-zero, a wait on a PostgreSQL server ends within the
     * busy timeout, answer or not, so that a stop never waits for a hung
     * database.  NULL: none. */
    const volatile int *stopping;
    /* During sm_store_apply_held: its held_v (NULL: not wanted). */
    unsigned char *held_v;
    /* During sm_store_apply_marks: its removed_v (NULL: not wanted). */
    unsigned char *removed_v;
};

/* Once per process, before any store is opened (later calls change
 * nothing): each backend's process-wide set-up (SQLite: its memory
 * statistics off, which take a global mutex on every allocation, about 6%
 * of the instructions of inserting a URL). */
void sm_store_init(void);

/* How a store is opened (sm_store_open's flags). */
#define SM_STORE_CREATE    0x01   /* create the file if missing */
#define SM_STORE_READONLY  0x02
/* A connection that writes many URLs at a time (sitemapctl import): a
 * page cache of 64 MiB instead of SQLite's 2 MiB, so that big
 * transactions do not re-read the indexes they update. */
#define SM_STORE_BULK      0x04
/* With SM_STORE_READONLY: only make sure that the file is a mod_sitemap
 * store; one of an older schema is accepted (opening it read-write
 * upgrades it). */
#define SM_STORE_PROBE     0x08
/* How the module's sitemap requests open the store: read-only (SQLite's
 * SQLITE_OPEN_READONLY), never creating the file and never upgrading its
 * schema: an older store is refused (the request answers 503) until the
 * writer, the only one that upgrades, has done it. */
#define SM_STORE_READER    SM_STORE_READONLY

/* Which backend a location names is the store's business (the table in
 * sm_store.c); the rest of the code asks only these: */
/* Is the store at where a local file, which the module creates, hands to
 * the server's User and guards (an SQLite path), rather than a database
 * server's (a postgresql:// URI names no place on this machine)? */
int sm_store_is_file(const char *where);
/* Make the missing stores among where[0..n-1] that are files, as new
 * and empty stores of the current schema, with one sync per file system
 * for all of them (the module at first start): made[i] says which were
 * made; the others (not files, there already, or failed) are left to
 * sm_store_open with SM_STORE_CREATE, which says what is wrong.  Returns
 * how many were made. */
int sm_store_make_new(apr_pool_t *p, const char *const *where, int n,
                      char *made);
/* NULL when where is a location this build can open, otherwise why not
 * (from p): a URI its backend's own parser rejects, or a backend this
 * build was configured without. */
const char *sm_store_location_problem(apr_pool_t *p, const char *where);
/* The backends this build has, for --version: "sqlite postgresql". */
const char *sm_store_backends(void);

/* Open the store at where: a postgresql:// or postgres:// URI names a
 * PostgreSQL database, anything else the SQLite file at that path (flags
 * above).  On failure *out is NULL and errmsg (at least 256 bytes, may be
 * NULL) says why. */
apr_status_t sm_store_open(sm_store **out, apr_pool_t *p, const char *where,
                           int flags, int busy_timeout_ms,
                           const sm_logger *log, char *errmsg,
                           apr_size_t errlen);
/* The same for a thread that stops (the writer, the IndexNow sender): the
 * store's stopping is set before its first wait, so that a stop asked
 * while it opens (connecting to a hung PostgreSQL, its first statements)
 * ends that wait within the busy timeout too. */
apr_status_t sm_store_open_stoppable(sm_store **out, apr_pool_t *p,
                                     const char *where, int flags,
                                     int busy_timeout_ms,
                                     const sm_logger *log,
                                     const volatile int *stopping,
                                     char *errmsg, apr_size_t errlen);
/* Check the store at where without changing it (sitemapctl check): its
 * integrity, that it is a mod_sitemap store of a schema this code reads,
 * and that its page summaries and counts agree with its URLs.  APR_ENOENT
 * when there is none (nothing is created); another error when it cannot
 * be opened or read (errmsg says why); otherwise APR_SUCCESS with one
 * sentence per problem pushed onto problems (none: sound) and, when about
 * is not NULL, what could be read of it. */
apr_status_t sm_store_check(apr_pool_t *p, const char *where,
                            int busy_timeout_ms, apr_array_header_t *problems,
                            sm_store_about *about, char *errmsg,
                            apr_size_t errlen);
/* where as it may be shown in logs and messages: a URI's password (in its
 * user info or a password= parameter) replaced by "***"; anything else
 * unchanged. */
const char *sm_uri_mask(apr_pool_t *p, const char *where);

/* Apply a batch in one transaction: all or nothing. */
apr_status_t sm_store_apply(sm_store *st, const sm_change *changes, int n,
                            sm_apply_stats *stats);
/* The same, and held_v[i] (n bytes) is 1 when changes[i] left its URL
 * held for IndexNow's corroboration (sm_store_tx.h), 0 otherwise (all 0
 * when the write failed): the recorder forgets those URLs, so that the
 * next client's request reaches the store. */
apr_status_t sm_store_apply_held(sm_store *st, const sm_change *changes,
                                 int n, sm_apply_stats *stats,
                                 unsigned char *held_v);
/* The same, and removed_v[i] (n bytes; NULL: not wanted) is 1 when
 * changes[i] removed a stored row (a FORGET of a stored URL), 0 otherwise
 * (all 0 when the write failed): the recorder tells every process, whose
 * memories may still vouch for the URL (sm_recorder_forget.c). */
apr_status_t sm_store_apply_marks(sm_store *st, const sm_change *changes,
                                  int n, sm_apply_stats *stats,
                                  unsigned char *held_v,
                                  unsigned char *removed_v);
/* Remove the site's URLs not served since now - site->expire.  every > 0:
 * only when no process of any generation did it for that long (the store
 * records when it last ran); 0: now.  Walks the site in short
 * transactions. */
apr_status_t sm_store_expire(sm_store *st, const sm_site_conf *site,
                             apr_time_t now, apr_interval_time_t every,
                             int *removed);
int sm_store_is_current(sm_store *st);
/* Remove the rows of the sites that never held a URL (no page) whose base
 * passes test (the sites made from Host names), with their verdicts: a
 * row a writer fills meanwhile stays.  A site whose URLs all left keeps
 * its row and pages (its sitemap's ETags and renditions follow the
 * pages' versions, which must not start over).  *pruned: how many.  In
 * short transactions, 500 rows looked at each. */
apr_status_t sm_store_prune_sites(sm_store *st, sm_base_test_fn *test,
                                  void *baton, int *pruned);

/* Give every site a row with its current settings (one transaction). */
apr_status_t sm_store_sync_sites(sm_store *st,
                                 const sm_site_conf *const *sites, int n);

/* IndexNow.  Claim the site's oldest pending URLs (at most
 * SM_INDEXNOW_BATCH_MAX) for lease, unless another sender holds the site,
 * its next_try is later than now, or nothing is pending: then out->items
 * is empty.  Finish the claim with what became of the batch (the claim is
 * released; sent or dropped rows are removed unless they changed again
 * meanwhile). */
apr_status_t sm_store_indexnow_claim(sm_store *st, apr_pool_t *p,
                                     const char *base, apr_time_t now,
                                     apr_interval_time_t lease,
                                     sm_indexnow_batch *out);
apr_status_t sm_store_indexnow_finish(sm_store *st, const char *base,
                                      const sm_indexnow_batch *batch,
                                      const sm_indexnow_result *result);
/* Put URLs (path[?query]) of a site on its pending list by hand (sitemapctl
 * indexnow), within the backlog bound: *queued says how many went on. */
apr_status_t sm_store_indexnow_queue(sm_store *st, const char *base,
                                     const char *const *urls, int n,
                                     int *queued);
/* sm_indexnow_stats of one site (base) or of every site (NULL); a store
 * without IndexNow's tables gives an empty array. */
apr_status_t sm_store_indexnow_stats(sm_store *st, apr_pool_t *p,
                                     const char *base,
                                     apr_array_header_t **out);

/* Reading: everything between read_begin and read_end sees one snapshot
 * of the store, whatever writers do meanwhile. */
apr_status_t sm_store_read_begin(sm_store *st);
void sm_store_read_end(sm_store *st);
/* The site's pages: page 0 gives every non-empty page, page N only page N
 * (when it is not empty).  A site never recorded is known = 0. */
apr_status_t sm_store_site_info(sm_store *st, apr_pool_t *p,
                                const char *base, apr_int64_t page,
                                sm_site_info *out);
/* Stream the URLs of one page. */
apr_status_t sm_store_page_urls(sm_store *st, const char *base,
                                apr_int64_t page, sm_url_fn *fn,
                                void *baton);

/* The stored titles of the page's URLs, within the read snapshot
 * (sm_store_read_begin); APR_ENOTIMPL from a backend without them. */
apr_status_t sm_store_page_titles(sm_store *st, const char *base,
                                  apr_int64_t page, sm_title_fn *fn,
                                  void *baton);
void sm_store_close(sm_store *st);

/* The stored images of the page's URLs, within the read snapshot; a
 * store whose schema predates images gives none. */
apr_status_t sm_store_page_images(sm_store *st, const char *base,
                                  apr_int64_t page, sm_image_fn *fn,
                                  void *baton);

/* The process is stopping (the writer's or the IndexNow sender's stop
 * calls it first): every store's wait on a database ends within its busy
 * timeout from now, whichever thread waits, so that the stops that run
 * one after the other at a child's exit do not add up their waits.
 * Never undone: for a process on its way out. */
void sm_store_stop_all(void);
/* Is a stop asked for, of the process or of st's writer? */
int sm_store_stop_asked(const sm_store *st);
/* Close a store that will be opened again soon (the module's writer
 * closes a store file idle for a minute): SQLite keeps its -wal and -shm
 * files as they are, with no checkpoint, fsync or unlink (and no file
 * creation at the next open); what they hold is as durable as any
 * committed write, and the next writer checkpoints it. */
void sm_store_close_idle(sm_store *st);
const char *sm_store_error(const sm_store *st);

/* ---- administration (sitemapctl) ------------------------------------------
 * Writers that pass sm_site_conf.settings (the module) keep it in the
 * site's row: when the row is created, and when the text differs from the
 * stored one (compared once per connection and site), the row's settings
 * and page_size are updated in the same transaction.  sitemapctl passes
 * settings = NULL and so never overwrites what the module stored. */

/* The site's row (out->known = 0 when there is none). */
apr_status_t sm_store_site_row(sm_store *st, apr_pool_t *p, const char *base,
                               sm_site_row *out);
/* sm_site_stats of one site (base), or of every site (base NULL), in an
 * array allocated from p; an unknown base gives an empty array.  Scans the
 * site's URLs: for administration, not for requests. */
apr_status_t sm_store_site_stats(sm_store *st, apr_pool_t *p,
                                 const char *base, apr_array_header_t **out);
/* Every site of the store as sm_site_stats with only base, url_count,
 * last_page, page_size and pages set, ordered by base: what the sites'
 * rows and page summaries say, without reading their URLs (the status
 * page's list of a SitemapSiteFromHost vhost's sites).  Inside a read
 * transaction or not. */
apr_status_t sm_store_site_list(sm_store *st, apr_pool_t *p,
                                apr_array_header_t **out);
/* The URLs of one page (page > 0) or of every page (page 0), in page
 * order and within a page in sitemap order. */
apr_status_t sm_store_url_rows(sm_store *st, const char *base,
                               apr_int64_t page, sm_url_row_fn *fn,
                               void *baton);
apr_status_t sm_store_about_file(sm_store *st, apr_pool_t *p,
                                 sm_store_about *out);

/* For the status handler: the site's n URLs of newest lastmod (newest
 * first; sm_recent_url) and, per day from since on, how many of its stored
 * URLs were first seen that day and how many URLs were removed that day
 * (sm_day_count, one per day in no set order, days without any left out;
 * the writers keep the removals per day, SM_REMOVED_DAYS of them).  Scans
 * the site's URLs: for administration. */
apr_status_t sm_store_recent(sm_store *st, apr_pool_t *p, const char *base,
                             int n, apr_time_t since,
                             apr_array_header_t **urls,
                             apr_array_header_t **days);
/* sitemapctl why: is the URL (path[?query], as stored) of the site
 * listed, and its latest verdict kept (left out or removed: SM_CHANGE_NOTE
 * and forgets with a why write them, SM_VERDICTS_MAX a site).  A store
 * whose schema predates verdicts answers has_verdict = 0. */
apr_status_t sm_store_why(sm_store *st, apr_pool_t *p, const char *base,
                          const char *url, sm_why_info *out);
/* The status page: the site's n latest verdicts (sm_verdict_row, newest
 * first) of URLs not listed now, among its newest SM_VERDICTS_SCAN: an
 * index range and at most that many lookups, whatever the traffic. */
apr_status_t sm_store_left_out(sm_store *st, apr_pool_t *p, const char *base,
                               int n, apr_array_header_t **out);

/* Crawl coverage: one site's figures for one crawler (the name as the
 * writer got it; out->crawler is set to it), the windows counted back from
 * now.  A site or crawler never seen gives zeros with listed_urls (and
 * never_crawled) the site's URLs.  Scans the site's URLs: for the status
 * page (which should not ask on every request of a big site) and
 * sitemapctl.  A store whose schema predates coverage gives APR_ENOTIMPL. */
apr_status_t sm_store_coverage(sm_store *st, const char *base,
                               const char *crawler, apr_time_t now,
                               sm_coverage *out);
/* sitemapctl coverage: the URLs which says, listed ones in sitemap order,
 * unlisted ones newest first. */
apr_status_t sm_store_coverage_urls(sm_store *st, const char *base,
                                    const char *crawler,
                                    sm_coverage_which which,
                                    sm_coverage_fn *fn, void *baton);
/* What a listed URL is for a crawler (the backends share it): 1 never
 * fetched, 2 stale (lastmod later than the fetch), 0 neither; times in
 * seconds, fetched 0: never. */
int sm_coverage_kind(apr_int64_t lastmod, apr_int64_t fetched);
/* Count a listed URL into out (its fetch and lastmod in seconds; now in
 * seconds). */
void sm_coverage_count(sm_coverage *out, apr_int64_t lastmod,
                       apr_int64_t fetched, apr_int64_t now);

/* ---- crawl coverage per UTC day ---------------------------------------
 * Days kept per site and crawler: the status page's chart shows as many,
 * today's from the live figures. */
#define SM_CRAWL_DAYS 30
typedef struct {
    apr_int64_t day;        /* days since the epoch, UTC */
    apr_int64_t listed;     /* the site's listed URLs */
    apr_int64_t crawled;    /* of those, fetched within 30 days */
} sm_crawl_day;

/* The writer's upkeep, at most once a day a process: the day that ended
 * (the one before now's) taken for base, with every crawler the store
 * knows for it, unless a writer took it already (*taken 1 when this call
 * did); days before the SM_CRAWL_DAYS up to now's are dropped (every
 * site's).  A store whose schema predates the days gives APR_ENOTIMPL, a
 * base not stored APR_SUCCESS with *taken 0. */
apr_status_t sm_store_crawl_days_note(sm_store *st, const char *base,
                                      apr_time_t now, int *taken);
/* The days of base and crawler from since (days since the epoch) on,
 * oldest first (sm_crawl_day), into *out (made in p). */
apr_status_t sm_store_crawl_days(sm_store *st, apr_pool_t *p,
                                 const char *base, const char *crawler,
                                 apr_int64_t since, apr_array_header_t **out);

/* SitemapIndexNowStale: base's listed URLs that some crawler fetched
 * before their lastmod, a lastmod more than a day before now, go on the
 * site's IndexNow pending list (within SM_INDEXNOW_BACKLOG_MAX), once a
 * lastmod: marked as queued for that lastmod (*queued: how many went on).
 * APR_ENOTIMPL: a schema before the mark. */
apr_status_t sm_store_indexnow_stale(sm_store *st, const char *base,
                                     apr_time_t now, int *queued);

/* For the backends' recent: n removed on day, into days (sm_day_count;
 * the day's entry, or a new one at the end: the order is not kept). */
void sm_day_removed(apr_array_header_t *days, apr_int64_t day,
                    apr_int64_t n);


/* The news sitemap's URLs (within the read snapshot): those of the site
 * whose publication time is at or after since, newest first (then in id
 * order), at most max. */
apr_status_t sm_store_news_urls(sm_store *st, const char *base,
                                apr_time_t since, int max, sm_news_fn *fn,
                                void *baton);
/* llms.txt's URLs (within the read snapshot): at most max of the site's,
 * the shallowest paths first (fewest '/'), the home page first of them,
 * then the most recently changed (lastmod), then in id order. */
apr_status_t sm_store_llms_urls(sm_store *st, const char *base, int max,
                                sm_llms_fn *fn, void *baton);
/* The site's robots.txt rules: every site's row (sm_robots_row without
 * body), in an array from p; a store whose schema predates them gives an
 * empty one. */
apr_status_t sm_store_robots_list(sm_store *st, apr_pool_t *p,
                                  apr_array_header_t **out);
/* One site's row with its body; out->hash 0 and body NULL: none. */
apr_status_t sm_store_robots_body(sm_store *st, apr_pool_t *p,
                                  const char *base, sm_robots_row *out);
/* The sweep: the site's next n stored URLs after after (URL order), as
 * const char * in an array from p. */
apr_status_t sm_store_robots_urls(sm_store *st, apr_pool_t *p,
                                  const char *base, const char *after,
                                  int n, apr_array_header_t **out);
/* The sweep of the rules of hash went up to upto (NULL: done); nothing
 * when the stored rules are others by now (their own sweep goes on). */
apr_status_t sm_store_robots_swept(sm_store *st, const char *base,
                                   apr_int64_t hash, const char *upto);
/* The hash a body is kept under (the backends share it). */
apr_int64_t sm_robots_hash(const char *body);

/* The XML length of a URL's <loc> text once entity-escaped (&, ', ", <, >),
 * used to keep pages under SM_PAGE_MAX_BYTES. */
apr_size_t sm_xml_escaped_len(const char *s);

#endif
