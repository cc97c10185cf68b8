/* SPDX-License-Identifier: Apache-2.0 */
/* sm_store_pg_images.c: a listed page's images (SitemapImages) on
 * PostgreSQL, as sm_store_sqlite_images.c keeps them: in the writer's
 * transaction, whose site rows are locked (tx_lock_sites); a change moves
 * the page's version, never its lastmod, and goes to no IndexNow list. */
#include "store/sm_store_pg.h"

#include <stdlib.h>
#include <string.h>

#include <apr_strings.h>

#define SOURCE_HEAD    "1"
#define SOURCE_REFERER "2"

/* The listed page's id and page (its row locked against a removal by
 * another server); id 0 when it is not listed. */
static int page_of(pg_store *s, apr_int64_t site_id, const char *url,
                   apr_int64_t *id, apr_int64_t *page)
{
    params ps = { .n = 0 };
    PGresult *res;

    *id = *page = 0;
    p_i64(&ps, site_id);
    p_str(&ps, url);
    if (!(res = sm_pg_q(s, "cannot read a URL", "SELECT id, page FROM"
                        " sitemap_urls WHERE site_id = $1 AND url = $2"
                        " FOR KEY SHARE", &ps)))
        return -1;
    if (PQntuples(res) == 1) {
        *id = i64(res, 0, 0);
        *page = i64(res, 0, 1);
    }
    PQclear(res);
    return 0;
}

static int put(pg_store *s, apr_int64_t id, apr_int64_t site_id,
               const char *image, const char *source, apr_int64_t seen,
               apr_int64_t *added)
{
    params ps = { .n = 0 };

    p_i64(&ps, id);
    p_str(&ps, image);
    p_i64(&ps, site_id);
    p_str(&ps, source);
    p_i64(&ps, seen);
    return sm_pg_run(s, "cannot keep an image", "INSERT INTO sitemap_images"
                     "(url_id, image, site_id, source, last_seen)"
                     " VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING",
                     &ps, added);
}

static int trim(pg_store *s, apr_int64_t id)
{
    params ps = { .n = 0 };

    p_i64(&ps, id);
    p_i64(&ps, SM_IMAGES_MAX);
    return sm_pg_run(s, "cannot drop a page's oldest images", "DELETE FROM"
                     " sitemap_images WHERE url_id = $1 AND image IN"
                     " (SELECT image FROM sitemap_images WHERE url_id = $1"
                     " ORDER BY last_seen DESC, image OFFSET $2)", &ps, NULL);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The head's images replace the stored ones of the head when they differ
 * (both sorted bytewise). */
static int head_images(pg_store *s, sm_tx_site *ts, const sm_change *c)
{
    params ps = { .n = 0 };
    apr_array_header_t *list;
    apr_int64_t id, page, added;
    const char *stored = "", *joined = "";
    char *copy, *last, *tok;
    PGresult *res;
    apr_pool_t *p;
    int i, rc = -1;

    if (page_of(s, ts->row.id, c->url, &id, &page) != 0)
        return -1;
    if (!id)
        return 0;
    if (apr_pool_create(&p, NULL) != APR_SUCCESS)
        return -1;
    list = apr_array_make(p, 8, sizeof(char *));
    copy = apr_pstrdup(p, c->images);
    for (tok = apr_strtok(copy, "\n", &last); tok;
         tok = apr_strtok(NULL, "\n", &last))
        APR_ARRAY_PUSH(list, char *) = tok;
    qsort(list->elts, (size_t)list->nelts, sizeof(char *), cmp_str);
    for (i = 0; i < list->nelts; i++)
        joined = apr_pstrcat(p, joined, i ? "\n" : "",
                             APR_ARRAY_IDX(list, i, char *), NULL);
    p_i64(&ps, id);
    if (!(res = sm_pg_q(s, "cannot read a page's images", "SELECT image"
                        " FROM sitemap_images WHERE url_id = $1 AND source"
                        " = " SOURCE_HEAD " ORDER BY image COLLATE \"C\"",
                        &ps)))
        goto done;
    for (i = 0; i < PQntuples(res); i++)
        stored = apr_pstrcat(p, stored, i ? "\n" : "",
                             PQgetvalue(res, i, 0), NULL);
    PQclear(res);
    rc = 0;
    if (strcmp(stored, joined) == 0)
        goto done;
    rc = -1;
    if (sm_pg_run(s, "cannot remove a page's images", "DELETE FROM"
                  " sitemap_images WHERE url_id = $1 AND source = "
                  SOURCE_HEAD, &ps, NULL) != 0)
        goto done;
    for (i = 0; i < list->nelts; i++)
        if (put(s, id, ts->row.id, APR_ARRAY_IDX(list, i, char *),
                SOURCE_HEAD, apr_time_sec(c->seen), &added) != 0)
            goto done;
    if (trim(s, id) != 0)
        goto done;
    sm_tx_count(&s->tx, ts, page, 0, 0, 0);
    rc = 0;
done:
    apr_pool_destroy(p);
    return rc;
}

static int referer_image(pg_store *s, sm_tx_site *ts, const sm_change *c)
{
    params ps = { .n = 0 };
    apr_int64_t id, page, added = 0, seen = apr_time_sec(c->seen);

    if (page_of(s, ts->row.id, c->url, &id, &page) != 0)
        return -1;
    if (!id)
        return 0;                       /* not listed: nothing */
    if (put(s, id, ts->row.id, c->image, SOURCE_REFERER, seen, &added) != 0)
        return -1;
    if (added) {
        sm_tx_count(&s->tx, ts, page, 0, 0, 0);
        return trim(s, id);
    }
    p_i64(&ps, id);
    p_str(&ps, c->image);
    p_i64(&ps, seen);
    return sm_pg_run(s, "cannot keep an image", "UPDATE sitemap_images"
                     " SET last_seen = $3 WHERE url_id = $1 AND image = $2"
                     " AND last_seen < $3", &ps, NULL);
}

static int image_gone(pg_store *s, sm_tx_site *ts, const sm_change *c)
{
    params ps = { .n = 0 };
    PGresult *res;
    int i;

    p_i64(&ps, ts->row.id);
    p_str(&ps, c->image);
    if (!(res = sm_pg_q(s, "cannot remove an image", "DELETE FROM"
                        " sitemap_images i USING sitemap_urls u"
                        " WHERE i.site_id = $1 AND i.image = $2"
                        " AND u.id = i.url_id RETURNING u.page", &ps)))
        return -1;
    for (i = 0; i < PQntuples(res); i++)
        sm_tx_count(&s->tx, ts, i64(res, i, 0), 0, 0, 0);
    PQclear(res);
    return 0;
}

static int images_allowed(pg_store *s)
{
    return sm_pg_table_allowed(s, &s->images_ok, "sitemap_images",
                               "SELECT, INSERT, UPDATE, DELETE",
                               "no images are kept");
}

int sm_pg_images_put(pg_store *s, sm_tx_site *ts, const sm_change *c)
{
    int allowed;

    if (!c->image || !c->url)
        return 0;
    if ((allowed = images_allowed(s)) <= 0)
        return allowed;
    return c->op == SM_CHANGE_IMAGE ? referer_image(s, ts, c)
                                    : image_gone(s, ts, c);
}

int sm_pg_images_after(pg_store *s, sm_pg_new_rows *nr, const sm_change *c)
{
    sm_tx_site *ts;

    int allowed;

    if (c->op != SM_CHANGE_RECORD || !c->images)
        return 0;
    if ((allowed = images_allowed(s)) <= 0)
        return allowed;
    ts = sm_tx_site_find(&s->tx, c->site->base);
    /* A URL added in this batch has none stored: only images to add need
     * its row written first. */
    if (*c->images && sm_pg_write_new(s, nr) != 0)
        return -1;
    return head_images(s, ts, c);
}
