/* SPDX-License-Identifier: Apache-2.0 */
/* Unit tests of the news sitemap's and llms.txt's writers (sm_news.c):
 * the directives' checks, Markdown escapes, URLs that would end a link,
 * sections and their order, the news sitemap with and without articles. */
#include "unit.h"

#include "serve/sm_news.h"

#define POOL(state) (((unit_ctx *)*(state))->pool)

static apr_status_t to_array(void *baton, const char *data, apr_size_t len)
{
    apr_array_header_t *a = baton;
    while (len--)
        APR_ARRAY_PUSH(a, char) = *data++;
    return APR_SUCCESS;
}

static const char *text_of(apr_array_header_t *a)
{
    APR_ARRAY_PUSH(a, char) = '\0';
    return a->elts;
}

static void test_checks(void **state)
{
    (void)state;
    assert_null(sm_news_language_problem("en"));
    assert_null(sm_news_language_problem("fil"));
    assert_null(sm_news_language_problem("zh-cn"));
    assert_null(sm_news_language_problem("zh-tw"));
    assert_non_null(sm_news_language_problem("e"));
    assert_non_null(sm_news_language_problem("engl"));
    assert_non_null(sm_news_language_problem("EN"));
    assert_non_null(sm_news_language_problem("zh-hk"));
    assert_non_null(sm_news_language_problem("e1"));
    assert_null(sm_news_text_problem("The Times"));
    assert_non_null(sm_news_text_problem(""));
    assert_non_null(sm_news_text_problem("   "));
    assert_non_null(sm_news_text_problem("a\nb"));
    assert_non_null(sm_news_text_problem("a\x7f"));
}

static void test_markdown(void **state)
{
    apr_pool_t *p = POOL(state);

    assert_string_equal(sm_md_text(p, "a [b] (c) \\ *d* _e_ `f` <g>\nh"),
                        "a \\[b\\] \\(c\\) \\\\ \\*d\\* \\_e\\_ \\`f\\` "
                        "\\<g\\> h");
    assert_string_equal(sm_md_url(p, "http://x.example/a(b)/c d<e>[f]\\g"),
                        "http://x.example/a%28b%29/c%20d%3Ce%3E%5Bf%5D%5Cg");
    assert_string_equal(sm_md_url(p, "/caf\xc3\xa9?q=1&r=%20"),
                        "/caf%C3%A9?q=1&r=%20");
}

static sm_llms_item item(const char *url, const char *title,
                         const char *desc)
{
    sm_llms_item it = { url, title, desc, 0 };
    return it;
}

static void test_llms_sections(void **state)
{
    apr_pool_t *p = POOL(state);
    apr_array_header_t *items = apr_array_make(p, 8, sizeof(sm_llms_item));
    apr_array_header_t *out = apr_array_make(p, 1024, 1);

    APR_ARRAY_PUSH(items, sm_llms_item) = item("/z/b", "B", NULL);
    APR_ARRAY_PUSH(items, sm_llms_item) = item("/about", "About", "Us");
    APR_ARRAY_PUSH(items, sm_llms_item) = item("/a/x?y=/z", NULL, "");
    APR_ARRAY_PUSH(items, sm_llms_item) = item("/", "Home [1]", "Start");
    APR_ARRAY_PUSH(items, sm_llms_item) = item("/q?p=/a/b", "Q", NULL);
    APR_ARRAY_PUSH(items, sm_llms_item) = item("/z/a(1)", "A", NULL);
    assert_int_equal(sm_llms_write(p, to_array, out, "https://s.example",
                                   "Site (x)", NULL, items), APR_SUCCESS);
    assert_string_equal(text_of(out),
        "# Site \\(x\\)\n"
        "\n## Pages\n\n"
        "- [Home \\[1\\]](https://s.example/): Start\n"
        "- [About](https://s.example/about): Us\n"
        "- [Q](https://s.example/q?p=/a/b)\n"
        "\n## a\n\n"
        "- [/a/x?y=/z](https://s.example/a/x?y=/z)\n"
        "\n## z\n\n"
        "- [A](https://s.example/z/a%281%29)\n"
        "- [B](https://s.example/z/b)\n");
}

static void test_news_documents(void **state)
{
    apr_pool_t *p = POOL(state);
    apr_array_header_t *items = apr_array_make(p, 2, sizeof(sm_news_item));
    apr_array_header_t *out = apr_array_make(p, 1024, 1);
    sm_news_item *it = apr_array_push(items);
    sm_llms_item filler = item("/", NULL, NULL);

    it->url = "/n/a&b";
    it->title = "A <b> & \"c\"";
    it->published = apr_time_from_sec(1795687200);
    assert_int_equal(sm_news_write(p, to_array, out, "https://s.example",
                                   "T & T", "en", items, &filler),
                     APR_SUCCESS);
    assert_string_equal(text_of(out),
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        "<urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\" "
        "xmlns:news=\"http://www.google.com/schemas/sitemap-news/0.9\">\n"
        "<url><loc>https://s.example/n/a&amp;b</loc><news:news>"
        "<news:publication><news:name>T &amp; T</news:name>"
        "<news:language>en</news:language></news:publication>"
        "<news:publication_date>2026-11-26T10:00:00+00:00"
        "</news:publication_date><news:title>A &lt;b&gt; &amp; "
        "&quot;c&quot;</news:title></news:news></url>\n</urlset>\n");
    /* no article: the filler page, plain */
    apr_array_clear(items);
    out = apr_array_make(p, 1024, 1);
    filler.lastmod = apr_time_from_sec(1795687200);
    assert_int_equal(sm_news_write(p, to_array, out, "https://s.example",
                                   "T", "en", items, &filler), APR_SUCCESS);
    assert_non_null(strstr(text_of(out),
        "<url><loc>https://s.example/</loc>"
        "<lastmod>2026-11-26T10:00:00+00:00</lastmod></url>\n</urlset>\n"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_checks),
        cmocka_unit_test_setup_teardown(test_markdown, unit_setup,
                                        unit_teardown),
        cmocka_unit_test_setup_teardown(test_llms_sections, unit_setup,
                                        unit_teardown),
        cmocka_unit_test_setup_teardown(test_news_documents, unit_setup,
                                        unit_teardown),
    };
    apr_initialize();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
