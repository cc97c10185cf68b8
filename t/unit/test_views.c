/* SPDX-License-Identifier: Apache-2.0 */
/* Unit tests of the views' core: the stylesheet processing instruction,
 * stylesheet URLs, .txt/.html document names, the HTML site map's paging
 * and the status page's JSON and metrics escaping. */
#include "unit.h"

#include "util/sm_html.h"
#include "serve/sm_html_map.h"
#include "serve/sm_sitemap.h"
#include "serve/sm_status.h"
#include "serve/sm_xml.h"

#include <string.h>

static void test_stylesheet_pi(void **state)
{
    unit_ctx *u = *state;
    sink_buf b = { "", 0, 0, u->pool };
    sm_xml_writer *w = sm_xml_writer_create(u->pool, to_buf, &b);

    sm_xml_set_stylesheet(w, "/s.css?a=1&b=2");
    sm_xml_index_begin(w);
    assert_int_equal(sm_xml_index_end(w), APR_SUCCESS);
    assert_string_equal(b.data,
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        "<?xml-stylesheet type=\"text/css\" href=\"/s.css?a=1&amp;b=2\"?>\n"
        "<sitemapindex xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\n"
        "</sitemapindex>\n");
    b.data = "";
    b.len = 0;
    w = sm_xml_writer_create(u->pool, to_buf, &b);
    sm_xml_urlset_begin(w);
    sm_xml_flush(w);
    assert_non_null(strstr(b.data, "?>\n<urlset"));
    assert_null(strstr(b.data, "xml-stylesheet"));      /* none by default */
}

static void test_stylesheet_urls_and_names(void **state)
{
    unit_ctx *u = *state;

    assert_null(sm_stylesheet_url_check("/sitemap.css"));
    assert_null(sm_stylesheet_url_check("https://cdn.example.com/a.css?v=1&x"));
    assert_non_null(sm_stylesheet_url_check(""));
    assert_non_null(sm_stylesheet_url_check("/a b.css"));
    assert_non_null(sm_stylesheet_url_check("/a\".css"));
    assert_non_null(sm_stylesheet_url_check("/a<b.css"));
    assert_non_null(sm_stylesheet_url_check("/a?>b.css"));
    assert_non_null(sm_stylesheet_url_check("/\xc3\xa9.css"));
    assert_string_equal(sm_stylesheet_default(u->pool, "/sitemap.xml"),
                        "/sitemap.css");
    assert_string_equal(sm_stylesheet_default(u->pool, "/maps/site.xml"),
                        "/maps/sitemap.css");

    assert_null(sm_doc_path_check("/sitemap.txt", ".txt"));
    assert_non_null(sm_doc_path_check("/sitemap.xml", ".txt"));
    assert_non_null(sm_doc_path_check("/.html", ".html"));
    assert_null(sm_doc_path_check("/a/site-map.html", ".html"));
    assert_string_equal(sm_page_path(u->pool, "/sitemap.txt", 3),
                        "/sitemap-3.txt");
    assert_string_equal(sm_page_path(u->pool, "/m/map.html", 12),
                        "/m/map-12.html");
    assert_int_equal(sm_name_parse("/sitemap.txt", "/sitemap.txt"),
                     SM_NAME_INDEX);
    assert_int_equal(sm_name_parse("/sitemap.txt", "/sitemap-7.txt"), 7);
    assert_int_equal(sm_name_parse("/sitemap.txt", "/sitemap-7.xml"),
                     SM_NAME_NOT_OURS);
    assert_int_equal(sm_name_parse("/sitemap.txt", "/sitemap-07.txt"),
                     SM_NAME_BAD);
    assert_int_equal(sm_name_parse("/map.html", "/map-2.html"), 2);
    assert_int_equal(sm_name_parse("/map.html", "/map-2.htm"),
                     SM_NAME_NOT_OURS);
    /* Still the XML's own. */
    assert_int_equal(sm_name_parse("/sitemap.xml", "/sitemap-2.txt"),
                     SM_NAME_NOT_OURS);
}

static sm_site_info site_of(apr_pool_t *p, const apr_int64_t *counts, int n)
{
    sm_site_info info;
    int i;

    memset(&info, 0, sizeof(info));
    info.pages = apr_array_make(p, n, sizeof(sm_page_info));
    for (i = 0; i < n; i++) {
        sm_page_info *pi = apr_array_push(info.pages);
        memset(pi, 0, sizeof(*pi));
        pi->page = i + 1;
        pi->url_count = counts[i];
    }
    return info;
}

static void test_html_locate(void **state)
{
    unit_ctx *u = *state;
    static const apr_int64_t counts[] = { 3, 1999, 50000 };
    sm_site_info info = site_of(u->pool, counts, 3), none;
    sm_html_page hp;

    /* 52,002 URLs: 27 pages of 2,000 (the last of 2). */
    assert_true(sm_html_locate(&info, 1, &hp));
    assert_int_equal(hp.total, 27);
    assert_int_equal(hp.store_page, 1);
    assert_int_equal(hp.skip, 0);
    assert_true(sm_html_locate(&info, 2, &hp));
    assert_int_equal(hp.store_page, 2);             /* URL 2000: page 2 */
    assert_int_equal(hp.skip, 1997);
    assert_true(sm_html_locate(&info, 3, &hp));
    assert_int_equal(hp.store_page, 3);
    assert_int_equal(hp.skip, 4000 - 2002);
    assert_true(sm_html_locate(&info, 27, &hp));
    assert_false(sm_html_locate(&info, 28, &hp));
    assert_false(sm_html_locate(&info, 0, &hp));
    none = site_of(u->pool, counts, 0);
    assert_true(sm_html_locate(&none, 1, &hp));     /* the empty site */
    assert_int_equal(hp.store_page, 0);
    assert_int_equal(hp.total, 1);
    assert_false(sm_html_locate(&none, 2, &hp));
}

/* The navigation of a site map of many pages: first, previous, this,
 * next, last; of few pages: every page.  (No URL is read: store_page 0.) */
static void test_html_navigation(void **state)
{
    unit_ctx *u = *state;
    sink_buf b = { "", 0, 0, u->pool };
    sm_html_site site = { "https://h.example", "/map.html", "/s.css",
                          "h.example" };
    sm_html_page hp = { 15, 40, 0, 0 };
    sm_site_info info;
    static const apr_int64_t none[] = { 0 };

    info = site_of(u->pool, none, 0);
    assert_int_equal(sm_html_write(u->pool, NULL, &site, &info, &hp, to_buf,
                                   &b), APR_SUCCESS);
    assert_non_null(strstr(b.data, "<a href=\"/map.html\">First</a>"));
    assert_non_null(strstr(b.data, "<a href=\"/map-14.html\">Previous</a>"));
    assert_non_null(strstr(b.data, "<span aria-current=\"page\">15</span>"));
    assert_non_null(strstr(b.data, "<a href=\"/map-16.html\">Next</a>"));
    assert_non_null(strstr(b.data, "<a href=\"/map-40.html\">Last</a>"));
    assert_null(strstr(b.data, "map-17.html"));
    assert_null(strstr(b.data, "rel=\"canonical\""));  /* not page 1 */
    assert_non_null(strstr(b.data, "(page 15 of 40)</title>"));

    b.data = "";
    b.len = 0;
    hp.number = 1;
    hp.total = 3;
    assert_int_equal(sm_html_write(u->pool, NULL, &site, &info, &hp, to_buf,
                                   &b), APR_SUCCESS);
    assert_non_null(strstr(b.data, "<span aria-current=\"page\">1</span>\n"
                                   "<a href=\"/map-2.html\">2</a>\n"
                                   "<a href=\"/map-3.html\">3</a>"));
    assert_non_null(strstr(b.data, "<link rel=\"canonical\" "
                                   "href=\"https://h.example/map.html\">"));
    assert_non_null(strstr(b.data, "<link rel=\"stylesheet\" href=\"/s.css\">"));
}

/* A store of one page of FAKE_URLS URLs, each with 64 alternates of 70
 * bytes: 2.7 MB of alternates, more than an HTML page keeps. */
#define FAKE_URLS 600
#define FAKE_ALTS_ROOM (64 * 96)

/* URL i's stored alternates; returns their length. */
static apr_size_t fake_alternates(char *alts, int i)
{
    char *o = alts;
    int k;

    for (k = 0; k < 64; k++)
        o += apr_snprintf(o, FAKE_ALTS_ROOM - (apr_size_t)(o - alts),
                          "%sl%c%c https://x.example/%04d/l%c%c/"
                          "a-long-translated-path-of-the-page.html",
                          k ? "\n" : "", 'a' + k / 26, 'a' + k % 26, i,
                          'a' + k / 26, 'a' + k % 26);
    return (apr_size_t)(o - alts);
}

static apr_status_t fake_page_urls(sm_store *st, const char *base,
                                   apr_int64_t page, sm_url_fn *fn,
                                   void *baton)
{
    char url[64], alts[FAKE_ALTS_ROOM];
    apr_status_t rv;
    int i;
    (void)st; (void)base; (void)page;

    for (i = 0; i < FAKE_URLS; i++) {
        apr_snprintf(url, sizeof(url), "/p/%04d.html", i);
        fake_alternates(alts, i);
        if ((rv = fn(baton, url, 0, alts)) != APR_SUCCESS)
            return rv;
    }
    return APR_SUCCESS;
}

static apr_status_t fake_page_titles(sm_store *st, const char *base,
                                     apr_int64_t page, sm_title_fn *fn,
                                     void *baton)
{
    (void)st; (void)base; (void)page; (void)fn; (void)baton;
    return APR_ENOTIMPL;
}

static int count_of(const char *s, const char *needle)
{
    int n = 0;
    while ((s = strstr(s, needle))) {
        n++;
        s++;
    }
    return n;
}

/* An HTML page keeps at most SM_HTML_ALTERNATES_BYTES of alternates: the
 * first links show theirs, the later ones none, and the page says so. */
static void test_html_alternates_bounded(void **state)
{
    unit_ctx *u = *state;
    sink_buf b = { "", 0, 0, u->pool };
    sm_html_site site = { "https://x.example", "/map.html", NULL,
                          "x.example" };
    static const apr_int64_t counts[] = { FAKE_URLS };
    sm_site_info info = site_of(u->pool, counts, 1);
    sm_store_ops ops;
    sm_store st;
    sm_html_page hp;
    char alts[FAKE_ALTS_ROOM];
    int shown;

    memset(&ops, 0, sizeof(ops));
    ops.page_urls = fake_page_urls;
    ops.page_titles = fake_page_titles;
    memset(&st, 0, sizeof(st));
    st.ops = &ops;
    assert_true(sm_html_locate(&info, 1, &hp));
    assert_int_equal(sm_html_write(u->pool, &st, &site, &info, &hp, to_buf,
                                   &b), APR_SUCCESS);
    shown = count_of(b.data, "<small class=\"alternates\">");
    /* 4,543 bytes a URL: the first 461 fit in 2 MiB */
    assert_int_equal(shown, SM_HTML_ALTERNATES_BYTES
                            / fake_alternates(alts, 0));
    assert_int_equal(count_of(b.data, " hreflang=\""), 64 * shown);
    assert_non_null(strstr(b.data, "<a href=\"https://x.example/0000/lcl/"
                                   "a-long-translated-path-of-the-page.html\""
                                   " hreflang=\"lcl\" lang=\"lcl\">lcl</a>"
                                   "</small></li>"));
    assert_null(strstr(b.data, "https://x.example/0599/"));
    assert_non_null(strstr(b.data, "the XML sitemap lists them all"));
}

/* sm_url_shown: UTF-8 decoded, the rest as stored. */
static void test_url_shown(void **state)
{
    unit_ctx *u = *state;

    assert_string_equal(sm_url_shown(u->pool, "/caf%C3%A9/"),
                        "/caf\xc3\xa9/");
    assert_string_equal(sm_url_shown(u->pool, "/%E2%82%AC%F0%9F%98%80%c3%a9"),
                        "/\xe2\x82\xac\xf0\x9f\x98\x80\xc3\xa9");
    /* ASCII escapes, invalid UTF-8 (Latin-1, overlong, surrogate, cut
     * short, a stray continuation byte), hidden characters: as stored */
    assert_string_equal(sm_url_shown(u->pool, "/a%20b%2F%3C%25?q=%26"),
                        "/a%20b%2F%3C%25?q=%26");
    assert_string_equal(sm_url_shown(u->pool,
                                     "/%E9t%C3%A9/%C0%AF/%ED%A0%80/%C3/%A9"),
                        "/%E9t\xc3\xa9/%C0%AF/%ED%A0%80/%C3/%A9");
    assert_string_equal(sm_url_shown(u->pool, "/%C3%A9%E2%80%AEx%C2%85%EF%BB%BF"),
                        "/\xc3\xa9%E2%80%AEx%C2%85%EF%BB%BF");
    assert_string_equal(sm_url_shown(u->pool, "%C3%A"), "%C3%A");
    assert_string_equal(sm_url_shown(u->pool, ""), "");
}

/* A few URLs of one store page, with their alternates. */
static const char *const few_urls[][2] = {
    { "/caf%C3%A9/menu%20du%20jour.html",
      "fr https://x.example/caf%C3%A9/menu%20du%20jour.html\n"
      "en https://x.example/cafe/menu.html\n"
      "x-default https://x.example/" },
    { "/caf%C3%A9/%E9t%C3%A9/x.html", "" },
    { "/cafe/menu.html",
      "fr https://x.example/caf%C3%A9/menu%20du%20jour.html\n"
      "en https://x.example/cafe/menu.html" },
    { "/only-self.html", "de https://x.example/only-self.html" },
    { "/r%E2%80%AEl/a.html", "" },
};

static apr_status_t few_page_urls(sm_store *st, const char *base,
                                  apr_int64_t page, sm_url_fn *fn,
                                  void *baton)
{
    apr_status_t rv;
    size_t i;
    (void)st; (void)base; (void)page;

    for (i = 0; i < sizeof(few_urls) / sizeof(few_urls[0]); i++)
        if ((rv = fn(baton, few_urls[i][0], 0, few_urls[i][1]))
            != APR_SUCCESS)
            return rv;
    return APR_SUCCESS;
}

/* Headings, directories and untitled links show decoded UTF-8 (links
 * keep the stored href); a page's alternates leave the page out, carry
 * hreflang and lang (x-default: no lang); a page whose only alternate is
 * itself shows no "also in". */
static void test_html_shown_paths_and_alternates(void **state)
{
    unit_ctx *u = *state;
    sink_buf b = { "", 0, 0, u->pool };
    sm_html_site site = { "https://x.example", "/map.html", NULL,
                          "x.example" };
    static const apr_int64_t counts[] = { 5 };
    sm_site_info info = site_of(u->pool, counts, 1);
    sm_store_ops ops;
    sm_store st;
    sm_html_page hp;

    memset(&ops, 0, sizeof(ops));
    ops.page_urls = few_page_urls;
    ops.page_titles = fake_page_titles;
    memset(&st, 0, sizeof(st));
    st.ops = &ops;
    assert_true(sm_html_locate(&info, 1, &hp));
    assert_int_equal(sm_html_write(u->pool, &st, &site, &info, &hp, to_buf,
                                   &b), APR_SUCCESS);
    assert_non_null(strstr(b.data, "\">/caf\xc3\xa9/</h2>"));
    assert_null(strstr(b.data, ">/caf%C3%A9/</h2>"));
    assert_non_null(strstr(b.data, "<span class=\"dir\">%E9t\xc3\xa9/</span>"));
    assert_non_null(strstr(b.data, "\">/r%E2%80%AEl/</h2>"));
    assert_non_null(strstr(b.data,
        "<li><a href=\"https://x.example/caf%C3%A9/menu%20du%20jour.html\">"
        "/caf\xc3\xa9/menu%20du%20jour.html</a> <small class=\"alternates\">"
        "also in <a href=\"https://x.example/cafe/menu.html\" hreflang=\"en\""
        " lang=\"en\">en</a>, <a href=\"https://x.example/\" "
        "hreflang=\"x-default\">default</a></small></li>"));
    assert_non_null(strstr(b.data,
        "<li><a href=\"https://x.example/cafe/menu.html\">/cafe/menu.html</a>"
        " <small class=\"alternates\">also in <a href=\"https://x.example/"
        "caf%C3%A9/menu%20du%20jour.html\" hreflang=\"fr\" lang=\"fr\">fr</a>"
        "</small></li>"));
    assert_non_null(strstr(b.data,
        "<li><a href=\"https://x.example/only-self.html\">/only-self.html"
        "</a></li>"));
    assert_int_equal(count_of(b.data, "<small"), 2);
}

static void test_status_escaping_and_days(void **state)
{
    unit_ctx *u = *state;
    sink_buf b = { "", 0, 0, u->pool };
    sm_status_site s;
    apr_array_header_t *added = apr_array_make(u->pool, 2,
                                               sizeof(sm_day_count));
    apr_time_t now = apr_time_from_sec(100 * 86400 + 5);
    sm_day_count *d;

    memset(&s, 0, sizeof(s));
    s.base = "http://h.example";
    s.db_path = "/var/db/a\"b\\c.db";
    s.have_counters = 1;
    s.counters.written = 7;
    s.counters.last_fault = (apr_uint64_t)now;
    strcpy(s.counters.last_fault_why, "disk \"full\"\n");
    d = apr_array_push(added);
    d->day = 99;
    d->added = 3;
    d->removed = 0;
    d = apr_array_push(added);
    d->day = 10;                                        /* too old */
    d->added = 8;
    d->removed = 9;
    sm_day_removed(added, 100, 4);                      /* today */
    sm_status_days(&s, added, now);
    assert_int_equal(s.added[SM_STATUS_CHART_DAYS - 2], 3);
    assert_int_equal(s.removed[SM_STATUS_CHART_DAYS - 1], 4);
    assert_int_equal(s.first_day, 100 - SM_STATUS_CHART_DAYS + 1);
    assert_string_equal(sm_status_health(&s), "failing");

    assert_int_equal(sm_status_json(u->pool, &s, 1, now, to_buf, &b),
                     APR_SUCCESS);
    assert_non_null(strstr(b.data, "\"store\":\"/var/db/a\\u0022b\\u005cc.db\""));
    assert_non_null(strstr(b.data,
                           "\"last_fault_reason\":\"disk \\u0022full\\u0022\\u000a\""));
    assert_non_null(strstr(b.data, "\"written\":7,"));
    b.data = "";
    b.len = 0;
    assert_int_equal(sm_status_metrics(u->pool, &s, 1, to_buf, &b),
                     APR_SUCCESS);
    assert_non_null(strstr(b.data, "sitemap_recorder_written_total{store="
                                   "\"/var/db/a\\\"b\\\\c.db\"} 7\n"));
}

/* The latest URLs left out: in the JSON (detail only when there is one)
 * and the HTML, escaped. */
static void test_status_left_out(void **state)
{
    unit_ctx *u = *state;
    sink_buf b = { "", 0, 0, u->pool };
    sm_status_site s;
    sm_verdict_row *v;
    apr_time_t now = apr_time_from_sec(1800000000);

    memset(&s, 0, sizeof(s));
    s.base = "http://h.example";
    s.db_path = "/db";
    s.left_out = apr_array_make(u->pool, 2, sizeof(sm_verdict_row));
    v = apr_array_push(s.left_out);
    v->url = "/a?x=<1>";
    v->verdict = "removed";
    v->reason = "canonical names another URL";
    v->detail = "http://h.example/\"b\"";
    v->status = 200;
    v->at = now;
    v = apr_array_push(s.left_out);
    v->url = "/c";
    v->verdict = "left out";
    v->reason = "session";
    v->detail = NULL;
    v->status = 200;
    v->at = now;
    assert_int_equal(sm_status_json(u->pool, &s, 1, now, to_buf, &b),
                     APR_SUCCESS);
    assert_non_null(strstr(b.data, "\"left_out\":[{\"url\":\"/a?x=<1>\","
                                   "\"verdict\":\"removed\","
                                   "\"reason\":\"canonical names another URL\","
                                   "\"detail\":\"http://h.example/\\u0022b"
                                   "\\u0022\",\"status\":200,\"at\":\"2027-"));
    assert_non_null(strstr(b.data, "{\"url\":\"/c\",\"verdict\":\"left out\","
                                   "\"reason\":\"session\",\"status\":200,"));
    b.data = "";
    b.len = 0;
    assert_int_equal(sm_status_html(u->pool, &s, 1, now, to_buf, &b),
                     APR_SUCCESS);
    assert_non_null(strstr(b.data, "<li>/a?x=&lt;1&gt;: removed, canonical "
                                   "names another URL (http://h.example/"
                                   "&quot;b&quot;) <small>"));
    assert_non_null(strstr(b.data, "<li>/c: left out, session <small>"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_stylesheet_pi, unit_setup, unit_teardown),
        cmocka_unit_test_setup_teardown(test_stylesheet_urls_and_names, unit_setup, unit_teardown),
        cmocka_unit_test_setup_teardown(test_html_locate, unit_setup, unit_teardown),
        cmocka_unit_test_setup_teardown(test_html_navigation, unit_setup, unit_teardown),
        cmocka_unit_test_setup_teardown(test_html_alternates_bounded, unit_setup, unit_teardown),
        cmocka_unit_test_setup_teardown(test_url_shown, unit_setup, unit_teardown),
        cmocka_unit_test_setup_teardown(test_html_shown_paths_and_alternates, unit_setup, unit_teardown),
        cmocka_unit_test_setup_teardown(test_status_escaping_and_days, unit_setup, unit_teardown),
        cmocka_unit_test_setup_teardown(test_status_left_out, unit_setup, unit_teardown),
    };
    apr_initialize();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
