/* SPDX-License-Identifier: Apache-2.0 */
/* Unit tests of what the head reader keeps for the news sitemap and
 * llms.txt (sm_head_news.h): the description, the publication time from
 * article:published_time or JSON-LD, ISO 8601 times.  Every document is
 * also fed split at every position: the answer must never change. */
#include "unit.h"

#include <string.h>

#include "head/sm_head.h"
#include "head/sm_head_news.h"
#include "util/sm_html.h"

#define POOL(state) (((unit_ctx *)*(state))->pool)

/* "description|published" of doc fed with a cut at cut (len: whole). */
static const char *fed(apr_pool_t *p, const char *doc, apr_size_t cut)
{
    sm_head *h = sm_head_create(p);
    apr_size_t len = strlen(doc);
    const sm_head_result *r;

    if (!sm_head_feed(h, doc, cut))
        sm_head_feed(h, doc + cut, len - cut);
    r = sm_head_result_get(h);
    return apr_psprintf(p, "%s|%" APR_INT64_T_FMT,
                        r->description ? r->description : "-",
                        (apr_int64_t)apr_time_sec(r->published));
}

static const char *scan(apr_pool_t *p, const char *doc)
{
    apr_size_t len = strlen(doc), i;
    const char *whole = fed(p, doc, len);
    sm_head *h = sm_head_create(p);
    const sm_head_result *r;

    for (i = 0; i <= len; i++)
        assert_string_equal(whole, fed(p, doc, i));
    for (i = 0; i < len; i++)
        if (sm_head_feed(h, doc + i, 1))
            break;
    r = sm_head_result_get(h);
    assert_string_equal(whole, apr_psprintf(p, "%s|%" APR_INT64_T_FMT,
                        r->description ? r->description : "-",
                        (apr_int64_t)apr_time_sec(r->published)));
    return whole;
}

/* 2026-11-26T10:00:00Z */
#define T0 "1795687200"

static void test_iso8601(void **state)
{
    (void)state;
    assert_int_equal(apr_time_sec(sm_iso8601_time("2026-11-26T10:00:00Z",
                                                  20)), 1795687200);
#define SEC(s) (apr_int64_t)apr_time_sec(sm_iso8601_time(s, strlen(s)))
    assert_int_equal(SEC("2026-11-26T11:00:00+01:00"), 1795687200);
    assert_int_equal(SEC("2026-11-26T05:30:00-0430"), 1795687200);
    assert_int_equal(SEC(" 2026-11-26T10:00:00.123456Z\n"), 1795687200);
    assert_int_equal(SEC("2026-11-26T10:00"), 1795687200);
    assert_int_equal(SEC("2026-11-26t12:00+02"), 1795687200);
    assert_int_equal(SEC("2026-11-26"), 1795687200 - 36000);
    assert_int_equal(SEC("2024-02-29"), 1709164800);
    assert_int_equal(SEC("2023-02-29"), 0);
    assert_int_equal(SEC("2026-13-01"), 0);
    assert_int_equal(SEC("2026-11-26T24:00Z"), 0);
    assert_int_equal(SEC("2026-11-26T10:00:00Zjunk"), 0);
    assert_int_equal(SEC("2026-11-26 10:00"), 0);
    assert_int_equal(SEC("26-11-2026"), 0);
    assert_int_equal(SEC("1969-12-31"), 0);
    assert_int_equal(SEC("2026-11-26T10:00:00."), 0);
    assert_int_equal(SEC(""), 0);
#undef SEC
}

static void test_description(void **state)
{
    apr_pool_t *p = POOL(state);
    char doc[2048], *d;
    const char *r;
    int i;

    assert_string_equal(scan(p, "<head><meta name=description content="
                                "\"  A  &amp; B\n\tC &#x263A; \"><title>t"
                                "</title></head>"),
                        "A & B C \xe2\x98\xba|0");
    assert_string_equal(scan(p, "<META CONTENT='x' NAME='Description'>"
                                "<meta name=description content=second>"),
                        "x|0");
    assert_string_equal(scan(p, "<meta name=description>"
                                "<meta name=\"og:description\" content=y>"),
                        "-|0");
    /* cut after 300 characters, never inside one */
    d = doc + sprintf(doc, "<meta name=description content=\"");
    for (i = 0; i < 310; i++) {
        memcpy(d, "\xc3\xa9", 2);
        d += 2;
    }
    strcpy(d, "\">");
    r = fed(p, doc, strlen(doc));
    assert_int_equal(strlen(r), 600 + 2);
    assert_memory_equal(r + 598, "\xc3\xa9|0", 4);
    /* past the head: not read */
    assert_string_equal(scan(p, "<body><meta name=description content=x>"),
                        "-|0");
    /* plain text is taken as it is (a word at a time): anything else not,
     * wherever in a word of eight bytes it is */
    assert_string_equal(sm_head_text(p, "a b", 3, 0), "a b");
    assert_string_equal(sm_head_text(p, "abcdefg  h", 10, 0), "abcdefg h");
    assert_string_equal(sm_head_text(p, "abcdefgh  ijklmnop", 18, 0),
                        "abcdefgh ijklmnop");
    assert_string_equal(sm_head_text(p, "abcdefgh ijk\x7fmnopqrs", 20, 0),
                        "abcdefgh ijkmnopqrs");
    assert_string_equal(sm_head_text(p, "abcdefgh\tijklmnop", 17, 0),
                        "abcdefgh ijklmnop");
    assert_string_equal(sm_head_text(p, " abcdefghijk", 12, 0),
                        "abcdefghijk");
    assert_string_equal(sm_head_text(p, "abcdefghijk ", 12, 0),
                        "abcdefghijk");
    assert_string_equal(sm_head_text(p, "abcdefgh x &amp; y", 18, 0),
                        "abcdefgh x & y");
    memset(doc, 'a', 320);
    doc[299] = ' ';
    r = sm_head_text(p, doc, 320, 300);
    assert_int_equal(strlen(r), 299);
    assert_int_equal(strlen(sm_head_text(p, doc, 300, 300)), 299);
    doc[319] = '\t';                    /* the general path: the same */
    assert_string_equal(sm_head_text(p, doc, 320, 300), r);
    doc[299] = 'a';
    assert_int_equal(strlen(sm_head_text(p, doc, 320, 300)), 300);
}

static void test_published_meta(void **state)
{
    apr_pool_t *p = POOL(state);

    assert_string_equal(scan(p, "<meta property=\"article:published_time\" "
                                "content=\"2026-11-26T11:00:00+01:00\">"),
                        "-|" T0);
    assert_string_equal(scan(p, "<meta PROPERTY=Article:Published_Time "
                                "content=2026-11-26T10:00:00Z>"
                                "<meta property=article:published_time "
                                "content=2020-01-01>"),
                        "-|" T0);
    assert_string_equal(scan(p, "<meta property=article:modified_time "
                                "content=2026-11-26T10:00:00Z>"),
                        "-|0");
    assert_string_equal(scan(p, "<meta property=article:published_time "
                                "content=yesterday>"),
                        "-|0");
    /* the meta wins over JSON-LD, wherever it is */
    assert_string_equal(scan(p, "<script type=application/ld+json>"
                                "{\"@type\":\"Article\",\"datePublished\":"
                                "\"2020-01-01\"}</script>"
                                "<meta property=article:published_time "
                                "content=2026-11-26T10:00:00Z>"),
                        "-|" T0);
}

static void test_published_jsonld(void **state)
{
    apr_pool_t *p = POOL(state);
    char *big;

    assert_string_equal(scan(p, "<head><script type=\"application/ld+json\">"
                                "{\"@context\":\"https://schema.org\","
                                "\"@type\":\"NewsArticle\",\"headline\":"
                                "\"a </b> \\\"q\\\"\",\"datePublished\":"
                                "\"2026-11-26T10:00:00Z\"}</script>"
                                "</head>"),
                        "-|" T0);
    /* in a @graph, @type an array, a schema.org URL, after other objects */
    assert_string_equal(scan(p, "<script TYPE=' Application/LD+JSON '>"
                                "{\"@graph\":[{\"@type\":\"WebPage\","
                                "\"datePublished\":\"2020-01-01\"},"
                                "{\"@type\":[\"Thing\","
                                "\"http://schema.org/BlogPosting\"],"
                                "\"author\":{\"@type\":\"Person\","
                                "\"datePublished\":\"2021-01-01\"},"
                                "\"datePublished\":\"2026-11-26T12:00:00"
                                "+02:00\"}]}</script>"),
                        "-|" T0);
    /* not JSON-LD, or no article */
    assert_string_equal(scan(p, "<script>{\"@type\":\"Article\","
                                "\"datePublished\":\"2026-11-26\"}</script>"),
                        "-|0");
    assert_string_equal(scan(p, "<script type=application/json>"
                                "{\"@type\":\"Article\",\"datePublished\":"
                                "\"2026-11-26\"}</script>"),
                        "-|0");
    assert_string_equal(scan(p, "<script type=application/ld+json>"
                                "{\"@type\":\"Event\",\"datePublished\":"
                                "\"2026-11-26\"}</script>"),
                        "-|0");
    /* a second script is read when the first had none */
    assert_string_equal(scan(p, "<script type=application/ld+json>[1,2]"
                                "</script><script src=x.js></script>"
                                "<script type=application/ld+json>"
                                "{\"datePublished\":\"2026-11-26T10:00Z\","
                                "\"@type\":\"Article\"}</script>"),
                        "-|" T0);
    /* only the first 16 KiB of a script are read */
    big = apr_psprintf(p, "<script type=application/ld+json>{\"x\":\"%s\","
                       "\"@type\":\"Article\",\"datePublished\":"
                       "\"2026-11-26\"}</script>",
                       apr_pstrdup(p, memset(apr_pcalloc(p, 17000), 'a',
                                             16999)));
    assert_string_equal(fed(p, big, strlen(big)), "-|0");
    /* nesting beyond 32 levels stops the reading, bounded */
    assert_int_equal(sm_jsonld_published("[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["
                                         "[[[[[[[[[{}", 41), 0);
    assert_int_equal(apr_time_sec(sm_jsonld_published(
        "{\"@type\":\"Article\",\"datePublished\":\"2026-11-26T10:00Z\"}",
        56)), 1795687200);
    /* strings read in place and copied (escapes, 64 bytes and longer)
     * give the same: an escape drops its backslash, a long one is cut */
#define LD(type, date) sm_jsonld_published("{\"@t\\ype\":\"" type "\"," \
        "\"datePublished\":\"" date "\"}", strlen("{\"@t\\ype\":\"" \
        type "\",\"datePublished\":\"" date "\"}"))
    assert_int_equal(apr_time_sec(LD("http:\\/\\/schema.org\\/Article",
                                     "2026-11-26T10:00Z")), 1795687200);
    assert_int_equal(apr_time_sec(LD("Article", "2026-11-26T10:00\\Z")),
                     1795687200);
    assert_int_equal(LD("https://vocabulary.example/a-prefix-long-enough"
                        "-to-be-cut/Article", "2026-11-26T10:00Z"), 0);
    assert_int_equal(apr_time_sec(LD("https://vocabulary.example/a-prefix-"
                                     "not-cut/Article", "2026-11-26")),
                     1795651200);
#undef LD
}

/* The general path, as sm_head_text had it alone: decoded, cleaned,
 * blanks collapsed. */
static const char *ref_text(apr_pool_t *p, const char *v, apr_size_t len)
{
    char *t = sm_utf8_clean(p, sm_html_decode(p, v, len)), *i, *o;
    int space = 0;

    for (i = o = t; *i; i++) {
        if (*i == ' ' || *i == '\t' || *i == '\n' || *i == '\r'
            || *i == '\f') {
            space = 1;
            continue;
        }
        if (space && o > t)
            *o++ = ' ';
        space = 0;
        *o++ = *i;
    }
    *o = '\0';
    return t;
}

/* Text plain but for its references (a CMS title's "&#8211;") is decoded
 * and taken as it is when that needs no cleaning: the same as the general
 * path on references that give blanks, controls, U+FFFD, spaces at the
 * ends or side by side, at every place in a word. */
static void test_referenced_text(void **state)
{
    apr_pool_t *p = POOL(state);
    static const char *const parts[] = {
        "a", "b c", " ", "&#8211;", "&amp;", "&#32;", "&#9;", "&#x0a;",
        "&#0;", "&#xD800;", "&nbsp;", "&#127;", "&#1;", "&lt", "&x;",
        "&", "&#128512;", "xyzw"
    };
    unsigned long seed = 37;
    char v[128];
    int k, n;

    assert_string_equal(sm_head_text(p, "Page 1 &#8211; Bench Blog", 25, 0),
                        "Page 1 \xe2\x80\x93 Bench Blog");
    assert_string_equal(sm_head_text(p, "a &#32; b", 9, 0), "a b");
    assert_string_equal(sm_head_text(p, "a&#32;", 6, 0), "a");
    assert_string_equal(sm_head_text(p, "&#9;a", 5, 0), "a");
    assert_string_equal(sm_head_text(p, "a&#1;b", 6, 0), "ab");
    for (k = 0; k < 20000; k++) {
        size_t len = 0;
        for (n = 0; n < 1 + (int)(seed >> 60); n++) {
            const char *part;
            seed = seed * 6364136223846793005UL + 1442695040888963407UL;
            part = parts[(seed >> 33) % (sizeof(parts) / sizeof(parts[0]))];
            if (len + strlen(part) >= sizeof(v))
                break;
            memcpy(v + len, part, strlen(part));
            len += strlen(part);
        }
        if (strcmp(sm_head_text(p, v, len, 0), ref_text(p, v, len)) != 0)
            fail_msg("\"%.*s\": \"%s\", not \"%s\"", (int)len, v,
                     sm_head_text(p, v, len, 0), ref_text(p, v, len));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_iso8601),
        cmocka_unit_test_setup_teardown(test_description, unit_setup,
                                        unit_teardown),
        cmocka_unit_test_setup_teardown(test_published_meta, unit_setup,
                                        unit_teardown),
        cmocka_unit_test_setup_teardown(test_published_jsonld, unit_setup,
                                        unit_teardown),
        cmocka_unit_test_setup_teardown(test_referenced_text, unit_setup,
                                        unit_teardown),
    };
    apr_initialize();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
