/* SPDX-License-Identifier: Apache-2.0 */
/* Unit tests of a page's images in the store (SitemapImages), SQLite and
 * (the _pg variants, on the database SM_UNIT_PG_URI names; t/unit/
 * images_pg makes one) PostgreSQL: the head's images of a RECORD, images
 * fetched for a listed page (never for one not listed), at most
 * SM_IMAGES_MAX a page (the oldest seen go), an image gone leaving every
 * page, a page's images gone with it; a change moves the page's version
 * but not its lastmod, and puts nothing on IndexNow's list; the upgrade
 * of a store of the schema before. */
#include "unit.h"

#include "record/sm_recorder.h"
#include "store/sm_store_backend.h"

#include <string.h>

static sm_site_conf site = { "https://i.example", 2, 0, 0, NULL, 1 };

#define T0 1800000000
static const char *pg_uri;

static sm_store *open_store(unit_ctx *u, const char *name, char **path)
{
    sm_store *st;
    char err[512];

    *path = apr_pstrcat(u->pool, u->dir, "/", name, NULL);
    if (sm_store_open(&st, u->pool, pg_uri ? pg_uri : *path,
                      SM_STORE_CREATE, 1000, NULL, err, sizeof(err))
        != APR_SUCCESS)
        fail_msg("open: %s", err);
    return st;
}

static sm_change change(sm_change_op op, const char *url, const char *image,
                        apr_int64_t seen)
{
    sm_change c;

    memset(&c, 0, sizeof(c));
    c.op = op;
    c.site = &site;
    c.url = url;
    c.image = image;
    c.last_modified = apr_time_from_sec(T0 - 1000);
    c.seen = apr_time_from_sec(seen);
    c.status = 200;
    return c;
}

static sm_change head(const char *url, const char *images, apr_int64_t seen)
{
    sm_change c = change(SM_CHANGE_RECORD, url, NULL, seen);

    c.etag = "\"e\"";
    c.images = images;
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

typedef struct {
    apr_pool_t *p;
    const char *text;
    int n;
} listing;

static apr_status_t add_image(void *baton, const char *url,
                              const char *image)
{
    listing *l = baton;

    if (++l->n <= 20)
        l->text = apr_pstrcat(l->p, l->text, *l->text ? " " : "", url, "=",
                              image, NULL);
    return APR_SUCCESS;
}

static listing images(unit_ctx *u, sm_store *st, apr_int64_t page)
{
    listing l = { u->pool, "", 0 };

    assert_int_equal(sm_store_read_begin(st), APR_SUCCESS);
    assert_int_equal(sm_store_page_images(st, site.base, page, add_image,
                                          &l), APR_SUCCESS);
    sm_store_read_end(st);
    return l;
}

/* Page 1's version and lastmod. */
static void page1(sm_store *st, apr_pool_t *p, apr_int64_t *version,
                  apr_time_t *lastmod)
{
    sm_site_info info;
    sm_page_info *pi;

    assert_int_equal(sm_store_read_begin(st), APR_SUCCESS);
    assert_int_equal(sm_store_site_info(st, p, site.base, 1, &info),
                     APR_SUCCESS);
    sm_store_read_end(st);
    assert_int_equal(info.pages->nelts, 1);
    pi = &APR_ARRAY_IDX(info.pages, 0, sm_page_info);
    *version = pi->version;
    *lastmod = pi->lastmod;
}

static apr_int64_t pending(unit_ctx *u, sm_store *st)
{
    apr_array_header_t *a;

    assert_int_equal(sm_store_indexnow_stats(st, u->pool, site.base, &a),
                     APR_SUCCESS);
    return a->nelts ? APR_ARRAY_IDX(a, 0, sm_indexnow_stats).pending : 0;
}

static void test_head_and_referer(void **state)
{
    unit_ctx *u = *state;
    char *path;
    sm_store *st = open_store(u, "i.db", &path);
    apr_int64_t v0, v;
    apr_time_t lm0, lm;
    apr_int64_t queued;
    sm_change two[2];

    apply(st, head("/a", "", T0 - 100));
    apply(st, head("/b", "https://i.example/b.png", T0 - 100));
    queued = pending(u, st);
    assert_string_equal(images(u, st, 1).text,
                        "/b=https://i.example/b.png");
    page1(st, u->pool, &v0, &lm0);

    /* The head's images replace the head's: the version moves, not the
     * lastmod, and nothing goes to IndexNow. */
    apply(st, head("/a", "https://i.example/y.png\nhttps://i.example/x.png",
                   T0 - 50));
    page1(st, u->pool, &v, &lm);
    assert_true(v > v0);
    assert_true(lm == lm0);
    assert_int_equal(pending(u, st), queued);
    assert_string_equal(images(u, st, 1).text,
                        "/a=https://i.example/x.png /a=https://i.example/y.png"
                        " /b=https://i.example/b.png");
    /* The same again (another order): nothing moves. */
    v0 = v;
    apply(st, head("/a", "https://i.example/x.png\nhttps://i.example/y.png",
                   T0 - 40));
    page1(st, u->pool, &v, &lm);
    assert_true(v == v0);

    /* Fetched with /a as Referer: kept after the head's; again: nothing
     * moves; for a page not listed: nothing. */
    two[0] = change(SM_CHANGE_IMAGE, "/a", "https://i.example/r.jpg", T0 - 30);
    two[1] = change(SM_CHANGE_IMAGE, "/nope", "https://i.example/n.jpg",
                    T0 - 30);
    apply_n(st, two, 2);
    page1(st, u->pool, &v, &lm);
    assert_true(v > v0 && lm == lm0);
    v0 = v;
    apply(st, change(SM_CHANGE_IMAGE, "/a", "https://i.example/r.jpg", T0));
    page1(st, u->pool, &v, &lm);
    assert_true(v == v0);
    assert_string_equal(images(u, st, 1).text,
                        "/a=https://i.example/x.png /a=https://i.example/y.png"
                        " /a=https://i.example/r.jpg"
                        " /b=https://i.example/b.png");
    /* A head without images leaves the fetched ones. */
    apply(st, head("/a", "", T0));
    assert_string_equal(images(u, st, 1).text,
                        "/a=https://i.example/r.jpg"
                        " /b=https://i.example/b.png");
    assert_int_equal(pending(u, st), queued);

    /* Gone: from every page. */
    apply(st, change(SM_CHANGE_IMAGE, "/b", "https://i.example/r.jpg", T0));
    v0 = v;
    apply(st, change(SM_CHANGE_IMAGE_GONE, "/r.jpg", "https://i.example/r.jpg",
                     T0 + 1));
    page1(st, u->pool, &v, &lm);
    assert_true(v > v0);
    assert_string_equal(images(u, st, 1).text, "/b=https://i.example/b.png");

    /* A page forgotten takes its images with it. */
    apply(st, change(SM_CHANGE_FORGET, "/b", NULL, T0 + 2));
    assert_int_equal(images(u, st, 1).n, 0);
    if (!pg_uri)
        assert_int_equal(sql_int(path, "SELECT count(*) FROM images"), 0);
    sm_store_close(st);
}

/* At most SM_IMAGES_MAX a page: the oldest seen go. */
static void test_bounded(void **state)
{
    unit_ctx *u = *state;
    char *path;
    sm_store *st = open_store(u, "b.db", &path);
    sm_change *c = apr_pcalloc(u->pool, sizeof(*c) * (SM_IMAGES_MAX + 5));
    listing l;
    int i;

    apply(st, head("/p", "", T0 - 5000));
    for (i = 0; i < SM_IMAGES_MAX + 5; i++)
        c[i] = change(SM_CHANGE_IMAGE, "/p",
                      apr_psprintf(u->pool, "https://i.example/%05d.png", i),
                      T0 - 4000 + i);
    apply_n(st, c, SM_IMAGES_MAX + 5);
    l = images(u, st, 1);
    assert_int_equal(l.n, SM_IMAGES_MAX);
    assert_true(strncmp(l.text, "/p=https://i.example/00005.png", 30) == 0);
    sm_store_close(st);
}

/* A store of the schema before: the first writer adds the table. */
static void test_upgrade(void **state)
{
    unit_ctx *u = *state;
    char *path;
    sm_store *st = open_store(u, "u.db", &path);

    apply(st, head("/a", "", T0));
    sm_store_close(st);
    sql_exec(path, SM_UNIT_DROP_IMAGES " PRAGMA user_version = 8;");
    st = open_store(u, "u.db", &path);
    assert_int_equal(sql_int(path, "PRAGMA user_version"), SM_SCHEMA_VERSION);
    apply(st, head("/a", "https://i.example/a.png", T0 + 1));
    assert_string_equal(images(u, st, 1).text, "/a=https://i.example/a.png");
    sm_store_close(st);
}

/* Through the recorder: an image's change is keyed apart from its page's
 * record (both written from one batch), and its raw facts are then a
 * steady-state repeat (sm_recorder_repeat), as a page's are. */
static void test_recorder(void **state)
{
    unit_ctx *u = *state;
    char *path = apr_pstrcat(u->pool, u->dir, "/r.db", NULL);
    sm_logger logger = { NULL, NULL, SM_LOG_ERR };
    sm_recorder_conf conf = { path, apr_time_from_sec(60), 100, 1000, 200,
                              &logger, NULL, NULL, NULL, 0, 0, 0, 0 };
    sm_change r = head("/p", "", T0), i1, i2;
    apr_uint64_t raw = 0x123456789abcdefULL;
    sm_recorder *rec;
    sm_store *st;

    i1 = change(SM_CHANGE_IMAGE, "/p", "https://i.example/1.png", T0);
    i2 = change(SM_CHANGE_IMAGE, "/p", "https://i.example/2.png", T0);
    assert_int_equal(sm_recorder_create(&rec, u->pool, &conf), APR_SUCCESS);
    sm_recorder_add_site(rec, &site);
    assert_int_equal(sm_recorder_repeat(rec, raw, apr_time_from_sec(T0)), 0);
    sm_recorder_add(rec, &r, 0);
    sm_recorder_image(rec, &i1, raw);
    sm_recorder_image(rec, &i2, 0);
    assert_int_equal(sm_recorder_flush(rec), APR_SUCCESS);
    assert_int_equal(sm_recorder_repeat(rec, raw, apr_time_from_sec(T0)), 1);
    sm_recorder_stop(rec);
    assert_int_equal(sql_int(path, "SELECT count(*) FROM urls"), 1);
    assert_int_equal(sql_int(path, "SELECT count(*) FROM images"), 2);
    st = open_store(u, "r.db", &path);
    assert_int_equal(images(u, st, 1).n, 2);
    sm_store_close(st);
}

UNIT_PG_VARIANT(test_head_and_referer)

UNIT_PG_VARIANT(test_bounded)

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_head_and_referer, unit_setup,
                                        unit_teardown),
        cmocka_unit_test_setup_teardown(test_bounded, unit_setup,
                                        unit_teardown),
        cmocka_unit_test_setup_teardown(test_upgrade, unit_setup,
                                        unit_teardown),
        cmocka_unit_test_setup_teardown(test_head_and_referer_pg, unit_setup,
                                        unit_teardown),
        cmocka_unit_test_setup_teardown(test_bounded_pg, unit_setup,
                                        unit_teardown),
        /* Last: stopping a recorder stops every store of the process
         * for good (sm_store_stop_all). */
        cmocka_unit_test_setup_teardown(test_recorder, unit_setup,
                                        unit_teardown),
    };

    UNIT_STORE_RUN(tests);
}
