/* SPDX-License-Identifier: Apache-2.0 */
/* sm_ctl.h: what sitemapctl needs besides the core, kept out of the
 * command's main file so that it can be unit-tested: reading its argument
 * values, and exporting a site's sitemap files exactly as the module
 * serves them. */
#ifndef SM_CTL_H
#define SM_CTL_H

#include <apr_pools.h>
#include <apr_tables.h>
#include <apr_time.h>

#include "serve/sm_sitemap.h"
#include "store/sm_store.h"

/* ---- argument values --------------------------------------------------- */

/* A duration: a whole number with a unit d, h, mi, s or ms (a bare number
 * is seconds), as the module's SitemapExpire reads it; must be more than
 * 0 and at most 100 years.  NULL, or what is wrong. */
const char *sm_ctl_parse_duration(const char *s, apr_interval_time_t *out);

/* A point in time: "YYYY-MM-DD", "YYYY-MM-DDThh:mm[:ss]" followed by "Z"
 * or "+hh:mm"/"-hh:mm" (no zone: UTC), or "@SECONDS" since the epoch.
 * NULL, or what is wrong. */
const char *sm_ctl_parse_time(const char *s, apr_time_t *out);

/* The stored form of a URL an administrator names: a path ("/a?b=1") or a
 * full URL on base ("https://www.example.com/a").  Normalised by the core
 * (sm_url_from_target).  Query parameters named in allow are allowed;
 * allow NULL allows every name the URL holds (the administrator asked for
 * this URL).  NULL and *url set, or what is wrong. */
const char *sm_ctl_url(apr_pool_t *p, const char *base, const char *in,
                       const apr_array_header_t *allow, const char **url);

/* ---- export -------------------------------------------------------------- */

typedef enum {
    SM_EXPORT_OK = 0,
    SM_EXPORT_UNKNOWN_SITE,     /* the store has no row for base */
    SM_EXPORT_STORE,            /* the store failed (err says why) */
    SM_EXPORT_WRITE,            /* a file could not be written */
    SM_EXPORT_NO_PAGE           /* sm_ctl_document: no such page */
} sm_export_status;

typedef struct {
    const char *index_kind;     /* "urlset" (one page), "index" (a
                                   sitemapindex) or "empty" (no URL yet:
                                   nothing written) */
    int files;                  /* files written */
    apr_int64_t urls;           /* <url> entries in the page files */
    apr_int64_t pages;          /* page files */
    apr_array_header_t *paths;  /* const char *: the files written */
    apr_array_header_t *removed;/* const char *: stale page files removed */
    int index_entries_left_out; /* non-empty pages past what the index may
                                   list (served, but not in the index) */
    apr_int64_t rows_skipped;   /* store rows not in the stored form */
    const char *first_skipped;  /* the first of them, printable */
    apr_int64_t alternates_skipped;  /* stored hreflang alternates not in
                                        the stored form */
    apr_int64_t urls_dropped;   /* URLs written without their alternates
                                   (the 50 MiB bound) */
    apr_int64_t alternates_dropped;  /* and their alternates */
} sm_export_result;

/* Write the documents the module serves for base, from one read snapshot
 * of st: the SitemapPath document (set->path: the <urlset> of the only
 * page, the <sitemapindex> of the pages, or the <urlset> holding the
 * site's root when it has no URL) and every non-empty page (set->path with
 * "-N"), at their URL paths under dir (so dir can be a document root);
 * directories are created.  Each file is written under a temporary name
 * and renamed, so a web server never serves half a file; the documents
 * are chosen and written by the module's own code (sm_document.h).
 * Safe as root in a directory others can write: no link is followed
 * below dir, temporary files are created exclusively under random names,
 * relative to the opened directory.  Page files of
 * an earlier export that the module would now answer 404 for (pages that
 * are empty or gone) are removed; no other file is touched.  err (may be
 * NULL) says what failed. */
sm_export_status sm_ctl_export(apr_pool_t *p, sm_store *st, const char *base,
                               const sm_settings *set, const char *dir,
                               sm_export_result *res, char *err,
                               apr_size_t errlen);

/* sitemapctl export --images: the documents' <url>s carry their stored
 * images (as SitemapImages On); off unless set. */
void sm_ctl_export_images(int on);

/* Another document at urlpath under dir (directories created, replaced by
 * rename, no link followed, through the parent when split), its bytes
 * from write: its failure is the sink's (SM_EXPORT_WRITE) or the
 * store's (SM_EXPORT_STORE, err from st). */
typedef apr_status_t sm_export_writer(void *baton,
                                      apr_status_t (*sink)(void *,
                                                           const char *,
                                                           apr_size_t),
                                      void *sink_baton);
sm_export_status sm_ctl_export_named(apr_pool_t *p, sm_store *st,
                                     const char *dir, const char *urlpath,
                                     sm_export_writer *write, void *baton,
                                     sm_export_result *res, char *err,
                                     apr_size_t errlen);

/* The news sitemap and llms.txt as the module serves them (sm_news.h),
 * for sitemapctl export --news-path, --llms-path: NULL paths are not
 * written; nothing is when the site has no URL (the module's 404). */
typedef struct {
    const char *news_path, *news_name, *news_lang;
    const char *llms_path, *llms_title, *llms_summary;
    int llms_max;                       /* 0: SM_LLMS_MAX_DEFAULT */
} sm_export_news;
sm_export_status sm_ctl_export_news(apr_pool_t *p, sm_store *st,
                                    const char *base,
                                    const sm_export_news *opt,
                                    const char *dir, sm_export_result *res,
                                    char *err, apr_size_t errlen);

/* export split in two processes (sm_ctl_export_remote.h): in the child,
 * sm_ctl_export_remote(sock) makes sm_ctl_export hand its files to the
 * parent over sock; the parent runs sm_ctl_export_serve(sock, dir) until
 * the child closes it: SM_EXPORT_OK, or SM_EXPORT_WRITE (err says why)
 * when the child's requests could not be answered. */
void sm_ctl_export_remote(int sock);
sm_export_status sm_ctl_export_serve(apr_pool_t *p, int sock, const char *dir,
                                     char *err, apr_size_t errlen);

/* One of those documents to a sink instead of a file (used by the unit
 * tests): which is SM_NAME_INDEX (0, the SitemapPath) or a page number. */
sm_export_status sm_ctl_document(apr_pool_t *p, sm_store *st,
                                 const char *base, const sm_settings *set,
                                 apr_int64_t which,
                                 apr_status_t (*sink)(void *, const char *,
                                                      apr_size_t),
                                 void *baton, char *err, apr_size_t errlen);

#endif
