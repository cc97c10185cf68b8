/* SPDX-License-Identifier: Apache-2.0 */
/* sm_store_sqlite_images.c: a listed page's images (SitemapImages), kept
 * by the writer in its batches and read with the page's URLs.  A change
 * of a page's images moves its page's version (sm_tx_count with no
 * lastmod), never its lastmod, and puts nothing on IndexNow's list: an
 * image is not a page. */
#include "store/sm_store_sqlite.h"

#include <stdlib.h>
#include <string.h>

#include <apr_strings.h>

#define SOURCE_HEAD    1
#define SOURCE_REFERER 2

/* The listed page's id and page number; id 0 when it is not listed. */
static int page_of(sqlite_store *s, sqlite3_int64 site_id, const char *url,
                   sqlite3_int64 *id, sqlite3_int64 *page)
{
    sm_sqlite_url_ref ref;
    int rc = sm_sqlite_url_find(s, site_id, url, NULL, &ref);

    *id = ref.id;
    *page = ref.page;
    return rc;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The head's images as stored (sorted, "\n"-joined, from p). */
static int head_stored(sqlite_store *s, apr_pool_t *p, sqlite3_int64 id,
                       const char **out)
{
    sqlite3_stmt *q;
    const char *joined = "";
    int rc, n = 0;

    if (!(q = sm_sqlite_stmt(s, STMT_IMG_HEAD_GET)))
        return SQLITE_ERROR;
    sqlite3_bind_int64(q, 1, id);
    while ((rc = sqlite3_step(q)) == SQLITE_ROW)
        joined = apr_pstrcat(p, joined, n++ ? "\n" : "",
                             (const char *)sqlite3_column_text(q, 0), NULL);
    *out = joined;
    return sm_sqlite_finish(s, q, rc, "cannot read a page's images");
}

static int put(sqlite_store *s, sqlite3_int64 id, sqlite3_int64 site_id,
               const char *image, int source, sqlite3_int64 seen,
               int *added)
{
    sqlite3_stmt *q;
    int rc;

    if (!(q = sm_sqlite_stmt(s, STMT_IMG_PUT)))
        return SQLITE_ERROR;
    sqlite3_bind_int64(q, 1, id);
    sm_sqlite_text(q, 2, image);
    sqlite3_bind_int64(q, 3, site_id);
    sqlite3_bind_int(q, 4, source);
    sqlite3_bind_int64(q, 5, seen);
    if ((rc = sm_sqlite_run(s, q, "cannot keep an image")) != SQLITE_OK)
        return rc;
    *added = sqlite3_changes(s->db) > 0;
    return SQLITE_OK;
}

static int run_id(sqlite_store *s, int which, sqlite3_int64 id,
                  sqlite3_int64 n, const char *what)
{
    sqlite3_stmt *q = sm_sqlite_stmt(s, which);

    if (!q)
        return SQLITE_ERROR;
    sqlite3_bind_int64(q, 1, id);
    if (which == STMT_IMG_TRIM)
        sqlite3_bind_int64(q, 2, n);
    return sm_sqlite_run(s, q, what);
}

/* A RECORD's head images replace the head's stored ones when they
 * differ (compared sorted). */
static int head_images(sqlite_store *s, sm_tx_site *ts, const sm_change *c)
{
    apr_pool_t *p;
    sqlite3_int64 id, page;
    const char *stored, *joined = "";
    char *copy, *last, *tok;
    apr_array_header_t *list;
    int rc, i, added;

    if ((rc = page_of(s, ts->row.id, c->url, &id, &page)) != SQLITE_OK
        || !id)
        return rc;
    if (apr_pool_create(&p, NULL) != APR_SUCCESS)
        return SQLITE_NOMEM;
    list = apr_array_make(p, 8, sizeof(char *));
    copy = apr_pstrdup(p, c->images);
    for (tok = apr_strtok(copy, "\n", &last); tok;
         tok = apr_strtok(NULL, "\n", &last))
        APR_ARRAY_PUSH(list, char *) = tok;
    qsort(list->elts, (size_t)list->nelts, sizeof(char *), cmp_str);
    for (i = 0; i < list->nelts; i++)
        joined = apr_pstrcat(p, joined, i ? "\n" : "",
                             APR_ARRAY_IDX(list, i, char *), NULL);
    if ((rc = head_stored(s, p, id, &stored)) != SQLITE_OK
        || strcmp(stored, joined) == 0)
        goto done;
    if ((rc = run_id(s, STMT_IMG_HEAD_DEL, id, 0,
                     "cannot remove a page's images")) != SQLITE_OK)
        goto done;
    for (i = 0; i < list->nelts && rc == SQLITE_OK; i++)
        rc = put(s, id, ts->row.id, APR_ARRAY_IDX(list, i, char *),
                 SOURCE_HEAD, apr_time_sec(c->seen), &added);
    if (rc == SQLITE_OK)
        rc = run_id(s, STMT_IMG_TRIM, id, SM_IMAGES_MAX,
                    "cannot drop a page's oldest images");
    sm_tx_count(&s->tx, ts, page, 0, 0, 0);
done:
    apr_pool_destroy(p);
    return rc;
}

/* An image fetched with a listed page as Referer. */
static int referer_image(sqlite_store *s, sm_tx_site *ts, const sm_change *c)
{
    sqlite3_int64 id, page, seen = apr_time_sec(c->seen);
    sqlite3_stmt *q;
    int rc, added;

    if ((rc = page_of(s, ts->row.id, c->url, &id, &page)) != SQLITE_OK
        || !id)
        return rc;                      /* not listed: nothing */
    if ((rc = put(s, id, ts->row.id, c->image, SOURCE_REFERER, seen,
                  &added)) != SQLITE_OK)
        return rc;
    if (added) {
        sm_tx_count(&s->tx, ts, page, 0, 0, 0);
        return run_id(s, STMT_IMG_TRIM, id, SM_IMAGES_MAX,
                      "cannot drop a page's oldest images");
    }
    if (!(q = sm_sqlite_stmt(s, STMT_IMG_SEEN)))
        return SQLITE_ERROR;
    sqlite3_bind_int64(q, 1, id);
    sm_sqlite_text(q, 2, c->image);
    sqlite3_bind_int64(q, 3, seen);
    return sm_sqlite_run(s, q, "cannot keep an image");
}

/* An image that answers 404 or 410 leaves every page of the site. */
static int image_gone(sqlite_store *s, sm_tx_site *ts, const sm_change *c)
{
    sqlite3_stmt *q;
    int rc;

    if (!(q = sm_sqlite_stmt(s, STMT_IMG_GONE_PAGES)))
        return SQLITE_ERROR;
    sqlite3_bind_int64(q, 1, ts->row.id);
    sm_sqlite_text(q, 2, c->image);
    while ((rc = sqlite3_step(q)) == SQLITE_ROW)
        sm_tx_count(&s->tx, ts, sqlite3_column_int64(q, 0), 0, 0, 0);
    if ((rc = sm_sqlite_finish(s, q, rc, "cannot read an image's pages"))
        != SQLITE_OK)
        return rc;
    if (!(q = sm_sqlite_stmt(s, STMT_IMG_GONE)))
        return SQLITE_ERROR;
    sqlite3_bind_int64(q, 1, ts->row.id);
    sm_sqlite_text(q, 2, c->image);
    return sm_sqlite_run(s, q, "cannot remove an image");
}

int sm_sqlite_images_put(sqlite_store *s, sm_tx_site *ts, const sm_change *c)
{
    if (c->op == SM_CHANGE_RECORD)
        return c->images ? head_images(s, ts, c) : SQLITE_OK;
    if (!c->image || !c->url)
        return SQLITE_OK;
    return c->op == SM_CHANGE_IMAGE ? referer_image(s, ts, c)
                                    : image_gone(s, ts, c);
}

apr_status_t sm_sqlite_page_images(sm_store *st, const char *base,
                                   apr_int64_t page, sm_image_fn *fn,
                                   void *baton)
{
    sqlite_store *s = (sqlite_store *)st;
    sqlite3_stmt *q = sm_sqlite_stmt(s, STMT_IMG_PAGE);
    apr_status_t rv = APR_SUCCESS;
    int rc;

    if (!q)
        return APR_EGENERAL;
    sm_sqlite_text(q, 1, base);
    sqlite3_bind_int64(q, 2, page);
    while ((rc = sqlite3_step(q)) == SQLITE_ROW)
        if ((rv = fn(baton, (const char *)sqlite3_column_text(q, 0),
                     (const char *)sqlite3_column_text(q, 1)))
            != APR_SUCCESS)
            break;
    if (rv == APR_SUCCESS && rc != SQLITE_DONE) {
        sm_sqlite_set_error(st, "cannot read the page's images", s->db);
        rv = APR_EGENERAL;
    }
    sqlite3_reset(q);
    sqlite3_clear_bindings(q);
    return rv;
}
