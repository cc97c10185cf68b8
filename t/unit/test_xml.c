/* SPDX-License-Identifier: Apache-2.0 */
/* Unit tests of the XML writer, document names and annotations. */
#include "unit.h"

#include "serve/sm_sitemap.h"
#include "serve/sm_xml.h"

#include <string.h>

static void test_urlset_escapes(void **state)
{
    unit_ctx *u = *state;
    sink_buf b = { "", 0, 0, u->pool };
    sm_xml_writer *w = sm_xml_writer_create(u->pool, to_buf, &b);

    sm_xml_urlset_begin(w);
    sm_xml_url(w, "http://h.example", "/a&b'c\"d<e>f", apr_time_from_sec(0),
               NULL, NULL);
    sm_xml_url(w, "http://h.example", "/x", apr_time_from_sec(1795323556),
               "daily", "0.8");
    assert_int_equal(sm_xml_urlset_end(w), APR_SUCCESS);
    assert_string_equal(b.data,
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        "<urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\" xmlns:xhtml=\"http://www.w3.org/1999/xhtml\">\n"
        "<url><loc>http://h.example/a&amp;b&apos;c&quot;d&lt;e&gt;f</loc></url>\n"
        "<url><loc>http://h.example/x</loc>"
        "<lastmod>2026-11-22T04:59:16+00:00</lastmod>"
        "<changefreq>daily</changefreq><priority>0.8</priority></url>\n"
        "</urlset>\n");
    assert_int_equal(sm_xml_bytes(w), (apr_off_t)b.len);
}

static void test_index_and_streaming(void **state)
{
    unit_ctx *u = *state;
    sink_buf b = { "", 0, 0, u->pool };
    sm_xml_writer *w = sm_xml_writer_create(u->pool, to_buf, &b);
    int i;

    sm_xml_index_begin(w);
    for (i = 1; i <= 2000; i++)
        sm_xml_index_entry(w, "https://h.example", "/sitemap-1.xml",
                           apr_time_from_sec(1795323556));
    assert_int_equal(sm_xml_index_end(w), APR_SUCCESS);
    /* Written in pieces through a fixed buffer, not at the end. */
    assert_true(b.calls > 5);
    assert_non_null(strstr(b.data, "<sitemapindex xmlns="));
    assert_string_equal(b.data + b.len - 16, "</sitemapindex>\n");
}

static void test_w3c_datetime(void **state)
{
    char buf[SM_W3C_DATETIME_LEN];
    (void)state;
    sm_w3c_datetime(buf, apr_time_from_sec(0));
    assert_string_equal(buf, "1970-01-01T00:00:00+00:00");
    sm_w3c_datetime(buf, apr_time_from_sec(1795323556) + 999999);
    assert_string_equal(buf, "2026-11-22T04:59:16+00:00");
}

static void test_names(void **state)
{
    unit_ctx *u = *state;
    const char *sp = "/sitemap.xml";

    assert_null(sm_sitemap_path_check(sp));
    assert_null(sm_sitemap_path_check("/maps/site.xml"));
    assert_non_null(sm_sitemap_path_check("sitemap.xml"));
    assert_non_null(sm_sitemap_path_check("/sitemap"));
    assert_non_null(sm_sitemap_path_check("/.xml"));
    assert_non_null(sm_sitemap_path_check("/a b.xml"));
    assert_non_null(sm_sitemap_path_check("/x%41.xml"));
    assert_non_null(sm_sitemap_path_check("/a/../s.xml"));
    /* only what a URL path holds literally */
    {
        static const char *const bad[] = {
            "/a[1].xml", "/a]b.xml", "/a\tb.xml", "/a\x01.xml",
            "/caf\xc3\xa9.xml", "/a%zz.xml", "/a%.xml", "/a?b.xml",
            "/a#b.xml", "/a\"b.xml", "/a<b.xml", "/a\\b.xml", "/a^b.xml",
            "/a`b.xml", "/a{b.xml", "/a|b.xml", "/a\x7f.xml", NULL
        };
        int i;
        for (i = 0; bad[i]; i++)
            if (!sm_sitemap_path_check(bad[i]))
                fail_msg("SitemapPath '%s' accepted", bad[i]);
        assert_null(sm_sitemap_path_check("/a-b_c~d!$&'()*+,;=:@e.xml"));
    }

    assert_string_equal(sm_page_path(u->pool, sp, 12), "/sitemap-12.xml");
    assert_string_equal(sm_page_path(u->pool, "/m/s.xml", 1), "/m/s-1.xml");

    assert_int_equal(sm_name_parse(sp, "/sitemap.xml"), SM_NAME_INDEX);
    assert_int_equal(sm_name_parse(sp, "/sitemap-1.xml"), 1);
    assert_int_equal(sm_name_parse(sp, "/sitemap-123456789.xml"), 123456789);
    assert_int_equal(sm_name_parse(sp, "/sitemap-0.xml"), SM_NAME_BAD);
    assert_int_equal(sm_name_parse(sp, "/sitemap-01.xml"), SM_NAME_BAD);
    assert_int_equal(sm_name_parse(sp, "/sitemap-x.xml"), SM_NAME_BAD);
    assert_int_equal(sm_name_parse(sp, "/sitemap-.xml"), SM_NAME_BAD);
    assert_int_equal(sm_name_parse(sp, "/sitemap-1234567890.xml"), SM_NAME_BAD);
    assert_int_equal(sm_name_parse(sp, "/sitemap-1.xml/extra"), SM_NAME_BAD);
    assert_int_equal(sm_name_parse(sp, "/sitemap-guide.html"),
                     SM_NAME_NOT_OURS);
    assert_int_equal(sm_name_parse(sp, "/sitemap.xml.bak"), SM_NAME_NOT_OURS);
    assert_int_equal(sm_name_parse(sp, "/index.html"), SM_NAME_NOT_OURS);
    assert_int_equal(sm_name_parse(sp, "/sitemap-2.xmlx"), SM_NAME_NOT_OURS);
    /* Shorter than the first two bytes, or differing only there. */
    assert_int_equal(sm_name_parse(sp, "/"), SM_NAME_NOT_OURS);
    assert_int_equal(sm_name_parse(sp, ""), SM_NAME_NOT_OURS);
    assert_int_equal(sm_name_parse(sp, "/Sitemap.xml"), SM_NAME_NOT_OURS);
    assert_int_equal(sm_name_parse("/s.xml", "/s.xml"), SM_NAME_INDEX);
    assert_int_equal(sm_name_parse("/s.xml", "/s-3.xml"), 3);

    /* The gzip forms (renditions). */
    {
        int gz = -1;
        char *longer = apr_pcalloc(u->pool, 3000);
        assert_int_equal(sm_name_parse_gz(sp, "/sitemap.xml", &gz),
                         SM_NAME_INDEX);
        assert_int_equal(gz, 0);
        assert_int_equal(sm_name_parse_gz(sp, "/sitemap.xml.gz", &gz),
                         SM_NAME_INDEX);
        assert_int_equal(gz, 1);
        assert_int_equal(sm_name_parse_gz(sp, "/sitemap-7.xml.gz", &gz), 7);
        assert_int_equal(gz, 1);
        assert_int_equal(sm_name_parse_gz(sp, "/sitemap-0.xml.gz", &gz),
                         SM_NAME_BAD);
        assert_int_equal(gz, 0);
        assert_int_equal(sm_name_parse_gz(sp, "/sitemap.xml.gzip", &gz),
                         SM_NAME_NOT_OURS);
        assert_int_equal(sm_name_parse_gz(sp, "/other.xml.gz", &gz),
                         SM_NAME_NOT_OURS);
        assert_int_equal(sm_name_parse_gz(sp, ".xml.gz", &gz),
                         SM_NAME_NOT_OURS);
        assert_int_equal(sm_name_parse_gz(sp, "/sitemap-2.xml.gz/x", &gz),
                         SM_NAME_NOT_OURS);
        /* a SitemapPath longer than the stack buffer */
        memset(longer, 'a', 2000);
        longer[0] = '/';
        memcpy(longer + 2000, ".xml", 5);
        assert_int_equal(sm_name_parse_gz(longer,
                                          apr_pstrcat(u->pool, longer, ".gz",
                                                      NULL), &gz),
                         SM_NAME_INDEX);
        assert_int_equal(gz, 1);
    }
}

static void test_annotations(void **state)
{
    unit_ctx *u = *state;
    apr_array_header_t *list = apr_array_make(u->pool, 2,
                                              sizeof(sm_annotation));
    sm_annotation *a;
    const char *err;

    assert_null(sm_changefreq_check("weekly"));
    assert_non_null(sm_changefreq_check("Weekly"));
    assert_non_null(sm_changefreq_check("fortnightly"));
    assert_string_equal(sm_priority_canon(u->pool, "0.8"), "0.8");
    assert_string_equal(sm_priority_canon(u->pool, "1"), "1.0");
    assert_string_equal(sm_priority_canon(u->pool, ".5"), "0.5");
    assert_string_equal(sm_priority_canon(u->pool, "0"), "0.0");
    assert_null(sm_priority_canon(u->pool, "1.1"));
    assert_null(sm_priority_canon(u->pool, "2"));
    assert_null(sm_priority_canon(u->pool, "-0.1"));
    assert_null(sm_priority_canon(u->pool, "0.85"));
    assert_null(sm_priority_canon(u->pool, "x"));
    assert_null(sm_priority_canon(u->pool, ""));
    assert_null(sm_priority_canon(u->pool, "."));

    a = apr_array_push(list);
    a->re = sm_regex_compile(u->pool, "^/news/", &err);
    a->value = "hourly";
    a = apr_array_push(list);
    a->re = sm_regex_compile(u->pool, "^/", &err);
    a->value = "monthly";
    assert_string_equal(sm_annotation_find(list, "/news/1"), "hourly");
    assert_string_equal(sm_annotation_find(list, "/about"), "monthly");
    assert_null(sm_annotation_find(NULL, "/about"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_urlset_escapes, unit_setup, unit_teardown),
        cmocka_unit_test_setup_teardown(test_index_and_streaming, unit_setup, unit_teardown),
        cmocka_unit_test(test_w3c_datetime),
        cmocka_unit_test_setup_teardown(test_names, unit_setup, unit_teardown),
        cmocka_unit_test_setup_teardown(test_annotations, unit_setup, unit_teardown),
    };
    apr_initialize();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
