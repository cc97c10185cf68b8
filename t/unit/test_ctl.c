/* SPDX-License-Identifier: Apache-2.0 */
/* Unit tests of sitemapctl's core helpers: argument values (durations,
 * times, administrators' URLs), the settings a site keeps in the store
 * (sm_settings_parse against sm_settings_format), export: the files
 * hold exactly what the handler's logic produces for each document, and
 * the progress meter of long work. */
#include "unit.h"

#include "ctl/sm_ctl.h"
#include "util/sm_date.h"
#include "ctl/sm_progress.h"
#include "serve/sm_xml.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- durations and times ------------------------------------------------ */

static void test_durations(void **state)
{
    apr_interval_time_t t;
    (void)state;

    assert_null(sm_ctl_parse_duration("30d", &t));
    assert_int_equal(t, apr_time_from_sec(30 * 86400));
    assert_null(sm_ctl_parse_duration("12h", &t));
    assert_int_equal(t, apr_time_from_sec(12 * 3600));
    assert_null(sm_ctl_parse_duration("90mi", &t));
    assert_int_equal(t, apr_time_from_sec(90 * 60));
    assert_null(sm_ctl_parse_duration("3600s", &t));
    assert_int_equal(t, apr_time_from_sec(3600));
    assert_null(sm_ctl_parse_duration("3600", &t));
    assert_int_equal(t, apr_time_from_sec(3600));
    assert_null(sm_ctl_parse_duration("1500ms", &t));
    assert_int_equal(t, apr_time_from_msec(1500));
    assert_null(sm_ctl_parse_duration("36600d", &t));

    assert_non_null(sm_ctl_parse_duration("0d", &t));
    assert_non_null(sm_ctl_parse_duration("0", &t));
    assert_non_null(sm_ctl_parse_duration("36601d", &t));
    assert_non_null(sm_ctl_parse_duration("99999999999999999999d", &t));
    assert_non_null(sm_ctl_parse_duration("-5d", &t));
    assert_non_null(sm_ctl_parse_duration("5 d", &t));
    assert_non_null(sm_ctl_parse_duration("5m", &t));
    assert_non_null(sm_ctl_parse_duration("d", &t));
    assert_non_null(sm_ctl_parse_duration("", &t));
    assert_non_null(sm_ctl_parse_duration("1.5h", &t));
    /* Found by t/fuzz/fuzz_date: days times microseconds overflowed (UB);
     * built with gcc -O2 this one wrapped to about 16 hours and was
     * accepted, so prune --older-than would have removed nearly all. */
    assert_non_null(sm_ctl_parse_duration("213503983d", &t));
    assert_non_null(sm_ctl_parse_duration("2021111330d", &t));
    assert_non_null(sm_ctl_parse_duration("3162240000000h", &t));
}

static void test_times(void **state)
{
    apr_time_t t;
    (void)state;

    assert_null(sm_ctl_parse_time("2026-11-22", &t));
    assert_int_equal(apr_time_sec(t), 1795305600);
    assert_null(sm_ctl_parse_time("2026-11-22T04:59:16Z", &t));
    assert_int_equal(apr_time_sec(t), 1795323556);
    assert_null(sm_ctl_parse_time("2026-11-22T04:59:16", &t));
    assert_int_equal(apr_time_sec(t), 1795323556);
    assert_null(sm_ctl_parse_time("2026-11-22T05:59:16+01:00", &t));
    assert_int_equal(apr_time_sec(t), 1795323556);
    assert_null(sm_ctl_parse_time("2026-11-22T03:59-01:00", &t));
    assert_int_equal(apr_time_sec(t), 1795323540);
    assert_null(sm_ctl_parse_time("@1795323556", &t));
    assert_int_equal(apr_time_sec(t), 1795323556);

    assert_non_null(sm_ctl_parse_time("2026-02-30", &t));
    assert_non_null(sm_ctl_parse_time("2026-13-01", &t));
    assert_non_null(sm_ctl_parse_time("2026-1-1", &t));
    assert_non_null(sm_ctl_parse_time("2026-11-22T25:00Z", &t));
    assert_non_null(sm_ctl_parse_time("2026-11-22 10:00", &t));
    assert_non_null(sm_ctl_parse_time("yesterday", &t));
    assert_non_null(sm_ctl_parse_time("@", &t));
    assert_non_null(sm_ctl_parse_time("@-1", &t));
    assert_non_null(sm_ctl_parse_time("", &t));
    /* Found by t/fuzz/fuzz_date: the zone moved a valid date out of years
     * 1970..9999 (a <lastmod> of year 10000 is cut short in the XML, one
     * before 1970 is negative). */
    assert_non_null(sm_ctl_parse_time("9999-12-31T23:59-01:00", &t));
    assert_non_null(sm_ctl_parse_time("1970-01-01T00:30+01:00", &t));
    /* Not plausible: before 1990, more than a day ahead, past 9999. */
    assert_non_null(sm_ctl_parse_time("1989-12-31T23:59:59Z", &t));
    assert_null(sm_ctl_parse_time("1990-01-01", &t));
    assert_non_null(sm_ctl_parse_time("@0", &t));
    assert_non_null(sm_ctl_parse_time("@253402300799", &t));
    assert_non_null(sm_ctl_parse_time("9999-12-31", &t));
    {
        char buf[32];
        apr_time_t soon = apr_time_now() + SM_TIME_SKEW - apr_time_from_sec(60);
        snprintf(buf, sizeof(buf), "@%" APR_INT64_T_FMT,
                 (apr_int64_t)apr_time_sec(soon));
        assert_null(sm_ctl_parse_time(buf, &t));
        snprintf(buf, sizeof(buf), "@%" APR_INT64_T_FMT,
                 (apr_int64_t)apr_time_sec(soon + 2 * SM_TIME_SKEW));
        assert_non_null(sm_ctl_parse_time(buf, &t));
    }
}

/* ---- URLs named by an administrator -------------------------------------- */

static void test_admin_urls(void **state)
{
    unit_ctx *u = *state;
    const char *base = "https://www.example.com", *url, *err;
    apr_array_header_t *allow = apr_array_make(u->pool, 1, sizeof(char *));
    char *longp;

    assert_null(sm_ctl_url(u->pool, base, "/a/./b//c", NULL, &url));
    assert_string_equal(url, "/a/b/c");
    assert_null(sm_ctl_url(u->pool, base, "/caf\xc3\xa9?x=%7e1#top", NULL,
                           &url));
    assert_string_equal(url, "/caf%C3%A9?x=~1");
    /* A full URL on the site: scheme and host as the module names it. */
    assert_null(sm_ctl_url(u->pool, base, "HTTPS://WWW.Example.COM:443/p",
                           NULL, &url));
    assert_string_equal(url, "/p");
    assert_null(sm_ctl_url(u->pool, base, "https://www.example.com", NULL,
                           &url));
    assert_string_equal(url, "/");
    /* Every name the URL holds is allowed (NULL), or only those given. */
    assert_null(sm_ctl_url(u->pool, base, "/s?a+b=1&c%3Dd=2", NULL, &url));
    assert_string_equal(url, "/s?a+b=1&c%3Dd=2");
    /* Found by t/fuzz/fuzz_base: an empty name ("=x") was not among the
     * names the URL holds, and the URL was refused with a hint to use
     * --allow-query, which add and remove do not take. */
    assert_null(sm_ctl_url(u->pool, base, "/s?=x&a=1", NULL, &url));
    assert_string_equal(url, "/s?=x&a=1");
    /* A name holding a NUL byte can never be allowed: said plainly (a
     * control character, refused anywhere in a URL since issue 33). */
    err = sm_ctl_url(u->pool, base, "/s?a%00=1", NULL, &url);
    assert_non_null(err);
    assert_null(strstr(err, "--allow-query"));
    assert_non_null(strstr(err, "control character"));
    APR_ARRAY_PUSH(allow, const char *) = "page";
    assert_null(sm_ctl_url(u->pool, base, "/s?page=2", allow, &url));
    err = sm_ctl_url(u->pool, base, "/s?sort=1", allow, &url);
    assert_non_null(strstr(err, "--allow-query"));

    err = sm_ctl_url(u->pool, base, "http://www.example.com/p", NULL, &url);
    assert_non_null(strstr(err, "is not on the site https://www.example.com"));
    err = sm_ctl_url(u->pool, base, "https://other.example/p", NULL, &url);
    assert_non_null(strstr(err, "(it is on https://other.example)"));
    assert_non_null(sm_ctl_url(u->pool, base, "p.html", NULL, &url));
    assert_non_null(sm_ctl_url(u->pool, base, "ftp://www.example.com/", NULL,
                               &url));
    assert_non_null(sm_ctl_url(u->pool, base, "https://u@www.example.com/",
                               NULL, &url));
    assert_non_null(sm_ctl_url(u->pool, base, "", NULL, &url));
    err = sm_ctl_url(u->pool, base, "/a%zz", NULL, &url);
    assert_non_null(strstr(err, "hex"));
    longp = apr_palloc(u->pool, 2100);
    memset(longp, 'a', 2099);
    longp[0] = '/';
    longp[2099] = '\0';
    err = sm_ctl_url(u->pool, base, longp, NULL, &url);
    assert_non_null(strstr(err, "too long"));
    assert_null(url);
}

/* ---- settings ------------------------------------------------------------ */

static apr_array_header_t *annotations(apr_pool_t *p, const char *re1,
                                       const char *v1, const char *re2,
                                       const char *v2)
{
    apr_array_header_t *a = apr_array_make(p, 2, sizeof(sm_annotation));
    const char *err;
    sm_annotation *x;

    if (re1) {
        x = apr_array_push(a);
        x->re = sm_regex_compile(p, re1, &err);
        x->value = v1;
    }
    if (re2) {
        x = apr_array_push(a);
        x->re = sm_regex_compile(p, re2, &err);
        x->value = v2;
    }
    return a;
}

static void test_settings_round_trip(void **state)
{
    unit_ctx *u = *state;
    apr_array_header_t *cf = annotations(u->pool, "^/news/", "hourly",
                                         "a b  c", "never");
    apr_array_header_t *pr = annotations(u->pool, "^/$", "1.0", NULL, NULL);
    const char *text = sm_settings_format(u->pool, "/maps/site.xml", 7, cf,
                                          pr, "/maps/sitemap.css");
    sm_settings set;

    assert_null(sm_settings_parse(u->pool, text, &set));
    assert_string_equal(set.path, "/maps/site.xml");
    assert_int_equal(set.page_size, 7);
    assert_int_equal(set.changefreq->nelts, 2);
    assert_int_equal(set.priority->nelts, 1);
    assert_string_equal(set.stylesheet, "/maps/sitemap.css");
    /* A pattern keeps its spaces; first match wins, as in the module. */
    assert_string_equal(sm_regex_pattern(APR_ARRAY_IDX(set.changefreq, 1,
                                                       sm_annotation).re),
                        "a b  c");
    assert_string_equal(sm_annotation_find(set.changefreq, "/news/x"),
                        "hourly");
    assert_string_equal(sm_annotation_find(set.changefreq, "/xa b  c"),
                        "never");
    assert_null(sm_annotation_find(set.changefreq, "/other"));
    assert_string_equal(sm_annotation_find(set.priority, "/"), "1.0");
    /* Formatting the parsed settings gives the same text. */
    assert_string_equal(sm_settings_format(u->pool, set.path, set.page_size,
                                           set.changefreq, set.priority,
                                           set.stylesheet),
                        text);
}

static void test_settings_defaults_and_errors(void **state)
{
    unit_ctx *u = *state;
    sm_settings set;
    const char *err;

    assert_null(sm_settings_parse(u->pool, "", &set));
    assert_string_equal(set.path, "/sitemap.xml");
    assert_int_equal(set.page_size, 50000);
    assert_int_equal(set.changefreq->nelts, 0);
    assert_null(sm_settings_parse(u->pool, NULL, &set));
    /* Unknown items (a newer module) are skipped. */
    assert_null(sm_settings_parse(u->pool, "path /s.xml\nfuture x y\n"
                                  "page_size 9", &set));
    assert_string_equal(set.path, "/s.xml");
    assert_int_equal(set.page_size, 9);

    err = sm_settings_parse(u->pool, "path sitemap.xml\n", &set);
    assert_non_null(strstr(err, "line 1: path"));
    assert_non_null(sm_settings_parse(u->pool, "page_size 0\n", &set));
    assert_non_null(sm_settings_parse(u->pool, "page_size 50001\n", &set));
    assert_non_null(sm_settings_parse(u->pool, "page_size x\n", &set));
    err = sm_settings_parse(u->pool, "path /s.xml\nchangefreq often ^/\n",
                            &set);
    assert_non_null(strstr(err, "line 2: changefreq 'often'"));
    assert_non_null(sm_settings_parse(u->pool, "priority 2.0 ^/\n", &set));
    assert_non_null(sm_settings_parse(u->pool, "priority 0.5\n", &set));
    err = sm_settings_parse(u->pool, "changefreq daily (\n", &set);
    assert_non_null(strstr(err, "line 1:"));
    assert_non_null(sm_settings_parse(u->pool, "path\n", &set));
}

/* ---- export --------------------------------------------------------------- */

#define BASE "http://h.example"

static sm_store *store_with(unit_ctx *u, const char *name, int n,
                            int page_size, char **path)
{
    sm_site_conf *site = apr_pcalloc(u->pool, sizeof(*site));
    sm_change *c = apr_pcalloc(u->pool, sizeof(*c) * (apr_size_t)(n + 1));
    sm_apply_stats stats;
    sm_store *st;
    char err[512];
    int i;

    *path = apr_pstrcat(u->pool, u->dir, "/", name, NULL);
    if (sm_store_open(&st, u->pool, *path, SM_STORE_CREATE, 1000,
                             NULL, err, sizeof(err)) != APR_SUCCESS)
        fail_msg("open: %s", err);
    site->base = BASE;
    site->page_size = page_size;
    for (i = 0; i < n; i++) {
        c[i].op = SM_CHANGE_RECORD;
        c[i].site = site;
        c[i].url = apr_psprintf(u->pool, i == 0 ? "/" : "/news/%d?a&b", i);
        c[i].last_modified = apr_time_from_sec(1795323556 + i);
        c[i].seen = apr_time_from_sec(1795400000);
    }
    /* A site with a row but no URL: record one, then forget it. */
    if (n == 0) {
        c[0].op = SM_CHANGE_RECORD;
        c[0].site = site;
        c[0].url = "/x";
        c[0].seen = apr_time_now();
        assert_int_equal(sm_store_apply(st, c, 1, &stats), APR_SUCCESS);
        c[0].op = SM_CHANGE_FORGET;
        n = 1;
    }
    assert_int_equal(sm_store_apply(st, c, n, &stats), APR_SUCCESS);
    return st;
}

static char *slurp(apr_pool_t *p, const char *path)
{
    FILE *f = fopen(path, "rb");
    char *buf = apr_palloc(p, 1 << 20);
    size_t n;

    if (!f)
        fail_msg("cannot open %s", path);
    n = fread(buf, 1, (1 << 20) - 1, f);
    fclose(f);
    buf[n] = '\0';
    return buf;
}

static sm_settings *settings(unit_ctx *u, const char *path)
{
    sm_settings *set = apr_pcalloc(u->pool, sizeof(*set));
    const char *text = sm_settings_format(
        u->pool, path, 2,
        annotations(u->pool, "^/news/", "daily", NULL, NULL),
        annotations(u->pool, "^/$", "1.0", "^/news/1", "0.3"), NULL);
    assert_null(sm_settings_parse(u->pool, text, set));
    return set;
}

#define DECL "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
#define URLSET "<urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\" xmlns:xhtml=\"http://www.w3.org/1999/xhtml\">\n"
#define INDEX "<sitemapindex xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\n"

static void test_export_index_and_pages(void **state)
{
    unit_ctx *u = *state;
    char *db, err[512], *dir = apr_pstrcat(u->pool, u->dir, "/out/", NULL);
    sm_store *st = store_with(u, "s.db", 5, 2, &db);
    sm_settings *set = settings(u, "/maps/site.xml");
    sm_export_result res;
    char *got;

    assert_int_equal(sm_ctl_export(u->pool, st, BASE, set, dir, &res, err,
                                   sizeof(err)), SM_EXPORT_OK);
    assert_string_equal(res.index_kind, "index");
    assert_int_equal(res.files, 4);
    assert_int_equal(res.pages, 3);
    assert_int_equal(res.urls, 5);
    assert_string_equal(APR_ARRAY_IDX(res.paths, 0, const char *),
                        apr_pstrcat(u->pool, u->dir, "/out/maps/site.xml",
                                    NULL));

    got = slurp(u->pool, apr_pstrcat(u->pool, dir, "maps/site.xml", NULL));
    /* Page lastmods: the newest lastmod of their URLs. */
    assert_string_equal(got, DECL INDEX
        "<sitemap><loc>" BASE "/maps/site-1.xml</loc>"
        "<lastmod>2026-11-22T04:59:17+00:00</lastmod></sitemap>\n"
        "<sitemap><loc>" BASE "/maps/site-2.xml</loc>"
        "<lastmod>2026-11-22T04:59:19+00:00</lastmod></sitemap>\n"
        "<sitemap><loc>" BASE "/maps/site-3.xml</loc>"
        "<lastmod>2026-11-22T04:59:20+00:00</lastmod></sitemap>\n"
        "</sitemapindex>\n");
    got = slurp(u->pool, apr_pstrcat(u->pool, dir, "maps/site-1.xml", NULL));
    assert_string_equal(got, DECL URLSET
        "<url><loc>" BASE "/</loc><lastmod>2026-11-22T04:59:16+00:00"
        "</lastmod><priority>1.0</priority></url>\n"
        "<url><loc>" BASE "/news/1?a&amp;b</loc><lastmod>"
        "2026-11-22T04:59:17+00:00</lastmod><changefreq>daily</changefreq>"
        "<priority>0.3</priority></url>\n"
        "</urlset>\n");
    got = slurp(u->pool, apr_pstrcat(u->pool, dir, "maps/site-3.xml", NULL));
    assert_string_equal(got, DECL URLSET
        "<url><loc>" BASE "/news/4?a&amp;b</loc><lastmod>"
        "2026-11-22T04:59:20+00:00</lastmod><changefreq>daily</changefreq>"
        "</url>\n"
        "</urlset>\n");
    /* No temporary file left behind. */
    assert_int_equal(system(apr_psprintf(u->pool, "test -z \"$(ls %s/maps | "
                                         "grep tmp)\"", dir)), 0);
    sm_store_close(st);
}

static void test_export_one_page_and_root(void **state)
{
    unit_ctx *u = *state;
    char *db, *db2, err[512];
    char *dir = apr_pstrcat(u->pool, u->dir, "/one", NULL);
    char *dir2 = apr_pstrcat(u->pool, u->dir, "/root", NULL);
    sm_store *st = store_with(u, "one.db", 2, 50000, &db);
    sm_store *st2 = store_with(u, "root.db", 0, 50000, &db2);
    sm_settings *set = settings(u, "/sitemap.xml");
    sm_export_result res;
    const char *one = DECL URLSET
        "<url><loc>" BASE "/</loc><lastmod>2026-11-22T04:59:16+00:00"
        "</lastmod><priority>1.0</priority></url>\n"
        "<url><loc>" BASE "/news/1?a&amp;b</loc><lastmod>"
        "2026-11-22T04:59:17+00:00</lastmod><changefreq>daily</changefreq>"
        "<priority>0.3</priority></url>\n"
        "</urlset>\n";

    /* One page: the same <urlset> at SitemapPath and as sitemap-1.xml. */
    assert_int_equal(sm_ctl_export(u->pool, st, BASE, set, dir, &res, err,
                                   sizeof(err)), SM_EXPORT_OK);
    assert_string_equal(res.index_kind, "urlset");
    assert_int_equal(res.files, 2);
    assert_string_equal(slurp(u->pool, apr_pstrcat(u->pool, dir,
                                                   "/sitemap.xml", NULL)),
                        one);
    assert_string_equal(slurp(u->pool, apr_pstrcat(u->pool, dir,
                                                   "/sitemap-1.xml", NULL)),
                        one);

    /* An old page file the module no longer serves goes; other files
     * stay. */
    {
        FILE *f = fopen(apr_pstrcat(u->pool, dir, "/sitemap-7.xml", NULL),
                        "w");
        fclose(f);
        f = fopen(apr_pstrcat(u->pool, dir, "/sitemap-x.xml", NULL), "w");
        fclose(f);
        assert_int_equal(sm_ctl_export(u->pool, st, BASE, set, dir, &res,
                                       err, sizeof(err)), SM_EXPORT_OK);
        assert_int_equal(res.removed->nelts, 1);
        assert_int_not_equal(access(apr_pstrcat(u->pool, dir,
                                                "/sitemap-7.xml", NULL),
                                    F_OK), 0);
        assert_int_equal(access(apr_pstrcat(u->pool, dir, "/sitemap-x.xml",
                                            NULL), F_OK), 0);
        assert_int_equal(access(apr_pstrcat(u->pool, dir, "/sitemap-1.xml",
                                            NULL), F_OK), 0);
    }

    /* Known site, no URL left: no document (the module answers 404: a
     * placeholder would list a URL nobody has seen answer 200). */
    assert_int_equal(sm_ctl_export(u->pool, st2, BASE, set, dir2, &res, err,
                                   sizeof(err)), SM_EXPORT_OK);
    assert_string_equal(res.index_kind, "empty");
    assert_int_equal(access(apr_pstrcat(u->pool, dir2, "/sitemap.xml", NULL),
                            F_OK), -1);
    assert_int_not_equal(access(apr_pstrcat(u->pool, dir2, "/sitemap-1.xml",
                                            NULL), F_OK), 0);
    sm_store_close(st);
    sm_store_close(st2);
}

static apr_status_t failing(void *baton, const char *data, apr_size_t len)
{
    (void)baton; (void)data; (void)len;
    return APR_EGENERAL;
}

static void test_export_errors(void **state)
{
    unit_ctx *u = *state;
    char *db, err[512];
    sm_store *st = store_with(u, "s.db", 5, 2, &db);
    sm_settings *set = settings(u, "/sitemap.xml");
    sm_export_result res;
    sink_buf b = { "", 0, 0, u->pool };
    char *blocker = apr_pstrcat(u->pool, u->dir, "/file", NULL);
    FILE *f = fopen(blocker, "w");

    fclose(f);
    assert_int_equal(sm_ctl_export(u->pool, st, "http://other.example", set,
                                   u->dir, &res, err, sizeof(err)),
                     SM_EXPORT_UNKNOWN_SITE);
    /* A directory that cannot be made: a file is in the way. */
    assert_int_equal(sm_ctl_export(u->pool, st, BASE, set,
                                   apr_pstrcat(u->pool, blocker, "/sub",
                                               NULL), &res, err,
                                   sizeof(err)), SM_EXPORT_WRITE);
    assert_non_null(strstr(err, "cannot create"));

    assert_int_equal(sm_ctl_document(u->pool, st, BASE, set, 2, to_buf, &b,
                                     err, sizeof(err)), SM_EXPORT_OK);
    assert_non_null(strstr(b.data, "/news/3?a&amp;b"));
    assert_int_equal(sm_ctl_document(u->pool, st, BASE, set, 4, to_buf, &b,
                                     err, sizeof(err)), SM_EXPORT_NO_PAGE);
    assert_int_equal(sm_ctl_document(u->pool, st, BASE, set, 0, failing,
                                     NULL, err, sizeof(err)),
                     SM_EXPORT_WRITE);
    /* The store's snapshot was ended every time: a writer gets in. */
    {
        sm_site_conf site = { BASE, 2, 0, 0, NULL, 0 };
        sm_change c = { SM_CHANGE_RECORD, &site, "/late", 0, NULL,
                        apr_time_now(), NULL, NULL, NULL, NULL, NULL, 0, 0, NULL, 0, NULL, NULL, NULL, 0, 0 };
        sm_apply_stats stats;
        assert_int_equal(sm_store_apply(st, &c, 1, &stats), APR_SUCCESS);
    }
    sm_store_close(st);
}

/* ---- the progress meter --------------------------------------------------- */

#define MIB (1024 * 1024)

static void test_progress_format(void **state)
{
    char buf[160];
    (void)state;

    /* 12 MiB of 48 in 2 s: 25%, 3 times as long to go. */
    sm_progress_format(buf, sizeof(buf), "reading logs", 1, 12 * MIB,
                       48 * MIB, 1000000, apr_time_from_sec(2));
    assert_string_equal(buf, "reading logs: 12.0 MiB of 48.0 MiB (25%), "
                             "500000 lines/s, 0:06 left");
    /* No total (standard input): no share, no time left. */
    sm_progress_format(buf, sizeof(buf), "reading logs", 1, 512 * 1024, 0,
                       10, apr_time_from_sec(1));
    assert_string_equal(buf, "reading logs: 512 KiB, 10 lines/s");
    /* Hours left; gigabytes. */
    sm_progress_format(buf, sizeof(buf), "reading logs", 1,
                       (apr_off_t)11 * 1024 * MIB, (apr_off_t)22 * 1024 * MIB,
                       0, apr_time_from_sec(3700));
    assert_string_equal(buf, "reading logs: 11.0 GiB of 22.0 GiB (50%), "
                             "1:01:40 left");
    /* Items, no lines; done: 100%, no time left. */
    sm_progress_format(buf, sizeof(buf), "writing URLs", 0, 50000, 50000, 0,
                       apr_time_from_sec(2));
    assert_string_equal(buf, "writing URLs: 50000 of 50000 (100%)");
    /* Truncated, never overrun. */
    assert_int_equal(sm_progress_format(buf, 10, "reading logs", 1, MIB,
                                        2 * MIB, 5, apr_time_from_sec(1)), 9);
}

static apr_size_t drain(int fd, char *buf, apr_size_t len)
{
    ssize_t n = read(fd, buf, len - 1);
    buf[n > 0 ? n : 0] = '\0';
    return n > 0 ? (apr_size_t)n : 0;
}

static void test_progress_draws_after_a_delay_then_now_and_then(void **state)
{
    int fds[2];
    char buf[512];
    sm_progress pg;
    apr_time_t t0 = apr_time_from_sec(1000);
    (void)state;

    assert_int_equal(pipe(fds), 0);
    assert_int_equal(fcntl(fds[0], F_SETFL, O_NONBLOCK), 0);
    sm_progress_start(&pg, fds[1], "reading logs", 10 * MIB, 1, t0);
    /* Short work shows nothing. */
    sm_progress_update(&pg, MIB, 100, t0 + SM_PROGRESS_DELAY / 2);
    assert_int_equal(drain(fds[0], buf, sizeof(buf)), 0);
    sm_progress_update(&pg, 5 * MIB, 500, t0 + SM_PROGRESS_DELAY);
    drain(fds[0], buf, sizeof(buf));
    assert_non_null(strstr(buf, "\rreading logs: 5.0 MiB of 10.0 MiB (50%)"));
    assert_non_null(strstr(buf, "\033[K"));
    /* Not again before SM_PROGRESS_EVERY. */
    sm_progress_update(&pg, 6 * MIB, 600,
                       t0 + SM_PROGRESS_DELAY + SM_PROGRESS_EVERY / 2);
    assert_int_equal(drain(fds[0], buf, sizeof(buf)), 0);
    sm_progress_update(&pg, 7 * MIB, 700,
                       t0 + SM_PROGRESS_DELAY + SM_PROGRESS_EVERY);
    drain(fds[0], buf, sizeof(buf));
    assert_non_null(strstr(buf, "7.0 MiB of 10.0 MiB (70%)"));
    /* The end erases the line. */
    sm_progress_end(&pg);
    drain(fds[0], buf, sizeof(buf));
    assert_string_equal(buf, "\r\033[K");

    /* Off (not a terminal): nothing at all, not even the erasing. */
    sm_progress_start(&pg, -1, "reading logs", 10 * MIB, 1, t0);
    sm_progress_update(&pg, 5 * MIB, 500, t0 + apr_time_from_sec(5));
    sm_progress_end(&pg);
    assert_int_equal(drain(fds[0], buf, sizeof(buf)), 0);
    close(fds[0]);
    close(fds[1]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_durations),
        cmocka_unit_test(test_times),
        cmocka_unit_test_setup_teardown(test_admin_urls, unit_setup, unit_teardown),
        cmocka_unit_test_setup_teardown(test_settings_round_trip, unit_setup, unit_teardown),
        cmocka_unit_test_setup_teardown(test_settings_defaults_and_errors, unit_setup, unit_teardown),
        cmocka_unit_test_setup_teardown(test_export_index_and_pages, unit_setup, unit_teardown),
        cmocka_unit_test_setup_teardown(test_export_one_page_and_root, unit_setup, unit_teardown),
        cmocka_unit_test_setup_teardown(test_export_errors, unit_setup, unit_teardown),
        cmocka_unit_test(test_progress_format),
        cmocka_unit_test(test_progress_draws_after_a_delay_then_now_and_then),
    };
    apr_initialize();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
