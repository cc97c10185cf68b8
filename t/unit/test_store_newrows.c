/* SPDX-License-Identifier: Apache-2.0 */
/* Unit tests of one write batch of many changes, SQLite and (the _pg
 * variants, on the database SM_UNIT_PG_URI names; t/integration/
 * test_unit_pg.py runs them) PostgreSQL, whose writer puts a batch's new
 * URLs in one statement: a new URL's title, description and publication
 * time are stored with it; a URL named twice in a batch keeps what its
 * last change says; text with the characters an array literal quotes
 * ('"', '\\', ',', '{', a "NULL") comes back as it went in; a stored
 * URL's description changes in a later batch. */
#include "unit_store.h"

#include "store/sm_store_backend.h"

#include <string.h>

static sm_site_conf site = { "http://b.example", 50000, 0, 0, NULL, 0 };

#define T0 apr_time_from_sec(1795687200)
#define HOUR apr_time_from_sec(3600)
#define ODD "say \"hi\", {x} \\ y; NULL"

static const char *pg_uri;

static sm_store *open_store(unit_ctx *u)
{
    const char *path = apr_pstrcat(u->pool, u->dir, "/b.db", NULL);
    sm_store *st;
    char err[512];

    if (sm_store_open(&st, u->pool, pg_uri ? pg_uri : path, SM_STORE_CREATE,
                      1000, NULL, err, sizeof(err)) != APR_SUCCESS)
        fail_msg("open: %s", err);
    return st;
}

/* A record of url as the head reader saw it (description NULL: not
 * read). */
static sm_change rec(const char *url, const char *title,
                     const char *description, apr_time_t published)
{
    sm_change c;

    memset(&c, 0, sizeof(c));
    c.op = SM_CHANGE_RECORD;
    c.site = &site;
    c.url = url;
    c.last_modified = T0 - 5 * HOUR;
    c.seen = T0;
    c.status = 200;
    c.etag = "\"e\"";
    c.title = title;
    c.description = description;
    c.published = published;
    return c;
}

static void apply(sm_store *st, sm_change *c, int n, int added)
{
    sm_apply_stats stats;

    if (sm_store_apply(st, c, n, &stats) != APR_SUCCESS)
        fail_msg("apply: %s", sm_store_error(st));
    assert_int_equal(stats.added, added);
}

static void expect(unit_ctx *u, sm_store *st, const char *llms,
                   const char *news)
{
    seen_urls s = { u->pool, "", T0 };

    assert_int_equal(sm_store_read_begin(st), APR_SUCCESS);
    assert_int_equal(sm_store_llms_urls(st, site.base, 100, unit_llms_row, &s),
                     APR_SUCCESS);
    assert_string_equal(s.got, llms);
    s.got = "";
    assert_int_equal(sm_store_news_urls(st, site.base, 0, 100, unit_news_row, &s),
                     APR_SUCCESS);
    assert_string_equal(s.got, news);
    sm_store_read_end(st);
}

static void test_batch(void **state)
{
    unit_ctx *u = *state;
    sm_store *st = open_store(u);
    sm_change one[] = {
        rec("/a", "A", "first", T0 - 2 * HOUR),
        rec("/b", NULL, NULL, 0),                   /* head not read */
        rec("/a", "A2", "second", T0 - HOUR),       /* /a again */
        rec("/c", "NULL", ODD, 0),
        rec("/d", "D", "", T0 - 3 * HOUR),          /* no description */
    };
    sm_change two[] = {
        rec("/b", "B", "now b", T0 - 4 * HOUR),     /* stored */
        rec("/e", "E", "e", 0),
        rec("/a", "A2", "second", T0 - HOUR),       /* the same again */
    };

    apply(st, one, 5, 4);
    expect(u, st, "/a=A2/second /b=-/- /c=NULL/" ODD " /d=D/- ",
           "/a=A2@-3600 /d=D@-10800 ");
    apply(st, two, 3, 1);
    expect(u, st, "/a=A2/second /b=B/now b /c=NULL/" ODD " /d=D/- /e=E/e ",
           "/a=A2@-3600 /d=D@-10800 /b=B@-14400 ");
    sm_store_close(st);
}

UNIT_PG_VARIANT(test_batch)

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_batch, unit_setup,
                                        unit_teardown),
        cmocka_unit_test_setup_teardown(test_batch_pg, unit_setup,
                                        unit_teardown),
    };

    UNIT_STORE_RUN(tests);
}
