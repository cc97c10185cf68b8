/* SPDX-License-Identifier: Apache-2.0 */
/* sm_store_pg_batch.c: a write transaction's new URLs, many at once (see
 * sm_store_pg.h).
 *
 * Most of what the module writes is new URLs (a crawl, a new site): one
 * round trip each would bound a server at what the database answers per
 * second.  So a transaction first asks, in one query per site, which of
 * its URLs are stored; the new ones are given their page and id in memory
 * (the site's row is locked: no other writer adds to it meanwhile) and go
 * in by COPY, COPY_ROWS a statement.  Everything else (changes of stored
 * URLs, removals, a URL named twice) goes one by one, after the pending
 * new rows are written, so the order of the changes is kept. */
#include "store/sm_store_pg.h"

#include <string.h>

const char *sm_pg_row_key(apr_pool_t *p, const sm_tx_site *ts,
                          const char *url)
{
    return apr_psprintf(p, "%" APR_INT64_T_FMT "/%s", ts->row.id, url);
}

void sm_pg_new_rows_init(sm_pg_new_rows *nr, apr_pool_t *p,
                         const sm_change *changes, int n)
{
    nr->p = p;
    nr->changes = changes;
    nr->n_changes = n;
    nr->in_row = apr_pcalloc(p, n > 0 ? (apr_size_t)n : 1);
    nr->stored = apr_hash_make(p);
    nr->pending = apr_hash_make(p);
#define I64S apr_array_make(p, 64, sizeof(apr_int64_t))
#define STRS apr_array_make(p, 64, sizeof(char *))
    nr->site = I64S; nr->id = I64S; nr->page = I64S; nr->lastmod = I64S;
    nr->seen = I64S; nr->len = I64S; nr->held = I64S; nr->published = I64S;
    nr->url = STRS; nr->etag = STRS; nr->title = STRS; nr->alternates = STRS;
    nr->description = STRS;
#undef I64S
#undef STRS
}

/* ---- binary formats: the stored URLs' question, the new rows' COPY ----
 * COPY's: a header, then per row its field count and each field as a 32-bit
 * length (-1: NULL) and its bytes, integers big-endian, each the width
 * of its column's type (bigint 8, integer 4: the column list below and
 * the schema's types go together), then -1.  Against an INSERT from
 * arrays, the server parses no array literal and keeps no tuple store:
 * it reads the rows straight into the table, a page of them at a time. */

/* The columns a COPY may leave out: those whose every row of the
 * statement is NULL (text) or 0 (held, published: their default).  Each
 * column sent costs the server its field's reading and its receive
 * function per row; a column left out costs nothing (NULL) or its
 * constant default. */
enum {
    COL_ETAG = 1, COL_TITLE = 2, COL_ALTERNATES = 4, COL_HELD = 8,
    COL_DESCRIPTION = 16, COL_PUBLISHED = 32
};
/* Always sent: id, site_id, url, page, lastmod, first_seen, last_seen,
 * xml_len. */
#define COPY_FIXED 8
/* Rows a COPY statement: COPY keeps a slot per row it buffers, each
 * taking a reference to the table's row descriptor in the statement's
 * resource owner.  Up to 64 references the owner keeps them in an array
 * (a release finds its reference at the end: a few instructions); past
 * 64 in a hash, where every slot's reference is the same pointer, so all
 * collide and each release probes the lot (7,000 instructions a row in a
 * COPY of 660 rows).  The statement itself holds one more reference: 63
 * rows is the most that stays an array (PostgreSQL 15; a row costs the
 * backend 27,416 at 63 rows, 28,099 at 64), 60 leaves room for a few
 * more, while a statement costs about 60,000. */
#define COPY_ROWS 60
/* (its 19 bytes: the string's terminating NUL is not sent) */
static const char copy_header[] = "PGCOPY\n\377\r\n\0" "\0\0\0\0" "\0\0\0\0";
#define COPY_HEADER_LEN (sizeof(copy_header) - 1)

static char *put_be(char *o, apr_uint64_t v, int bytes)
{
    int i;

    for (i = bytes - 1; i >= 0; i--, v >>= 8)
        o[i] = (char)(v & 0xff);
    return o + bytes;
}

static char *put_int(char *o, apr_int64_t v, int bytes)
{
    o = put_be(o, (apr_uint64_t)bytes, 4);
    return put_be(o, (apr_uint64_t)v, bytes);
}

static char *put_text(char *o, const char *v)
{
    apr_size_t n;

    if (!v)
        return put_be(o, 0xffffffffu, 4);
    n = strlen(v);
    o = put_be(o, (apr_uint64_t)n, 4);
    memcpy(o, v, n);
    return o + n;
}

/* urls as a binary text[] (array_recv's format: dimensions, flags,
 * element type, length and lower bound, then each element's length and
 * bytes, big-endian): the server parses no array literal.  *len its
 * bytes. */
static char *text_array_binary(apr_pool_t *p, const char *const *urls, int k,
                               int *len)
{
    apr_size_t size = 20, *n = apr_palloc(p, sizeof(*n) * (apr_size_t)k);
    char *out, *o;
    int i;

    for (i = 0; i < k; i++)
        size += 4 + (n[i] = strlen(urls[i]));
    o = out = apr_palloc(p, size);
    o = put_be(o, 1, 4);                /* one dimension */
    o = put_be(o, 0, 4);                /* no NULL */
    o = put_be(o, 25, 4);               /* text's OID */
    o = put_be(o, (apr_uint64_t)k, 4);
    o = put_be(o, 1, 4);                /* lower bound */
    for (i = 0; i < k; i++) {
        o = put_be(o, (apr_uint64_t)n[i], 4);
        memcpy(o, urls[i], n[i]);
        o += n[i];
    }
    *len = (int)size;
    return out;
}

/* Which URLs of the changes that may add one are stored: one query per
 * site (the sites are locked already). */
int sm_pg_find_stored(pg_store *s, sm_pg_new_rows *nr,
                      const sm_change *changes, int n)
{
    apr_hash_index_t *hi;

    for (hi = apr_hash_first(nr->p, s->tx.sites); hi; hi = apr_hash_next(hi)) {
        sm_tx_site *ts = apr_hash_this_val(hi);
        const char **urls = apr_palloc(nr->p, sizeof(char *) * (apr_size_t)n);
        char id[24];
        const char *v[2];
        int lens[2] = { 0, 0 }, formats[2] = { 0, 1 };
        PGresult *res;
        int i, k = 0;

        for (i = 0; i < n; i++)
            if (changes[i].op != SM_CHANGE_FORGET
                && changes[i].op != SM_CHANGE_NOTE
                && changes[i].op != SM_CHANGE_CRAWL
                && strcmp(changes[i].site->base, ts->conf->base) == 0)
                urls[k++] = changes[i].url;
        if (!k)
            continue;
        apr_snprintf(id, sizeof(id), "%" APR_INT64_T_FMT, ts->row.id);
        v[0] = id;
        v[1] = text_array_binary(nr->p, urls, k, &lens[1]);
        /* A join, not url = ANY($2): the planner estimates no element
         * and the executor sorts none (each a cost per URL). */
        if (!(res = sm_pg_q_binary(s, "cannot look up URLs", "SELECT u.url"
                                   " FROM unnest($2::text[]) AS x(url) JOIN"
                                   " sitemap_urls u ON u.site_id = $1"
                                   " AND u.url = x.url", 2, v, lens,
                                   formats)))
            return -1;
        for (i = 0; i < PQntuples(res); i++)
            apr_hash_set(nr->stored,
                         sm_pg_row_key(nr->p, ts, PQgetvalue(res, i, 0)),
                         APR_HASH_KEY_STRING, "");
        PQclear(res);
    }
    return 0;
}

/* The new row's description and publication time: what sm_pg_news_put
 * would write over the defaults (NULL and 0) for c, which it then passes
 * by (a second statement per row: each an update of the row, its index
 * entries written again). */
static void queue_news(sm_pg_new_rows *nr, const sm_change *c)
{
    int news = c->op == SM_CHANGE_RECORD && c->description;

    APR_ARRAY_PUSH(nr->description, const char *) =
        news && *c->description ? c->description : NULL;
    APR_ARRAY_PUSH(nr->published, apr_int64_t) =
        news && c->published > 0 ? apr_time_sec(c->published) : 0;
    if (news && c >= nr->changes && c < nr->changes + nr->n_changes)
        nr->in_row[c - nr->changes] = 1;
}

/* c adds a URL that is neither stored nor pending: planned, counted and
 * kept for write_new.  0, or -1 on error. */
int sm_pg_queue_new(pg_store *s, sm_pg_new_rows *nr, const sm_change *c,
                    sm_tx_site *ts, const char *key, sm_apply_stats *stats)
{
    apr_int64_t seen = apr_time_sec(c->seen);
    apr_int64_t lastmod = c->last_modified ? apr_time_sec(c->last_modified)
                                           : seen;
    apr_int64_t entry, page, id, held = sm_tx_held_new(c);
    int rc = sm_pg_plan_url(s, c, ts, &page, &id, &entry);

    if (rc <= 0) {
        if (rc == 0)
            stats->refused_full++;
        return rc;
    }
    APR_ARRAY_PUSH(nr->site, apr_int64_t) = ts->row.id;
    APR_ARRAY_PUSH(nr->id, apr_int64_t) = id;
    APR_ARRAY_PUSH(nr->page, apr_int64_t) = page;
    APR_ARRAY_PUSH(nr->lastmod, apr_int64_t) = lastmod;
    APR_ARRAY_PUSH(nr->seen, apr_int64_t) = seen;
    APR_ARRAY_PUSH(nr->len, apr_int64_t) = entry;
    APR_ARRAY_PUSH(nr->held, apr_int64_t) = held;
    APR_ARRAY_PUSH(nr->url, const char *) = c->url;
    APR_ARRAY_PUSH(nr->etag, const char *) = c->etag;
    APR_ARRAY_PUSH(nr->title, const char *) = SM_TX_TITLE(c);
    APR_ARRAY_PUSH(nr->alternates, const char *) = SM_TX_ALTERNATES(c);
    queue_news(nr, c);
    apr_hash_set(nr->pending, key, APR_HASH_KEY_STRING, "");
    sm_tx_added(&s->tx, ts, page, id, entry, lastmod);
    sm_tx_seen(&s->tx, ts, page, seen);
    stats->added++;
    /* Held: submitted once corroborated (sm_store_tx.h). */
    if (held) {
        s->tx.held = 1;
        return 0;
    }
    return sm_pg_indexnow_note(s, ts, c->url);
}

/* Which optional columns nr's rows from to to need (COL_ bits). */
static int copy_columns(const sm_pg_new_rows *nr, int from, int to)
{
#define I64(a) APR_ARRAY_IDX(nr->a, i, apr_int64_t)
#define STR(a) APR_ARRAY_IDX(nr->a, i, const char *)
    int i, cols = 0;

    for (i = from; i < to; i++)
        cols |= (STR(etag) ? COL_ETAG : 0) | (STR(title) ? COL_TITLE : 0)
                | (STR(alternates) ? COL_ALTERNATES : 0)
                | (I64(held) ? COL_HELD : 0)
                | (STR(description) ? COL_DESCRIPTION : 0)
                | (I64(published) ? COL_PUBLISHED : 0);
    return cols;
#undef I64
#undef STR
}

/* The COPY statement for the columns cols: the column list and the
 * fields copy_data writes go together. */
static const char *copy_sql(apr_pool_t *p, int cols)
{
    return apr_pstrcat(p, "COPY sitemap_urls(id, site_id, url, page,"
                       " lastmod, first_seen, last_seen, xml_len",
                       cols & COL_ETAG ? ", etag" : "",
                       cols & COL_TITLE ? ", title" : "",
                       cols & COL_ALTERNATES ? ", alternates" : "",
                       cols & COL_HELD ? ", held" : "",
                       cols & COL_DESCRIPTION ? ", description" : "",
                       cols & COL_PUBLISHED ? ", published" : "",
                       ") FROM STDIN (FORMAT binary)", NULL);
}

/* nr's rows from to to as COPY data of the columns cols: its length in
 * *len. */
static char *copy_data(sm_pg_new_rows *nr, int from, int to, int cols,
                       apr_size_t *len)
{
#define I64(a) APR_ARRAY_IDX(nr->a, i, apr_int64_t)
#define STR(a) APR_ARRAY_IDX(nr->a, i, const char *)
#define TLEN(a) (4 + (STR(a) ? strlen(STR(a)) : 0))
    int i, k, fields = COPY_FIXED;
    apr_size_t size = COPY_HEADER_LEN + 2;
    char *out, *o;

    for (k = 1; k <= COL_PUBLISHED; k <<= 1)
        fields += (cols & k) != 0;
    for (i = from; i < to; i++)
        size += 2 + 8 * (4 + 8) + (4 + 4) + TLEN(url) + TLEN(etag)
                + TLEN(title) + TLEN(alternates) + TLEN(description);
    o = out = apr_palloc(nr->p, size);
    memcpy(o, copy_header, COPY_HEADER_LEN);
    o += COPY_HEADER_LEN;
    for (i = from; i < to; i++) {
        o = put_be(o, (apr_uint64_t)fields, 2);
        o = put_int(o, I64(id), 8);
        o = put_int(o, I64(site), 8);
        o = put_text(o, STR(url));
        o = put_int(o, I64(page), 8);
        o = put_int(o, I64(lastmod), 8);
        o = put_int(o, I64(seen), 8);             /* first_seen */
        o = put_int(o, I64(seen), 8);             /* last_seen */
        o = put_int(o, I64(len), 4);              /* xml_len: integer */
        if (cols & COL_ETAG)
            o = put_text(o, STR(etag));
        if (cols & COL_TITLE)
            o = put_text(o, STR(title));
        if (cols & COL_ALTERNATES)
            o = put_text(o, STR(alternates));
        if (cols & COL_HELD)
            o = put_int(o, I64(held), 8);
        if (cols & COL_DESCRIPTION)
            o = put_text(o, STR(description));
        if (cols & COL_PUBLISHED)
            o = put_int(o, I64(published), 8);
    }
    o = put_be(o, 0xffff, 2);
    *len = (apr_size_t)(o - out);
    return out;
#undef I64
#undef STR
#undef TLEN
}

/* Write the pending new rows, COPY_ROWS a statement. */
int sm_pg_write_new(pg_store *s, sm_pg_new_rows *nr)
{
    int n = nr->url->nelts, from, to, cols;
    apr_int64_t done;
    apr_size_t len;
    const char *data;

    for (from = 0; from < n; from = to) {
        to = n - from > COPY_ROWS ? from + COPY_ROWS : n;
        cols = copy_columns(nr, from, to);
        data = copy_data(nr, from, to, cols, &len);
        done = 0;
        if (sm_pg_copy_in(s, "cannot add URLs", copy_sql(nr->p, cols),
                          data, len, &done) != 0)
            return -1;
        if (done != to - from) {
            apr_snprintf(s->base.errmsg, sizeof(s->base.errmsg), "cannot add"
                         " URLs: %" APR_INT64_T_FMT " of %d written", done,
                         to - from);
            return -1;
        }
    }
    apr_hash_clear(nr->pending);
    apr_array_clear(nr->site); apr_array_clear(nr->id);
    apr_array_clear(nr->page); apr_array_clear(nr->lastmod);
    apr_array_clear(nr->seen); apr_array_clear(nr->len);
    apr_array_clear(nr->held); apr_array_clear(nr->published);
    apr_array_clear(nr->url); apr_array_clear(nr->etag);
    apr_array_clear(nr->title); apr_array_clear(nr->alternates);
    apr_array_clear(nr->description);
    return 0;
}
