/* Unit tests of the choice of a sitemap document (sm_document.c), the one
 * the handler and sitemapctl export share. */
#include "unit.h"

#include <apr_tables.h>
#include <string.h>

#include "sm_document.h"

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
    assert_int_equal(doc.kind, SM_DOC_ROOT);
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_choose, unit_setup, unit_teardown),
        cmocka_unit_test_setup_teardown(test_index_limit, unit_setup, unit_teardown),
    };
    int rc;

    apr_initialize();
    rc = cmocka_run_group_tests(tests, NULL, NULL);
    apr_terminate();
    return rc;
}
