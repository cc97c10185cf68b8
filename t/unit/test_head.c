/* SPDX-License-Identifier: Apache-2.0 */
/* Unit tests of sm_head: the streaming <head> scanner and the canonical's
 * resolution.  Every document is also fed split at every position, byte
 * by byte, and in random pieces: the answer must never change. */
#include "unit.h"

#include <string.h>

#include "head/sm_alternates.h"
#include "head/sm_head.h"

/* ---- helpers --------------------------------------------------------------- */

typedef struct {
    int done, truncated, noindex;
    const char *canonical, *base_href, *title, *alts;
} answer;

static const char *str_or(const char *s) { return s ? s : "(null)"; }

static answer summarise(apr_pool_t *p, sm_head *h)
{
    const sm_head_result *r = sm_head_result_get(h);
    answer a;
    const char *alts = "";
    int i;

    for (i = 0; i < r->alternates->nelts; i++) {
        const sm_head_alternate *x =
            &APR_ARRAY_IDX(r->alternates, i, sm_head_alternate);
        alts = apr_pstrcat(p, alts, i ? " " : "", x->hreflang, "=", x->href,
                           NULL);
    }
    a.done = r->done;
    a.truncated = r->truncated;
    a.noindex = r->noindex;
    a.canonical = str_or(r->canonical);
    a.base_href = str_or(r->base_href);
    a.title = str_or(r->title);
    a.alts = alts;
    return a;
}

static void assert_same(answer a, answer b)
{
    assert_int_equal(a.done, b.done);
    assert_int_equal(a.truncated, b.truncated);
    assert_int_equal(a.noindex, b.noindex);
    assert_string_equal(a.canonical, b.canonical);
    assert_string_equal(a.base_href, b.base_href);
    assert_string_equal(a.title, b.title);
    assert_string_equal(a.alts, b.alts);
}

/* Feed doc in pieces cut at the given offsets (sorted, ascending). */
static answer feed_cuts(apr_pool_t *p, const char *doc, apr_size_t len,
                        const apr_size_t *cuts, int ncuts)
{
    sm_head *h = sm_head_create(p);
    apr_size_t at = 0;
    int i;

    for (i = 0; i <= ncuts; i++) {
        apr_size_t end = i < ncuts ? cuts[i] : len;
        if (sm_head_feed(h, doc + at, end - at))
            break;
        at = end;
    }
    return summarise(p, h);
}

/* Scan doc whole, then split every way: the same answer each time.
 * Returns the answer. */
static answer scan(apr_pool_t *p, const char *doc)
{
    apr_size_t len = strlen(doc), i, cut[2];
    answer whole = feed_cuts(p, doc, len, NULL, 0);
    sm_head *h;
    unsigned seed = 1;
    int k;

    for (i = 0; i <= len; i++) {
        cut[0] = i;
        assert_same(whole, feed_cuts(p, doc, len, cut, 1));
    }
    h = sm_head_create(p);
    for (i = 0; i < len; i++)
        if (sm_head_feed(h, doc + i, 1))
            break;
    assert_same(whole, summarise(p, h));
    for (k = 0; k < 50 && len; k++) {
        seed = seed * 1103515245 + 12345;
        cut[0] = (seed >> 8) % (len + 1);
        seed = seed * 1103515245 + 12345;
        cut[1] = (seed >> 8) % (len + 1);
        if (cut[0] > cut[1]) {
            apr_size_t t = cut[0];
            cut[0] = cut[1];
            cut[1] = t;
        }
        assert_same(whole, feed_cuts(p, doc, len, cut, 2));
    }
    return whole;
}

#define POOL(state) (((unit_ctx *)*(state))->pool)

/* ---- meta robots ------------------------------------------------------------ */

static void test_meta_robots(void **state)
{
    apr_pool_t *p = POOL(state);
    static const char *const yes[] = {
        "<head><meta name=\"robots\" content=\"noindex\"></head>",
        "<HEAD><META NAME=ROBOTS CONTENT=NOINDEX></HEAD>",
        "<meta content='follow, NoIndex' name='robots'>",
        "<meta name=googlebot content=\"none\">",
        "<meta name=\" Robots \" content=\"index,follow,noindex\">",
        "<meta name=robots content=\"max-snippet:-1 noindex\"/>",
        "<meta\nname=robots\tcontent=noindex\n/>",
        "<meta name=robots content=&#110;oindex>",
        "\xEF\xBB\xBF<!DOCTYPE html><html><head><meta name=robots "
        "content=noindex>",
        "<meta name=robots content=noindex content=index>",
        NULL
    };
    static const char *const no[] = {
        "<meta name=robots content=\"index, follow\">",
        "<meta name=robots content=\"noindexx\">",
        "<meta name=bingbot content=noindex>",
        "<meta name=description content=noindex>",
        "<meta property=robots content=noindex>",
        "<meta name=robots>",
        "<meta name=robots content=index content=noindex>",
        "<!-- <meta name=robots content=noindex> -->",
        "<script>document.write('<meta name=robots content=noindex>')"
        "</script>",
        "<script>var s = \"</scrip\" + \"t><meta name=robots "
        "content=noindex>\";</script >",
        "<style>/* <meta name=robots content=noindex> */</style>",
        "<noscript><meta name=robots content=noindex></noscript>",
        "<template><meta name=robots content=noindex></template>",
        "<template><template></template><meta name=robots "
        "content=noindex></template>",
        "<textarea><meta name=robots content=noindex></textarea>",
        "<title><meta name=robots content=noindex></title>",
        "<head></head><meta name=robots content=noindex>",
        "<body><meta name=robots content=noindex>",
        "<div>x</div><meta name=robots content=noindex>",
        "<meta name=\"x\" data-a=\"<meta name=robots content=noindex>\">",
        "<link rel=x title='>'<meta name=robots content=noindex>>",
        NULL
    };
    int i;

    for (i = 0; yes[i]; i++) {
        answer a = scan(p, yes[i]);
        if (!a.noindex)
            fail_msg("not found in: %s", yes[i]);
    }
    for (i = 0; no[i]; i++) {
        answer a = scan(p, no[i]);
        if (a.noindex)
            fail_msg("wrongly found in: %s", no[i]);
    }
}

/* ---- comments and other markup ----------------------------------------------- */

static void test_comments(void **state)
{
    apr_pool_t *p = POOL(state);
    static const struct { const char *doc; int noindex; } cases[] = {
        {"<!-- a -- b --><meta name=robots content=noindex>", 1},
        {"<!-- x --!><meta name=robots content=noindex>", 1},
        {"<!---><meta name=robots content=noindex>", 1},
        {"<!--><meta name=robots content=noindex>-->", 1},
        {"<!-- -> <meta name=robots content=noindex> -->", 0},
        {"<!-- a->b <meta name=robots content=noindex> -->", 0},
        {"<!---->\n<meta name=robots content=noindex>", 1},
        {"<!DOCTYPE html><meta name=robots content=noindex>", 1},
        {"<?xml version='1.0'?><meta name=robots content=noindex>", 1},
        {"<![CDATA[ x ]]><meta name=robots content=noindex>", 1},
        {"<!-x><meta name=robots content=noindex>", 1},
        {"a < b <meta name=robots content=noindex>", 1},
        {"</ ><meta name=robots content=noindex>", 1},
        {"</><meta name=robots content=noindex>", 1},
        {"<script></script><meta name=robots content=noindex>", 1},
        {"<script src=x.js></SCRIPT><meta name=robots content=noindex>", 1},
        {"<script>a</scriptx><meta name=robots content=noindex>", 0},
        {"<script>a<</script/><meta name=robots content=noindex>", 1},
        {"<style>a{}</style\n><meta name=robots content=noindex>", 1},
        {"<template><div></div></template><meta name=robots "
         "content=noindex>", 1},
        {"<template><body></template><meta name=robots content=noindex>", 1},
        {"</p><meta name=robots content=noindex>", 1},
        {"<plaintext><meta name=robots content=noindex>", 0},
        {"<img src=x><meta name=robots content=noindex>", 0},
        {"</body><meta name=robots content=noindex>", 0},
        {"<meta a=b=c\"><meta name=robots content=noindex>", 1},
        {"<meta a=\"x>y\"><meta name=robots content=noindex>", 1},
        {"<meta a='x\">y'><meta name=robots content=noindex>", 1},
        {NULL, 0}
    };
    int i;

    for (i = 0; cases[i].doc; i++) {
        answer a = scan(p, cases[i].doc);
        if (a.noindex != cases[i].noindex)
            fail_msg("noindex %d, expected %d: %s", a.noindex,
                     cases[i].noindex, cases[i].doc);
    }
}

static void test_stops(void **state)
{
    apr_pool_t *p = POOL(state);
    answer a;
    char *big;

    a = scan(p, "<html><head><title>t</title></head><body>");
    assert_true(a.done);
    assert_false(a.truncated);
    a = scan(p, "<html><head><title>t</title>");
    assert_false(a.done);
    a = scan(p, "<html><head><title>t</title><BODY class=x>");
    assert_true(a.done);

    /* The limit: a meta just past 64 KiB is not read. */
    big = apr_palloc(p, SM_HEAD_LIMIT + 100);
    memset(big, ' ', SM_HEAD_LIMIT + 100);
    memcpy(big, "<head>", 6);
    memcpy(big + SM_HEAD_LIMIT - 40, "<meta name=robots content=noindex>",
           34);
    big[SM_HEAD_LIMIT + 99] = '\0';
    a = feed_cuts(p, big, strlen(big), NULL, 0);
    assert_true(a.noindex);
    assert_true(a.done);
    assert_true(a.truncated);
    memcpy(big + SM_HEAD_LIMIT - 40, "                                  ",
           34);
    memcpy(big + SM_HEAD_LIMIT - 10, "<meta name=robots content=noindex>",
           34);
    a = feed_cuts(p, big, strlen(big), NULL, 0);
    assert_false(a.noindex);
    assert_true(a.truncated);

    /* A tag longer than the bound is skipped whole, and what follows is
     * read. */
    big = apr_palloc(p, SM_HEAD_TAG_MAX + 200);
    strcpy(big, "<meta name=robots content=\"noindex");
    memset(big + strlen(big), 'x', SM_HEAD_TAG_MAX);
    strcpy(big + 34 + SM_HEAD_TAG_MAX, "\"><link rel=canonical href=/c>");
    a = feed_cuts(p, big, strlen(big), NULL, 0);
    assert_false(a.noindex);
    assert_string_equal(a.canonical, "/c");
}

/* ---- links ------------------------------------------------------------------ */

static void test_links(void **state)
{
    apr_pool_t *p = POOL(state);
    answer a;

    a = scan(p, "<link rel=canonical href=\"https://ex.com/a?x=1&amp;y=2\">");
    assert_string_equal(a.canonical, "https://ex.com/a?x=1&y=2");
    a = scan(p, "<LINK HREF='/a&#x27;b&#39;c' REL='Canonical'>");
    assert_string_equal(a.canonical, "/a'b'c");
    a = scan(p, "<link rel=\"alternate canonical\" href=\" /a \">");
    assert_string_equal(a.canonical, "/a");
    a = scan(p, "<link rel=canonical href=/a><link rel=canonical href=/a>");
    assert_string_equal(a.canonical, "/a");
    /* Conflicting canonicals cancel out, even when a third agrees. */
    a = scan(p, "<link rel=canonical href=/a><link rel=canonical href=/b>"
                "<link rel=canonical href=/a>");
    assert_string_equal(a.canonical, "(null)");
    /* An empty unquoted value ends at the tag's '>' (found by fuzzing:
     * the whole tag and the tag split after '=' disagreed). */
    a = scan(p, "<link rel=canonical href=>");
    assert_string_equal(a.canonical, "");
    a = scan(p, "<link rel=canonical href= >");
    assert_string_equal(a.canonical, "");
    a = scan(p, "<link rel=canonical>");
    assert_string_equal(a.canonical, "(null)");
    a = scan(p, "<link rel=canonicalx href=/a>");
    assert_string_equal(a.canonical, "(null)");
    a = scan(p, "<link rel=canonical href=\"/a?b&copy=1&amp=2&lt;\">");
    assert_string_equal(a.canonical, "/a?b&copy=1&amp=2<");
    a = scan(p, "<base href='http://ex.com/d/'><base href=/x>");
    assert_string_equal(a.base_href, "http://ex.com/d/");

    a = scan(p,
             "<link rel=alternate hreflang=en href=https://ex.com/en/>"
             "<link hreflang='x-default' rel='alternate' "
             "href='https://ex.com/'>"
             "<link rel=alternate hreflang=de href=/de/>"            /* rel. */
             "<link rel=alternate hreflang=fr href=ftp://ex.com/fr>" /* ftp */
             "<link rel=alternate hreflang='e n' href=https://ex.com/x>"
             "<link rel=alternate hreflang=EN href=https://ex.com/en2>"
             "<link rel=stylesheet hreflang=it href=https://ex.com/it>"
             "<link rel=alternate type=application/rss+xml "
             "href=https://ex.com/feed>"
             "<link rel=alternate hreflang=pt-BR "
             "href='https://ex.com/pt?a=1&amp;b=2'>");
    assert_string_equal(a.alts, "en=https://ex.com/en/ "
                        "x-default=https://ex.com/ "
                        "pt-BR=https://ex.com/pt?a=1&b=2");
}

static void test_alternates_bounded(void **state)
{
    apr_pool_t *p = POOL(state);
    const char *doc = "";
    sm_head *h;
    int i;

    for (i = 0; i < SM_HEAD_MAX_ALTERNATES + 10; i++)
        doc = apr_psprintf(p, "%s<link rel=alternate hreflang=en-l%d "
                           "href=http://ex.com/%d>", doc, i, i);
    h = sm_head_create(p);
    sm_head_feed(h, doc, strlen(doc));
    assert_int_equal(sm_head_result_get(h)->alternates->nelts,
                     SM_HEAD_MAX_ALTERNATES);

    /* What is no language tag takes no room (sm_hreflang_canon). */
    doc = "";
    for (i = 0; i < SM_HEAD_MAX_ALTERNATES + 10; i++)
        doc = apr_psprintf(p, "%s<link rel=alternate hreflang=l%d "
                           "href=http://ex.com/%d>", doc, i, i);
    doc = apr_pstrcat(p, doc, "<link rel=alternate hreflang=de "
                      "href=http://ex.com/de>", NULL);
    assert_string_equal(scan(p, doc).alts, "de=http://ex.com/de");
}

static void test_title(void **state)
{
    apr_pool_t *p = POOL(state);
    answer a;

    a = scan(p, "<title>\n  A &amp; B &ndash; <b> </TITLE ><title>2</title>");
    assert_string_equal(a.title, "A & B \xE2\x80\x93 <b>");
    a = scan(p, "<title>a</tit</title>");
    assert_string_equal(a.title, "a</tit");
    a = scan(p, "<title>a<x</title>");
    assert_string_equal(a.title, "a<x");
    a = scan(p, "<template><title>no</title></template><title>yes</title>");
    assert_string_equal(a.title, "yes");
    /* Valid UTF-8 whatever the charset, no control bytes, and still no
     * doubled or outer space once they are gone (fuzz_head). */
    a = scan(p, "<title>Caf\xE9 \xFF\xFE ok</title>");
    assert_string_equal(a.title, "Caf\xEF\xBF\xBD \xEF\xBF\xBD ok");
    a = scan(p, "<title>\x01 a \x02 &#1; b \x7F</title>");
    assert_string_equal(a.title, "a b");
    a = scan(p, "<title>\xE2\x82 cut</title>");
    assert_string_equal(a.title, "\xEF\xBF\xBD cut");
}

static void test_entities(void **state)
{
    apr_pool_t *p = POOL(state);
    answer a;

    a = scan(p, "<link rel=canonical href='&#233;&#xE9;&#X1F600;&#0;"
                "&#x110000;&bogus;&amp&ampx&#;&'>");
    assert_string_equal(a.canonical, "\xC3\xA9\xC3\xA9\xF0\x9F\x98\x80"
                        "\xEF\xBF\xBD\xEF\xBF\xBD&bogus;&&ampx&#;&");
}

/* ---- pages shaped like what CMSs write ------------------------------------- */

static const char wordpress[] =
    "\xEF\xBB\xBF<!DOCTYPE html>\n<html lang=\"en-US\">\n<head>\n"
    "<meta charset=\"UTF-8\">\n"
    "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
    "<link rel=\"profile\" href=\"https://gmpg.org/xfn/11\">\n"
    "<!-- This site is optimized with the Yoast SEO plugin v21.1 - "
    "https://yoast.com/wordpress/plugins/seo/ -->\n"
    "<title>Hello world! &#8211; My Blog</title>\n"
    "<meta name=\"robots\" content=\"index, follow, max-image-preview:large,"
    " max-snippet:-1, max-video-preview:-1\" />\n"
    "<link rel=\"canonical\" href=\"https://blog.example.com/2023/hello-"
    "world/\" />\n"
    "<meta property=\"og:locale\" content=\"en_US\" />\n"
    "<meta property=\"og:title\" content=\"Hello world! - My Blog\" />\n"
    "<script type=\"application/ld+json\" class=\"yoast-schema-graph\">"
    "{\"@context\":\"https://schema.org\",\"@graph\":[{\"@type\":\"WebPage\","
    "\"name\":\"<meta name=robots content=noindex>\"}]}</script>\n"
    "<!-- / Yoast SEO plugin. -->\n"
    "<link rel='dns-prefetch' href='//s.w.org' />\n"
    "<link rel=\"alternate\" type=\"application/rss+xml\" title=\"My Blog "
    "&raquo; Feed\" href=\"https://blog.example.com/feed/\" />\n"
    "<script>\nwindow._wpemojiSettings = {\"baseUrl\":\"https:\\/\\/s.w.org"
    "\"};\n/*! This file is auto-generated */\n!function(i,n){if(a<b&&c>d)"
    "document.write(\"<link rel=canonical href=/wrong>\")}();\n</script>\n"
    "<style id='wp-emoji-styles-inline-css'>\nimg.wp-smiley, img.emoji "
    "{ display: inline !important; }\n</style>\n"
    "<link rel='stylesheet' id='wp-block-library-css' href='https://blog."
    "example.com/wp-includes/css/dist/block-library/style.min.css?ver=6.3'"
    " media='all' />\n"
    "<link rel=\"https://api.w.org/\" href=\"https://blog.example.com/wp-"
    "json/\" />\n"
    "<link rel=\"alternate\" hreflang=\"en\" href=\"https://blog.example.com"
    "/2023/hello-world/\" />\n"
    "<link rel=\"alternate\" hreflang=\"fr\" href=\"https://blog.example.com"
    "/fr/2023/bonjour/\" />\n"
    "<link rel=\"alternate\" hreflang=\"x-default\" href=\"https://blog."
    "example.com/2023/hello-world/\" />\n"
    "</head>\n<body class=\"post-template-default\">\n"
    "<meta name=robots content=noindex>\n</body></html>\n";

static const char drupal[] =
    "<!DOCTYPE html>\n<html lang=\"en\" dir=\"ltr\" prefix=\"og: https://"
    "ogp.me/ns#\">\n  <head>\n    <meta charset=\"utf-8\" />\n"
    "<noscript><style>form.antibot * :not(.antibot-message) { display: "
    "none !important; }</style>\n</noscript>"
    "<meta name=\"robots\" content=\"noindex, nofollow\" />\n"
    "<link rel=\"canonical\" href=\"/node/12\" />\n"
    "<link rel=\"shortlink\" href=\"/node/12\" />\n"
    "<meta name=\"Generator\" content=\"Drupal 10 (https://www.drupal.org)"
    "\" />\n<meta name=\"MobileOptimized\" content=\"width\" />\n"
    "<link rel=\"icon\" href=\"/core/themes/olivero/favicon.ico\" type="
    "\"image/vnd.microsoft.icon\" />\n"
    "<link rel=\"alternate\" hreflang=\"en\" href=\"https://d.example.org/"
    "node/12\" />\n"
    "<link rel=\"alternate\" hreflang=\"es\" href=\"https://d.example.org/"
    "es/node/12\" />\n"
    "    <title>Article | Drupal site</title>\n"
    "    <link rel=\"stylesheet\" media=\"all\" href=\"/sites/default/files/"
    "css/css_x.css?delta=0&amp;language=en&amp;theme=olivero\" />\n"
    "    <script type=\"application/json\" data-drupal-selector=\"drupal-"
    "settings-json\">{\"path\":{\"baseUrl\":\"\\/\"}}</script>\n"
    "  </head>\n  <body class=\"path-node\">\n";

static const char django[] =
    "<!doctype html>\n<html lang=\"de\">\n<head>\n"
    "  <meta charset=\"utf-8\">\n  <title>Produkte &middot; Shop</title>\n"
    "  <link rel=\"canonical\" href=\"http://shop.example.net:80/produkte/"
    "?page=2\">\n"
    "  <link rel=\"stylesheet\" href=\"/static/css/app.3f2a.css\">\n"
    "  <script src=\"/static/js/app.js\" defer></script>\n"
    "  <meta name=\"robots\" content=\"index,follow\">\n"
    "</head>\n<body>\n";

static void test_cms_heads(void **state)
{
    apr_pool_t *p = POOL(state);
    answer a;

    a = scan(p, wordpress);
    assert_true(a.done);
    assert_false(a.noindex);
    assert_string_equal(a.canonical,
                        "https://blog.example.com/2023/hello-world/");
    assert_string_equal(a.title, "Hello world! \xE2\x80\x93 My Blog");
    assert_string_equal(a.alts,
                        "en=https://blog.example.com/2023/hello-world/ "
                        "fr=https://blog.example.com/fr/2023/bonjour/ "
                        "x-default=https://blog.example.com/2023/hello-"
                        "world/");

    a = scan(p, drupal);
    assert_true(a.done);
    assert_true(a.noindex);
    assert_string_equal(a.canonical, "/node/12");
    assert_string_equal(a.title, "Article | Drupal site");
    assert_string_equal(a.alts, "en=https://d.example.org/node/12 "
                        "es=https://d.example.org/es/node/12");

    a = scan(p, django);
    assert_true(a.done);
    assert_false(a.noindex);
    assert_string_equal(a.title, "Produkte \xC2\xB7 Shop");
    assert_string_equal(a.canonical,
                        "http://shop.example.net:80/produkte/?page=2");
}

/* ---- resolving the canonical --------------------------------------------- */

static int names_other(apr_pool_t *p, const char *canonical,
                       const char *base_href, const char *target,
                       const char *url)
{
    sm_head_result r;
    apr_array_header_t *allow = apr_array_make(p, 1, sizeof(char *));

    APR_ARRAY_PUSH(allow, const char *) = "page";
    memset(&r, 0, sizeof(r));
    r.canonical = canonical;
    r.base_href = base_href;
    return sm_head_names_other(p, &r, "http://ex.com", target, url, allow);
}

static void test_canonical_self(void **state)
{
    apr_pool_t *p = POOL(state);

    /* The page itself, however written. */
    assert_false(names_other(p, NULL, NULL, "/a/b", "/a/b"));
    assert_false(names_other(p, "http://ex.com/a/b", NULL, "/a/b", "/a/b"));
    assert_false(names_other(p, "HTTP://EX.COM:80/a/b", NULL, "/a/b",
                             "/a/b"));
    assert_false(names_other(p, "//ex.com/a/b", NULL, "/a/b", "/a/b"));
    assert_false(names_other(p, "/a/b", NULL, "/a/b", "/a/b"));
    assert_false(names_other(p, "b", NULL, "/a/b", "/a/b"));
    assert_false(names_other(p, "./b#top", NULL, "/a/b", "/a/b"));
    assert_false(names_other(p, "../a/b", NULL, "/a/b?x", "/a/b"));
    assert_false(names_other(p, "", NULL, "/a/b", "/a/b"));
    assert_false(names_other(p, "#x", NULL, "/a/b", "/a/b"));
    assert_false(names_other(p, "/a/%62", NULL, "/a/b", "/a/b"));
    assert_false(names_other(p, "/a//b", NULL, "/a/b", "/a/b"));
    assert_false(names_other(p, "/a\\b", NULL, "/a/b", "/a/b"));
    assert_false(names_other(p, "/a/\tb", NULL, "/a/b", "/a/b"));
    assert_false(names_other(p, "?page=2", NULL, "/l?page=2", "/l?page=2"));
    assert_false(names_other(p, "b", "http://ex.com/a/", "/x/y", "/a/b"));
    assert_false(names_other(p, "/a/b", NULL, "http://ex.com/a/b", "/a/b"));
    /* Not an http(s) URL: ignored. */
    assert_false(names_other(p, "mailto:x@ex.com", NULL, "/a", "/a"));
    assert_false(names_other(p, "javascript:void(0)", NULL, "/a", "/a"));
    assert_false(names_other(p, "http://ex.com:99999/a", NULL, "/a", "/a"));

    /* Another URL. */
    assert_true(names_other(p, "/a/c", NULL, "/a/b", "/a/b"));
    assert_true(names_other(p, "/a/b/", NULL, "/a/b", "/a/b"));
    assert_true(names_other(p, "c", NULL, "/a/b", "/a/b"));
    assert_true(names_other(p, "https://ex.com/a/b", NULL, "/a/b", "/a/b"));
    assert_true(names_other(p, "http://www.ex.com/a/b", NULL, "/a/b",
                            "/a/b"));
    assert_true(names_other(p, "http://ex.com:8080/a/b", NULL, "/a/b",
                            "/a/b"));
    assert_true(names_other(p, "//other.org/a/b", NULL, "/a/b", "/a/b"));
    assert_true(names_other(p, "/a/b?utm=1", NULL, "/a/b", "/a/b"));
    assert_true(names_other(p, "?page=3", NULL, "/l?page=2", "/l?page=2"));
    assert_true(names_other(p, "/l", NULL, "/l?page=2", "/l?page=2"));
    assert_true(names_other(p, "/a/%zz", NULL, "/a/b", "/a/b"));
    assert_true(names_other(p, "b", "http://ex.com/x/", "/a/b", "/a/b"));
    assert_true(names_other(p, "b", "http://other.org/a/", "/a/b", "/a/b"));
}

/* The head's alternates as they are stored (sm_alternates.c): hreflang
 * lowercased and checked, hrefs normalised as stored URLs, duplicates and
 * what the site's query allow list refuses left out. */
static void test_alternates_stored_form(void **state)
{
    apr_pool_t *p = POOL(state);
    apr_array_header_t *allow = apr_array_make(p, 1, sizeof(char *));
    apr_array_header_t *back;
    const char *doc =
        "<link rel=alternate hreflang=EN-gb "
        "href='HTTPS://Www.Example:443/a/./b/../c%7e?lang=en#top'>"
        "<link rel=alternate hreflang=de href='http://www.example:80/de/%c3%a4%20x'>"
        "<link rel=alternate hreflang=fr href='https://fr.example/?q=1'>"
        "<link rel=alternate hreflang=X-Default href='https://www.example'>"
        "<link rel=alternate hreflang=en_US href='https://www.example/us'>"
        "<link rel=alternate hreflang=e href='https://www.example/e'>"
        "<link rel=alternate hreflang=toolongsubtag href='https://www.example/t'>"
        "<link rel=alternate hreflang=1a href='https://www.example/1a'>"
        "<link rel=alternate hreflang=zh-Hant-TW href='https://www.example/tw'>"
        "<link rel=alternate hreflang=it href='https://user@www.example/it'>"
        "<link rel=alternate hreflang=es href='https://www.example/\"<&>'>"
        "<link rel=alternate hreflang=pt href='https://[::1]:8443/pt'>";
    sm_head *h = sm_head_create(p);
    const char *stored;

    APR_ARRAY_PUSH(allow, const char *) = "lang";
    sm_head_feed(h, doc, strlen(doc));
    stored = sm_alternates_from_head(p, sm_head_result_get(h)->alternates,
                                     "https://www.example", "/page", allow);
    assert_string_equal(stored,
        "en-gb https://www.example/a/c~?lang=en\n"
        "de http://www.example/de/%C3%A4%20x\n"
        "x-default https://www.example/\n"
        "zh-hant-tw https://www.example/tw\n"
        "es https://www.example/%22%3C&%3E\n"
        "pt https://[::1]:8443/pt");
    assert_int_equal(sm_alternates_parse(p, stored, &back), 0);
    assert_int_equal(back->nelts, 6);
    assert_int_equal(sm_alternates_count(stored), 6);
    assert_string_equal(APR_ARRAY_IDX(back, 1, sm_alternate).href,
                        "http://www.example/de/%C3%A4%20x");
    /* two that end up the same: the first wins (the scanner already
     * folds case; another caller may not) */
    {
        apr_array_header_t *two = apr_array_make(p, 2,
                                                 sizeof(sm_head_alternate));
        APR_ARRAY_PUSH(two, sm_head_alternate).hreflang = "EN";
        APR_ARRAY_IDX(two, 0, sm_head_alternate).href = "https://a.example/1";
        APR_ARRAY_PUSH(two, sm_head_alternate).hreflang = "en";
        APR_ARRAY_IDX(two, 1, sm_head_alternate).href = "https://a.example/2";
        assert_string_equal(sm_alternates_from_head(p, two, "https://a.example",
                                                    "/", allow),
                            "en https://a.example/1");
    }
    /* none, and a head without any */
    assert_string_equal(sm_alternates_from_head(p, NULL, "https://www.example",
                                                "/", allow), "");
    assert_int_equal(sm_alternates_count(""), 0);

    assert_string_equal(sm_hreflang_canon(p, "x-default"), "x-default");
    assert_string_equal(sm_hreflang_canon(p, "EN"), "en");
    assert_string_equal(sm_hreflang_canon(p, "sr-Latn-RS"), "sr-latn-rs");
    assert_string_equal(sm_hreflang_canon(p, "es-419"), "es-419");
    assert_null(sm_hreflang_canon(p, ""));
    assert_null(sm_hreflang_canon(p, "x-other"));
    assert_null(sm_hreflang_canon(p, "en-"));
    assert_null(sm_hreflang_canon(p, "en--gb"));
    assert_null(sm_hreflang_canon(p, "-en"));
    assert_null(sm_hreflang_canon(p, "e\"n"));
    assert_null(sm_hreflang_canon(p, "abcdefghijklmnopqrstuvwxyzabcdefghij"));

    assert_true(sm_alternate_href_ok(p, "https://www.example/a?b=1&c"));
    assert_false(sm_alternate_href_ok(p, "https://WWW.example/a"));
    assert_false(sm_alternate_href_ok(p, "https://www.example:443/a"));
    assert_false(sm_alternate_href_ok(p, "https://www.example"));
    assert_false(sm_alternate_href_ok(p, "https://u@www.example/"));
    assert_false(sm_alternate_href_ok(p, "ftp://www.example/"));
    assert_false(sm_alternate_href_ok(p, "https://www.example/a\"b"));
    assert_false(sm_alternate_href_ok(p, "https://www.example/a b"));
    assert_false(sm_alternate_href_ok(p, "https://www.example/a#b"));
}

/* ---- the word-at-a-time scanning ------------------------------------------ */

/* Names and values are walked eight bytes at a time and compared as
 * folded words (sm_head.c, find_class, folded_word): control bytes that
 * are not HTML whitespace, near misses of the names read, every alignment
 * of a value's end, and a reference that decodes to another one. */
static void test_link_canonical(void **state)
{
    apr_pool_t *p = POOL(state);
    const char *v;

    v = sm_link_canonical(p, "<https://ex.com/a>; rel=\"canonical\"");
    assert_string_equal(v, "https://ex.com/a");
    v = sm_link_canonical(p, "</wp-json/>; rel=\"https://api.w.org/\", "
                             "</a>; rel=\"alternate canonical\"; type=x");
    assert_string_equal(v, "/a");
    v = sm_link_canonical(p, "</a>;rel=Canonical");
    assert_string_equal(v, "/a");
    /* a quoted parameter holding a comma does not end the link */
    v = sm_link_canonical(p, "</a>; title=\"x, y\"; rel=canonical");
    assert_string_equal(v, "/a");
    /* the same one twice counts; two that differ cancel out */
    v = sm_link_canonical(p, "</a>; rel=canonical, </a>; rel=canonical");
    assert_string_equal(v, "/a");
    assert_null(sm_link_canonical(p, "</a>; rel=canonical, </b>; "
                                     "rel=canonical"));
    /* other relations, or none */
    assert_null(sm_link_canonical(p, "</a>; rel=\"next\""));
    assert_null(sm_link_canonical(p, "</a>; rel=\"canonicalx\""));
    assert_null(sm_link_canonical(p, "</a>; anchor=canonical"));
    assert_null(sm_link_canonical(p, "</a>"));
    assert_null(sm_link_canonical(p, "garbage"));
    assert_null(sm_link_canonical(p, ""));
}

static void test_word_scanning(void **state)
{
    apr_pool_t *p = POOL(state);
    static const char *const noindex_no[] = {
        "<meta name\x01=robots content=noindex>",
        "<meta n\x0b" "ame=robots content=noindex>",      /* VT: not space */
        "<meta\x0bname=robots content=noindex>",
        "<meta name=robots c\xcfntent=noindex>",
        "<meta name=robots conte\x0et=noindex>",
        "<meta name=robots contents=noindex>",
        "<meta name=robots\x01 content=noindex>",
        "<metadata><meta name=robots content=noindex>",
        "<meta name=robots content=noindex\x0b>",
        NULL
    };
    static const char *const noindex_yes[] = {
        "<meta name=robots\x0c" "content=noindex>",       /* FF: space */
        "<MeTa NaMe=RoBoTs CoNtEnT=NoInDeX>",
        "<meta name=robots content=\"a,b,c,d,e,f,g,h,i,j,noindex\">",
        "<meta name=robots content=\"\t\t\t\t\t\t\t\t\tnoindex\">",
        "<meta name=\"robots\"content='noindex'>",    /* two quotes a word */
        NULL
    };
    answer a;
    char doc[256];
    int i, n;

    for (i = 0; noindex_no[i]; i++)
        if (scan(p, noindex_no[i]).noindex)
            fail_msg("wrongly found in: %s", noindex_no[i]);
    for (i = 0; noindex_yes[i]; i++)
        if (!scan(p, noindex_yes[i]).noindex)
            fail_msg("not found in: %s", noindex_yes[i]);

    a = scan(p, "<link rel=canonical hreflangx=en href=/a>"
                "<link rel=alternate hreflangx=de href=http://x/de>"
                "<link rela=alternate hreflang=fr href=http://x/fr>"
                "<linkx rel=canonical href=/b>");
    assert_string_equal(a.canonical, "/a");
    assert_string_equal(a.alts, "");
    assert_int_equal(a.done, 1);                /* <linkx> starts the body */
    a = scan(p, "<link href=\"/x\"rel=\"canonical\">");
    assert_string_equal(a.canonical, "/x");
    a = scan(p, "<LINK REL=ALTERNATE HREFLANG=EN-gb HREF=http://x/en>");
    assert_string_equal(a.alts, "EN-gb=http://x/en");  /* as written */

    /* A value ending at every offset of a word, quoted both ways and not. */
    for (n = 1; n <= 40; n++) {
        const char *q;
        for (q = "\"'"; *q; q++) {
            apr_snprintf(doc, sizeof(doc),
                         "<link rel=%ccanonical%c href=%c/%.*s%c>"
                         "<meta content=%c%.*s%c name=robots>",
                         *q, *q, *q, n - 1,
                         "0123456789012345678901234567890123456789", *q, *q,
                         n, "none.none.none.none.none.none.none.none.", *q);
            a = scan(p, doc);
            assert_int_equal(strlen(a.canonical), (apr_size_t)n);
            assert_int_equal(a.noindex, n == 4);
        }
        apr_snprintf(doc, sizeof(doc), "<link href=/%.*s rel=canonical>",
                     n - 1, "0123456789012345678901234567890123456789");
        assert_int_equal(strlen(scan(p, doc).canonical), (apr_size_t)n);
    }

    /* A reference is decoded once: "&amp;amp;" stays "&amp;". */
    a = scan(p, "<link rel=\"&amp;amp;canonical\" href=/x>");
    assert_string_equal(a.canonical, "(null)");
    a = scan(p, "<link rel=\"a &amp; CANONICAL\" href=/x>");
    assert_string_equal(a.canonical, "/x");
    a = scan(p, "<meta name=robots content=\"&amp;&amp;&amp;, &#110;one\">");
    assert_int_equal(a.noindex, 1);

    /* Text that almost ends a raw element is kept as written. */
    a = scan(p, "<title>a</TITx b</tItLe>");
    assert_string_equal(a.title, "a</TITx b");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_alternates_stored_form,
                                        unit_setup, unit_teardown),
        cmocka_unit_test_setup_teardown(test_meta_robots, unit_setup,
                                        unit_teardown),
        cmocka_unit_test_setup_teardown(test_comments, unit_setup,
                                        unit_teardown),
        cmocka_unit_test_setup_teardown(test_stops, unit_setup,
                                        unit_teardown),
        cmocka_unit_test_setup_teardown(test_links, unit_setup,
                                        unit_teardown),
        cmocka_unit_test_setup_teardown(test_alternates_bounded, unit_setup,
                                        unit_teardown),
        cmocka_unit_test_setup_teardown(test_title, unit_setup,
                                        unit_teardown),
        cmocka_unit_test_setup_teardown(test_entities, unit_setup,
                                        unit_teardown),
        cmocka_unit_test_setup_teardown(test_cms_heads, unit_setup,
                                        unit_teardown),
        cmocka_unit_test_setup_teardown(test_canonical_self, unit_setup,
                                        unit_teardown),
        cmocka_unit_test_setup_teardown(test_link_canonical, unit_setup,
                                        unit_teardown),
        cmocka_unit_test_setup_teardown(test_word_scanning, unit_setup,
                                        unit_teardown),
    };
    apr_initialize();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
