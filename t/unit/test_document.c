/* SPDX-License-Identifier: Apache-2.0 */
/* Unit tests of the choice of a sitemap document (sm_document.c), the one
 * the handler and sitemapctl export share. */
#include "unit.h"

#include <apr_strings.h>
#include <apr_tables.h>
#include <string.h>

#include "serve/sm_document.h"

/* A snapshot with pages 1..n (page 0 read: every non-empty page). */
static sm_site_info *site_with(apr_pool_t *p, int n)
{
    sm_site_info *info = apr_pcalloc(p, sizeof(*info));
    int i;

    info->pages = apr_array_make(p, n ? n : 1, sizeof(sm_page_info));
    for (i = 1; i <= n; i++) {
        sm_page_info *pi = apr_array_push(info->pages);
        memset(pi, 0, sizeof(*pi));
        pi->page = i;
        pi->url_count = 1;
    }
    return info;
}

static void test_choose(void **state)
{
    apr_pool_t *p = ((unit_ctx *)*state)->pool;
    sm_doc doc;

    sm_doc_choose(site_with(p, 0), 0, &doc);
    assert_int_equal(doc.kind, SM_DOC_EMPTY);
    sm_doc_choose(site_with(p, 0), 1, &doc);
    assert_int_equal(doc.kind, SM_DOC_NONE);

    sm_doc_choose(site_with(p, 1), 0, &doc);
    assert_int_equal(doc.kind, SM_DOC_URLSET);
    assert_int_equal(doc.page->page, 1);
    sm_doc_choose(site_with(p, 1), 1, &doc);
    assert_int_equal(doc.kind, SM_DOC_URLSET);

    sm_doc_choose(site_with(p, 3), 0, &doc);
    assert_int_equal(doc.kind, SM_DOC_INDEX);
    assert_int_equal(doc.entries, 3);
    assert_int_equal(doc.overflow, 0);
    sm_doc_choose(site_with(p, 3), 2, &doc);
    assert_int_equal(doc.kind, SM_DOC_URLSET);
    assert_int_equal(doc.page->page, 2);
    sm_doc_choose(site_with(p, 3), 4, &doc);
    assert_int_equal(doc.kind, SM_DOC_NONE);
}

/* An index lists at most 50,000 pages; every page is still a document. */
static void test_index_limit(void **state)
{
    apr_pool_t *p = ((unit_ctx *)*state)->pool;
    sm_site_info *info = site_with(p, SM_INDEX_MAX_ENTRIES + 2);
    sm_doc doc;

    sm_doc_choose(site_with(p, SM_INDEX_MAX_ENTRIES), 0, &doc);
    assert_int_equal(doc.entries, SM_INDEX_MAX_ENTRIES);
    assert_int_equal(doc.overflow, 0);
    sm_doc_choose(info, 0, &doc);
    assert_int_equal(doc.kind, SM_DOC_INDEX);
    assert_int_equal(doc.entries, SM_INDEX_MAX_ENTRIES);
    assert_int_equal(doc.overflow, 2);
    sm_doc_choose(info, SM_INDEX_MAX_ENTRIES + 2, &doc);
    assert_int_equal(doc.kind, SM_DOC_URLSET);
}

/* ---- <urlset> with hreflang alternates ------------------------------------ */

/* A store of one page, rows given by the test. */
typedef struct {
    const char *url;
    const char *alternates;
} fake_row;

typedef struct {
    sm_store st;
    const fake_row *rows;
    int n;
} fake_store;

static apr_status_t fake_page_urls(sm_store *st, const char *base,
                                   apr_int64_t page, sm_url_fn *fn,
                                   void *baton)
{
    fake_store *f = (fake_store *)st;
    apr_status_t rv = APR_SUCCESS;
    int i;
    (void)base; (void)page;

    for (i = 0; i < f->n && rv == APR_SUCCESS; i++)
        rv = fn(baton, f->rows[i].url, apr_time_from_sec(1700000000),
                f->rows[i].alternates);
    return rv;
}

static sm_store_ops fake_ops;

typedef struct {
    apr_pool_t *p;
    char *text;
} collected;

static apr_status_t collect(void *baton, const char *data, apr_size_t len)
{
    collected *c = baton;
    c->text = apr_pstrcat(c->p, c->text, apr_pstrmemdup(c->p, data, len),
                          NULL);
    return APR_SUCCESS;
}

#define BASE "https://www.example"

/* The <urlset> of the rows, page 1 declaring xml_bytes; the bound is
 * max_bytes (0: the protocol's). */
static const char *urlset(apr_pool_t *p, const fake_row *rows, int n,
                          apr_int64_t xml_bytes, apr_int64_t max_bytes,
                          sm_doc_stats *stats)
{
    fake_store f;
    sm_site_info *info = site_with(p, 1);
    sm_doc_site site = { BASE, "/sitemap.xml", NULL, NULL, NULL, max_bytes,
                         0 };
    collected c = { p, "" };
    sm_doc doc;

    memset(&f, 0, sizeof(f));
    fake_ops.page_urls = fake_page_urls;
    f.st.ops = &fake_ops;
    f.rows = rows;
    f.n = n;
    APR_ARRAY_IDX(info->pages, 0, sm_page_info).xml_bytes = xml_bytes;
    sm_doc_choose(info, 1, &doc);
    assert_int_equal(sm_doc_write(p, &f.st, &site, &doc, info, collect, &c,
                                  stats), APR_SUCCESS);
    return c.text;
}

#define LASTMOD "<lastmod>2023-11-14T22:13:20+00:00</lastmod>"
#define XHTML " xmlns:xhtml=\"http://www.w3.org/1999/xhtml\""
#define LINK(lang, href) \
    "<xhtml:link rel=\"alternate\" hreflang=\"" lang "\" href=\"" href "\"/>"

static void test_alternates_written(void **state)
{
    apr_pool_t *p = ((unit_ctx *)*state)->pool;
    static const fake_row rows[] = {
        { "/a", "de https://www.example/de/a\n"
                "fr https://fr.example/l'a?x=1&y=2" },
        { "/b", NULL },
        /* a tampered row: only its last entry is one a writer stores */
        { "/c", "DE https://www.example/c\n"
                "fr https://www.example/\"><evil/>\n"
                "it javascript:alert(1)\n"
                "es http://WWW.example/c\n"
                "xx\n"
                "\n"
                "en_us https://www.example/c\n"
                "en https://www.example/c" },
        /* only invalid ones: the <url> is as without any */
        { "/d", "<bad> https://www.example/d" },
    };
    sm_doc_stats stats;
    const char *xml = urlset(p, rows, 4, 4 * 300, 0, &stats);

    assert_string_equal(xml,
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        "<urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\"" XHTML ">\n"
        "<url><loc>https://www.example/a</loc>" LASTMOD
        LINK("de", "https://www.example/de/a")
        LINK("fr", "https://fr.example/l&apos;a?x=1&amp;y=2") "</url>\n"
        "<url><loc>https://www.example/b</loc>" LASTMOD "</url>\n"
        "<url><loc>https://www.example/c</loc>" LASTMOD
        LINK("en", "https://www.example/c") "</url>\n"
        "<url><loc>https://www.example/d</loc>" LASTMOD "</url>\n"
        "</urlset>\n");
    assert_int_equal(stats.urls, 4);
    assert_int_equal(stats.alternates, 3);
    assert_int_equal(stats.alternates_skipped, 8);
    assert_int_equal(stats.alternates_dropped, 0);
    assert_int_equal(stats.urls_dropped, 0);
}

/* A document never passes its bound: alternates get what the page's
 * entries leave, URL by URL; a URL whose alternates do not fit keeps its
 * <loc>. */
static void test_alternates_bound(void **state)
{
    apr_pool_t *p = ((unit_ctx *)*state)->pool;
    fake_row *rows = apr_pcalloc(p, 200 * sizeof(*rows));
    apr_int64_t xml_bytes = 0, max;
    sm_doc_stats stats;
    const char *xml;
    int i, j;

    /* 200 URLs of 64 long alternates each (about 9 KB a URL) */
    for (i = 0; i < 200; i++) {
        apr_array_header_t *lines = apr_array_make(p, 64, sizeof(char *));
        rows[i].url = apr_psprintf(p, "/page-%d", i);
        for (j = 0; j < 64; j++)
            APR_ARRAY_PUSH(lines, char *) = apr_psprintf(
                p, "%sl%c%c https://www.example/%d/a-rather-long-path-to-an-"
                "alternate-page-of-this-one?x=1&y=%d", j ? "\n" : "",
                'a' + j % 26, 'a' + j / 26, j, i);
        rows[i].alternates = apr_array_pstrcat(p, lines, '\0');
        xml_bytes += (apr_int64_t)strlen(BASE)
                     + (apr_int64_t)sm_xml_escaped_len(rows[i].url)
                     + SM_ENTRY_OVERHEAD;
    }
    /* everything fits */
    xml = urlset(p, rows, 200, xml_bytes, 0, &stats);
    assert_int_equal(stats.alternates, 200 * 64);
    assert_int_equal(stats.urls_dropped, 0);
    for (max = xml_bytes + 1000; max <= 1000000; max += 123457) {
        xml = urlset(p, rows, 200, xml_bytes, max, &stats);
        assert_true((apr_int64_t)strlen(xml) <= max);
        assert_int_equal(stats.urls, 200);
        assert_true(stats.urls_dropped > 0);
        assert_int_equal(stats.alternates_dropped, stats.urls_dropped * 64);
        assert_int_equal(stats.alternates + stats.alternates_dropped,
                         200 * 64);
        for (i = 0; i < 200; i++)       /* every <loc> is there */
            assert_non_null(strstr(xml, apr_psprintf(
                p, "<loc>" BASE "/page-%d</loc>", i)));
    }
    /* the protocol's bound with a page near it: no room left */
    xml = urlset(p, rows, 2, SM_PAGE_MAX_BYTES - 300, 0, &stats);
    assert_int_equal(stats.urls, 2);
    assert_int_equal(stats.alternates, 0);
    assert_int_equal(stats.urls_dropped, 2);
    assert_null(strstr(xml, "<xhtml:link"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_choose, unit_setup, unit_teardown),
        cmocka_unit_test_setup_teardown(test_index_limit, unit_setup, unit_teardown),
        cmocka_unit_test_setup_teardown(test_alternates_written, unit_setup, unit_teardown),
        cmocka_unit_test_setup_teardown(test_alternates_bound, unit_setup, unit_teardown),
    };
    int rc;

    apr_initialize();
    rc = cmocka_run_group_tests(tests, NULL, NULL);
    apr_terminate();
    return rc;
}
