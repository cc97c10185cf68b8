/* SPDX-License-Identifier: Apache-2.0 */
/* Unit tests of src/crawl: SitemapCrawler's arguments, the User-Agent
 * patterns and the pre-check before them (it must never say no to a
 * User-Agent a pattern matches, and say no to browsers'), the ranges
 * files (strict JSON, hostile input, IPv4, IPv6, v4-mapped, re-read on
 * change).  DNS confirmation: test_crawl_dns.c. */
#include "unit.h"

#include "crawl/sm_crawl.h"

#include <apr_network_io.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <utime.h>

static const char *browsers[] = {
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, "
    "like Gecko) Chrome/120.0.0.0 Safari/537.36",
    "Mozilla/5.0 (iPhone; CPU iPhone OS 17_1 like Mac OS X) AppleWebKit/"
    "605.1.15 (KHTML, like Gecko) Version/17.1 Mobile/15E148 Safari/604.1",
    "Mozilla/5.0 (X11; Linux x86_64; rv:120.0) Gecko/20100101 Firefox/120.0",
    "Mozilla/5.0 (Linux; Android 10; K) AppleWebKit/537.36 (KHTML, like "
    "Gecko) Chrome/120.0.0.0 Mobile Safari/537.36",
    "curl/8.4.0", "Wget/1.21.3", "", "x", "Mozilla/5.0 (compatible; Bo",
    "Mozilla/5.0 (Robo; bosun) AppleWebKit/537.36 Gecko Chrome/120 Boa",
};

static const char googlebot[] =
    "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)";
static const char googlebot_mobile[] =
    "Mozilla/5.0 (Linux; Android 6.0.1; Nexus 5X Build/MMB29P) "
    "AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.6099.71 Mobile "
    "Safari/537.36 (compatible; Googlebot/2.1; "
    "+http://www.google.com/bot.html)";
static const char bingbot[] =
    "Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)";

static const char *add(unit_ctx *u, sm_crawl_list *l, const char *a0,
                       const char *a1, const char *a2, const char *a3)
{
    char *argv[4];
    int argc = 0;

    if (a0)
        argv[argc++] = (char *)a0;
    if (a1)
        argv[argc++] = (char *)a1;
    if (a2)
        argv[argc++] = (char *)a2;
    if (a3)
        argv[argc++] = (char *)a3;
    return sm_crawl_add(l, u->pool, argc, argv);
}

static sm_crawl_list *two_crawlers(unit_ctx *u)
{
    sm_crawl_list *l = sm_crawl_list_make(u->pool);

    assert_null(add(u, l, "Googlebot", "Googlebot", "dns:googlebot.com,"
                    "google.com", NULL));
    assert_null(add(u, l, "Bingbot", "bingbot", "dns:search.msn.com", NULL));
    return l;
}

/* ---- the directive --------------------------------------------------------- */

static void test_directive_errors(void **state)
{
    unit_ctx *u = *state;
    sm_crawl_list *l = sm_crawl_list_make(u->pool);
    const char *e;

    e = add(u, l, "G", "Googlebot", NULL, NULL);
    assert_non_null(strstr(e, "SitemapCrawler takes a name"));
    e = add(u, l, "bad name", "x", "dns:a.com", NULL);
    assert_non_null(strstr(e, "'bad name' is not allowed"));
    e = add(u, l, "G", "Google(bot", "dns:a.com", NULL);
    assert_non_null(strstr(e, "SitemapCrawler G: the User-Agent pattern"));
    assert_non_null(strstr(e, "Google(bot"));
    e = add(u, l, "G", "", "dns:a.com", NULL);
    assert_non_null(strstr(e, "'' is not allowed"));
    e = add(u, l, "G", "Googlebot", "dns:com", NULL);
    assert_non_null(strstr(e, "'dns:com' is not allowed"));
    e = add(u, l, "G", "Googlebot", "dns:a.com,,b.com", NULL);
    assert_non_null(strstr(e, "'dns:a.com,,b.com' is not allowed"));
    e = add(u, l, "G", "Googlebot", "dns:", NULL);
    assert_non_null(strstr(e, "'dns:' is not allowed"));
    e = add(u, l, "G", "Googlebot", "dns:a_b.com", NULL);
    assert_non_null(strstr(e, "'dns:a_b.com' is not allowed"));
    e = add(u, l, "G", "Googlebot", "relative.json", NULL);
    assert_non_null(strstr(e, "'relative.json' is not allowed"));
    assert_int_equal(sm_crawl_count(l), 0);

    assert_null(add(u, l, "G", "Googlebot", "dns:googlebot.com",
                    "/etc/googlebot.json"));
    e = add(u, l, "g", "x", "dns:a.com", NULL);
    assert_non_null(strstr(e, "that name is taken"));
    assert_int_equal(sm_crawl_count(l), 1);
    assert_string_equal(sm_crawl_get(l, 0)->name, "G");
    assert_int_equal(sm_crawl_get(l, 0)->sources->nelts, 2);
    /* The file is read at open: it does not exist. */
    e = sm_crawl_list_open(l, u->pool, apr_time_now());
    assert_non_null(strstr(e, "SitemapCrawler G: cannot open "
                              "/etc/googlebot.json"));
}

/* ---- patterns and the pre-check ------------------------------------------ */

static void test_literals(void **state)
{
    unit_ctx *u = *state;
    struct { const char *pattern, *literal; } t[] = {
        { "Googlebot", "googlebot" },
        { "Googlebot/\\d+\\.\\d", "googlebot/" },
        { "^Mozilla/5\\.0 \\(compatible; bingbot", "mozilla/5.0 (compatible; bingbot" },
        { "(?:Googlebot|AdsBot-Google)", "" },
        { "(?:Mediapartners|AdsBot)-Google", "-google" },
        { "Googlebot|bingbot", "" },
        { "Googlebots?", "googlebot" },
        { "Go*glebot", "glebot" },
        { "Go{2}glebot", "glebot" },
        { "Googleb[o0]t", "googleb" },
        { "Googleb[[:alpha:]]t-x", "googleb" },
        { "G.oglebot", "oglebot" },
        { "(?x) G o o g l e", "" },
        { "(?#a(b)c", "" },
        { "(*UTF)Googlebot", "" },
        { "\\QGoogle|bot\\E", "" },
        { "\\x47ooglebot", "" },
        { "a(b", "" },
        { "Google\\|bot", "google|bot" },
        { "Googlebot+", "googlebot" },
    };
    apr_size_t i;

    for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
        const char *got = sm_crawl_required_literal(u->pool, t[i].pattern);
        if (strcmp(got, t[i].literal) != 0)
            fail_msg("%s: literal '%s', expected '%s'", t[i].pattern, got,
                     t[i].literal);
    }
}

static void test_match(void **state)
{
    unit_ctx *u = *state;
    sm_crawl_list *l = two_crawlers(u);
    apr_size_t i;

    assert_true(sm_crawl_precheck(l, googlebot));
    assert_string_equal(sm_crawl_match(l, googlebot)->name, "Googlebot");
    assert_true(sm_crawl_precheck(l, googlebot_mobile));
    assert_string_equal(sm_crawl_match(l, googlebot_mobile)->name,
                        "Googlebot");
    assert_true(sm_crawl_precheck(l, bingbot));
    assert_string_equal(sm_crawl_match(l, bingbot)->name, "Bingbot");
    /* Case-insensitive, both of them. */
    assert_true(sm_crawl_precheck(l, "GOOGLEBOT"));
    assert_string_equal(sm_crawl_match(l, "GOOGLEBOT")->name, "Googlebot");
    assert_true(sm_crawl_precheck(l, "x BingBot"));
    assert_string_equal(sm_crawl_match(l, "x BingBot")->name, "Bingbot");
    /* Ordinary visitors: the pre-check says no. */
    for (i = 0; i < sizeof(browsers) / sizeof(browsers[0]); i++) {
        if (sm_crawl_precheck(l, browsers[i]))
            fail_msg("pre-check passed '%s'", browsers[i]);
        assert_null(sm_crawl_match(l, browsers[i]));
    }
    assert_false(sm_crawl_precheck(l, NULL));
    assert_null(sm_crawl_match(l, NULL));
    /* The needle at every offset, short and long strings (the SSE2 blocks
     * and their overlapping last block, and the scalar scan). */
    for (i = 0; i < 40; i++) {
        char buf[64];
        memset(buf, 'x', sizeof(buf));
        memcpy(buf + i, "gOOGLEBOT", 9);
        buf[i + 9] = '\0';
        assert_true(sm_crawl_precheck(l, buf));
        memcpy(buf + i, "BingBot", 7);
        buf[i + 7] = '\0';
        assert_true(sm_crawl_precheck(l, buf));
        memset(buf + i, 'x', 7);
        assert_false(sm_crawl_precheck(l, buf));
    }
}

/* The pre-check may never say no where a pattern says yes: random
 * User-Agents made of the patterns' pieces. */
static void test_precheck_no_false_negative(void **state)
{
    unit_ctx *u = *state;
    sm_crawl_list *l = sm_crawl_list_make(u->pool);
    static const char *pieces[] = {
        "Go", "og", "le", "bot", "Bot", "BOT", "Yandex", "Mozilla/5.0 ",
        "(compatible; ", "Applebot", "bing", "x", " ", "/", "2.1", "Duck",
        "Duck", "Bai", "duspider", "-Google", "AdsBot", "\xc3\xa9",
    };
    unsigned seed = 12345;
    int i, j, hits = 0;

    assert_null(add(u, l, "Googlebot", "Google(?:bot|Other)", "dns:a.com",
                    NULL));
    assert_null(add(u, l, "Yandex", "YandexBot/\\d", "dns:yandex.ru", NULL));
    assert_null(add(u, l, "Duck", "DuckDuck(?:Go)?Bot", "dns:a.com", NULL));
    assert_null(add(u, l, "Baidu", "Baiduspider", "dns:a.com", NULL));
    assert_null(add(u, l, "Ads", "(?:Mediapartners|AdsBot)-Google",
                    "dns:a.com", NULL));
    for (i = 0; i < 20000; i++) {
        char ua[256] = "";
        int n = 1 + (int)((seed = seed * 1103515245u + 12345u) >> 16) % 12;
        for (j = 0; j < n; j++)
            strcat(ua, pieces[((seed = seed * 1103515245u + 12345u) >> 16)
                              % (sizeof(pieces) / sizeof(pieces[0]))]);
        if (sm_crawl_match(l, ua)) {
            hits++;
            if (!sm_crawl_precheck(l, ua))
                fail_msg("pre-check said no to '%s'", ua);
        }
    }
    assert_true(hits > 100);
}

/* The one-pass scan reads whole blocks from the start, past the NUL but
 * never into the next page: each User-Agent (every length up to 100,
 * "bot" in any case at every place, or only part of it) ends at every
 * distance from the end of a page whose next page cannot be read, with
 * "bot" past its NUL; the answer is always strcasestr's. */
static void test_precheck_page_edges(void **state)
{
    unit_ctx *u = *state;
    sm_crawl_list *l = two_crawlers(u);
    long pg = sysconf(_SC_PAGESIZE);
    char *map = mmap(NULL, (size_t)pg * 2, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    static const char *parts[] = { "bot", "BoT", "bo", "ot", "b" };
    int len, at, gap, w, tried = 0;

    assert_true(map != MAP_FAILED);
    assert_int_equal(mprotect(map + pg, (size_t)pg, PROT_NONE), 0);
    for (len = 0; len <= 100; len++)
        for (at = 0; at <= len; at++)
            for (w = 0; w < 5; w++)
                for (gap = 0; gap < 40; gap++) {
                    char *ua = map + pg - 1 - gap - len;
                    size_t n = strlen(parts[w]);
                    memset(map + pg - 160, 'x', 160);
                    memcpy(map + pg - 3, "bot", 3);
                    if ((size_t)(len - at) >= n)
                        memcpy(ua + at, parts[w], n);
                    ua[len] = '\0';
                    if (sm_crawl_precheck(l, ua)
                        != (strcasestr(ua, "bot") != NULL))
                        fail_msg("pre-check wrong for '%s' (%d before the "
                                 "page's end)", ua, gap);
                    tried++;
                }
    assert_true(tried > 100000);
    munmap(map, (size_t)pg * 2);
}

/* Without a literal, the pre-check says yes to everything (the patterns
 * decide). */
static void test_precheck_off(void **state)
{
    unit_ctx *u = *state;
    sm_crawl_list *l = two_crawlers(u);

    assert_false(sm_crawl_precheck(l, browsers[0]));
    assert_null(add(u, l, "Any", "Googlebot|Slurp", "dns:a.com", NULL));
    assert_true(sm_crawl_precheck(l, browsers[0]));
    assert_null(sm_crawl_match(l, browsers[0]));
    assert_string_equal(sm_crawl_match(l, "Slurp")->name, "Any");
}

/* The pre-check's cost, for callgrind (--toggle-collect=precheck_cost):
 * each of four browsers' User-Agents (75 to 145 bytes) against Googlebot
 * and Bingbot, 1000 times; SM_CRAWL_COST_UA=N: only the N-th. */
__attribute__((noinline)) int precheck_cost(const sm_crawl_list *l,
                                            const char *ua);
__attribute__((noinline)) int precheck_cost(const sm_crawl_list *l,
                                            const char *ua)
{
    return sm_crawl_precheck(l, ua);
}

static void test_precheck_cost(void **state)
{
    unit_ctx *u = *state;
    sm_crawl_list *l = two_crawlers(u);
    const char *only = getenv("SM_CRAWL_COST_UA");
    int i, b, n = 0;

    for (b = 0; b < 4; b++)
        for (i = 0; i < 1000; i++)
            if (!only || atoi(only) == b)
                n += precheck_cost(l, browsers[b]);
    assert_int_equal(n, 0);
}

/* sm_crawl_visitor answers as apr_table_get(headers, "User-Agent") and
 * the pre-check do: the first such field (any case), keys alike but not
 * the same never taken for it. */
static const char *visitor_ref(const sm_crawl_list *l, apr_table_t *t)
{
    const char *ua = apr_table_get(t, "User-Agent");

    return sm_crawl_precheck(l, ua) ? ua : NULL;
}

static void test_visitor(void **state)
{
    unit_ctx *u = *state;
    sm_crawl_list *l = two_crawlers(u);
    static const char *keys[] = {
        "User-Agent", "user-agent", "USER-AGENT", "uSeR-aGeNt", "User-Agen",
        "User-Agentx", "User_Agent", "UserAgent", "User-Agent ", "Usar-Agent",
        "Upgrade-Insecure-Requests", "U", "u", "", "Host", "Accept",
        "User-Agent\xff", "Vser-Agent", "User\x0d" "Agent", "UsEr-AgenT",
    };
    const int nk = (int)(sizeof(keys) / sizeof(keys[0]));
    int i, j, found = 0;

    for (i = 0; i < nk; i++)
        for (j = 0; j < nk; j++) {
            apr_table_t *t = apr_table_make(u->pool, 4);
            const char *want, *got;
            apr_table_addn(t, "Host", "example.com");
            apr_table_addn(t, keys[i], googlebot);
            apr_table_addn(t, keys[j], browsers[0]);
            apr_table_addn(t, "Accept", "*/*");
            want = visitor_ref(l, t);
            got = sm_crawl_visitor(l, apr_table_elts(t));
            if (want != got)
                fail_msg("keys '%s', '%s': %s, apr_table_get %s", keys[i],
                         keys[j], got ? got : "NULL", want ? want : "NULL");
            found += got != NULL;
        }
    assert_int_equal(found, 5 * nk);    /* the five spellings first */
    assert_null(sm_crawl_visitor(l, apr_table_elts(apr_table_make(u->pool, 1))));
    {
        apr_table_t *t = apr_table_make(u->pool, 2);
        apr_table_addn(t, "User-Agent", bingbot);
        assert_ptr_equal(sm_crawl_visitor(l, apr_table_elts(t)), bingbot);
        apr_table_addn(t, "User-Agent", browsers[2]);   /* the first counts */
        assert_ptr_equal(sm_crawl_visitor(l, apr_table_elts(t)), bingbot);
        assert_null(sm_crawl_visitor(sm_crawl_list_make(u->pool), apr_table_elts(t)));
    }
}

/* The key's compare may read 16 bytes from it, never into the next page:
 * every key above ends at every distance from an unreadable page, with
 * "User-Agent" past its NUL. */
static void test_visitor_key_page_edges(void **state)
{
    unit_ctx *u = *state;
    sm_crawl_list *l = two_crawlers(u);
    long pg = sysconf(_SC_PAGESIZE);
    char *map = mmap(NULL, (size_t)pg * 2, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    static const char *keys[] = {
        "User-Agent", "user-AGENT", "User-Agen", "User-Agentx", "U", "u",
        "Us", "User-", "User-Agent-", "UserXAgent", "",
    };
    int k, gap, tried = 0;

    assert_true(map != MAP_FAILED);
    assert_int_equal(mprotect(map + pg, (size_t)pg, PROT_NONE), 0);
    for (k = 0; k < (int)(sizeof(keys) / sizeof(keys[0])); k++)
        for (gap = 0; gap < 40; gap++) {
            size_t n = strlen(keys[k]);
            char *key = map + pg - 1 - gap - n;
            apr_table_t *t = apr_table_make(u->pool, 1);
            const char *want;
            memset(map + pg - 80, 'x', 80);
            memcpy(map + pg - 10, "User-Agent", 10);
            memcpy(key, keys[k], n + 1);
            apr_table_addn(t, key, googlebot);
            want = strcasecmp(keys[k], "User-Agent") == 0 ? googlebot : NULL;
            if (sm_crawl_visitor(l, apr_table_elts(t)) != want)
                fail_msg("key '%s' %d before the page's end", keys[k], gap);
            tried++;
        }
    assert_true(tried > 400);
    munmap(map, (size_t)pg * 2);
}

/* The request path's whole crawler cost, for callgrind
 * (--toggle-collect=visitor_cost): a browser's request (Host, User-Agent,
 * Accept, Accept-Language, Accept-Encoding, Connection, Upgrade-Insecure-
 * Requests) with SM_CRAWL_COST_UA's User-Agent (default 2: Firefox),
 * Googlebot and Bingbot configured, 1000 times. */
__attribute__((noinline)) const char *visitor_cost(const sm_crawl_list *l,
                                                   const apr_table_t *t);
__attribute__((noinline)) const char *visitor_cost(const sm_crawl_list *l,
                                                   const apr_table_t *t)
{
    return sm_crawl_visitor(l, apr_table_elts(t));
}

static void test_visitor_cost(void **state)
{
    unit_ctx *u = *state;
    sm_crawl_list *l = two_crawlers(u);
    const char *only = getenv("SM_CRAWL_COST_UA");
    apr_table_t *t = apr_table_make(u->pool, 8);
    int i, n = 0;

    apr_table_addn(t, "Host", "www.example.com");
    apr_table_addn(t, "User-Agent", browsers[only ? atoi(only) & 3 : 2]);
    apr_table_addn(t, "Accept", "text/html,application/xhtml+xml");
    apr_table_addn(t, "Accept-Language", "en-US,en;q=0.5");
    apr_table_addn(t, "Accept-Encoding", "gzip, deflate, br");
    apr_table_addn(t, "Connection", "keep-alive");
    apr_table_addn(t, "Upgrade-Insecure-Requests", "1");
    for (i = 0; i < 1000; i++)
        n += visitor_cost(l, t) != NULL;
    assert_int_equal(n, 0);
}

/* ---- ranges ------------------------------------------------------------------ */

static const char google_json[] =
    "{\n  \"creationTime\": \"2024-01-01T00:00:00.000000\",\n"
    "  \"prefixes\": [\n"
    "    {\"ipv6Prefix\": \"2001:4860:4801:10::/64\"},\n"
    "    {\"ipv4Prefix\": \"66.249.64.0/27\"},\n"
    "    {\"ipv4Prefix\": \"127.0.0.2/32\", \"service\": [1, 2.5e3, true,"
    " null, false, {\"a\": \"\\u00e9\\n\"}]}\n  ]\n}\n";

static sm_crawl_ranges *parse(unit_ctx *u, const char *s, const char **err)
{
    *err = NULL;
    return sm_crawl_ranges_parse(u->pool, s, strlen(s), err);
}

static void test_ranges_parse_and_match(void **state)
{
    unit_ctx *u = *state;
    const char *err;
    sm_crawl_ranges *r = parse(u, google_json, &err);
    apr_sockaddr_t *sa;

    if (!r)
        fail_msg("%s", err);
    assert_int_equal(sm_crawl_ranges_count(r), 3);
    assert_true(sm_crawl_ranges_has_text(r, "66.249.64.0"));
    assert_true(sm_crawl_ranges_has_text(r, "66.249.64.31"));
    assert_false(sm_crawl_ranges_has_text(r, "66.249.64.32"));
    assert_false(sm_crawl_ranges_has_text(r, "66.249.63.255"));
    assert_true(sm_crawl_ranges_has_text(r, "127.0.0.2"));
    assert_false(sm_crawl_ranges_has_text(r, "127.0.0.3"));
    assert_true(sm_crawl_ranges_has_text(r, "2001:4860:4801:10::1"));
    assert_true(sm_crawl_ranges_has_text(r, "2001:4860:4801:10:ffff:ffff:ffff:ffff"));
    assert_false(sm_crawl_ranges_has_text(r, "2001:4860:4801:11::1"));
    /* v4-mapped: the IPv4 ranges */
    assert_true(sm_crawl_ranges_has_text(r, "::ffff:66.249.64.7"));
    assert_false(sm_crawl_ranges_has_text(r, "::ffff:66.249.65.7"));
    assert_false(sm_crawl_ranges_has_text(r, "not an address"));
    /* through apr_sockaddr_t, as the glue gives it */
    assert_int_equal(apr_sockaddr_info_get(&sa, "127.0.0.2", APR_INET, 80, 0,
                                           u->pool), APR_SUCCESS);
    assert_true(sm_crawl_ranges_has(r, sa));
    assert_int_equal(apr_sockaddr_info_get(&sa, "127.0.0.3", APR_INET, 80, 0,
                                           u->pool), APR_SUCCESS);
    assert_false(sm_crawl_ranges_has(r, sa));
    assert_int_equal(apr_sockaddr_info_get(&sa, "2001:4860:4801:10::5",
                                           APR_INET6, 80, 0, u->pool),
                     APR_SUCCESS);
    assert_true(sm_crawl_ranges_has(r, sa));
    assert_int_equal(apr_sockaddr_info_get(&sa, "::ffff:127.0.0.2",
                                           APR_INET6, 80, 0, u->pool),
                     APR_SUCCESS);
    assert_true(sm_crawl_ranges_has(r, sa));

    /* Prefix lengths at their ends */
    r = parse(u, "{\"prefixes\":[{\"ipv4Prefix\":\"0.0.0.0/0\"}]}", &err);
    assert_non_null(r);
    assert_true(sm_crawl_ranges_has_text(r, "1.2.3.4"));
    assert_false(sm_crawl_ranges_has_text(r, "2001:db8::1"));
    r = parse(u, "{\"prefixes\":[{\"ipv6Prefix\":\"2001:db8::1/128\"},"
              "{\"ipv4Prefix\":\"10.0.0.128/25\"}]}", &err);
    assert_non_null(r);
    assert_true(sm_crawl_ranges_has_text(r, "2001:db8::1"));
    assert_false(sm_crawl_ranges_has_text(r, "2001:db8::2"));
    assert_true(sm_crawl_ranges_has_text(r, "10.0.0.200"));
    assert_false(sm_crawl_ranges_has_text(r, "10.0.0.127"));
    /* Empty, and no prefixes member */
    r = parse(u, "{\"prefixes\":[]}", &err);
    assert_int_equal(sm_crawl_ranges_count(r), 0);
    r = parse(u, " {\"syncToken\":\"1\"} ", &err);
    assert_int_equal(sm_crawl_ranges_count(r), 0);
    /* prefixes elsewhere than at the top are not ours */
    r = parse(u, "{\"x\":{\"prefixes\":[{\"ipv4Prefix\":\"1.2.3.4/32\"}]}}",
              &err);
    assert_int_equal(sm_crawl_ranges_count(r), 0);
}

static void refused(unit_ctx *u, const char *json, apr_size_t len,
                    const char *why)
{
    const char *err = NULL;

    if (sm_crawl_ranges_parse(u->pool, json, len, &err))
        fail_msg("accepted: %.60s", json);
    if (!err || !strstr(err, why))
        fail_msg("%.60s: '%s', expected '%s'", json, err ? err : "(null)",
                 why);
}

static void test_ranges_hostile(void **state)
{
    unit_ctx *u = *state;
    struct { const char *json, *why; } t[] = {
        { "", "not a JSON object" },
        { "[]", "not a JSON object" },
        { "{", "a string expected" },
        { "{\"prefixes\":[{\"ipv4Prefix\":\"66.249.64.0/27\"}", "',' or ']' expected" },
        { "{\"prefixes\":[{\"ipv4Prefix\":\"66.249.64.0/27\"", "',' or '}' expected" },
        { "{\"prefixes\":[{\"ipv4Prefix\":\"66.249.64.0/27\"},]}", "a bad value" },
        { "{\"prefixes\":[{\"ipv4Prefix\":\"66.249.64.0/27", "unterminated string" },
        { "{\"a\":1} x", "text after the object" },
        { "{\"a\":01}", "',' or '}' expected" },
        { "{\"a\":1.}", "a bad number" },
        { "{\"a\":tru}", "a bad value" },
        { "{\"a\":\"\\x\"}", "a bad escape" },
        { "{\"a\":\"\\u12\"}", "a bad \\u escape" },
        { "{\"a\":\"\x01\"}", "a control character" },
        { "{\"a\":\"\xff\"}", "not UTF-8" },
        { "{\"a\":\"\xc0\xaf\"}", "not UTF-8" },
        { "{\"a\":\"\xed\xa0\x80\"}", "not UTF-8" },
        { "{\"a\":\"\xe2\x82\"}", "not UTF-8" },
        { "{\"prefixes\":[{\"ipv4Prefix\":\"66.249.64.1/27\"}]}", "no host bits" },
        { "{\"prefixes\":[{\"ipv4Prefix\":\"66.249.64.0/33\"}]}", "not an IPv4 prefix" },
        { "{\"prefixes\":[{\"ipv4Prefix\":\"66.249.64.0\"}]}", "not an IPv4 prefix" },
        { "{\"prefixes\":[{\"ipv4Prefix\":\"66.249.64.0/\"}]}", "not an IPv4 prefix" },
        { "{\"prefixes\":[{\"ipv4Prefix\":\"66.249.64.0/027\"}]}", "not an IPv4 prefix" },
        { "{\"prefixes\":[{\"ipv4Prefix\":\"2001:db8::/32\"}]}", "not an IPv4 prefix" },
        { "{\"prefixes\":[{\"ipv6Prefix\":\"66.249.64.0/27\"}]}", "not an IPv6 prefix" },
        { "{\"prefixes\":[{\"ipv6Prefix\":\"2001:db8::/129\"}]}", "not an IPv6 prefix" },
        { "{\"prefixes\":[{\"ipv4Prefix\":\"66.249.64.0/2x\"}]}", "not an IPv4 prefix" },
        { "{\"prefixes\":[{\"ipv4Prefix\":\"\\u0036\\u0036.1.1.1/32\"}]}", "not an IPv4 prefix" },
        { "{\"prefixes\":[{\"ipv4Prefix\":5}]}", "a string expected" },
    };
    apr_size_t i;
    char *deep, *big;
    int k;

    for (i = 0; i < sizeof(t) / sizeof(t[0]); i++)
        refused(u, t[i].json, strlen(t[i].json), t[i].why);
    /* A NUL inside */
    refused(u, "{\"a\":\"x\0\"}", 9, "a control character");
    /* Nested deeper than allowed, and just allowed */
    deep = apr_palloc(u->pool, 2 * 200 + 16);
    strcpy(deep, "{\"a\":");
    for (k = 0; k < 200; k++)
        strcat(deep, "[");
    refused(u, deep, strlen(deep), "nested too deeply");
    {
        const char *err;
        char ok[128] = "{\"a\":";
        for (k = 0; k < SM_CRAWL_JSON_DEPTH - 1; k++)
            strcat(ok, "[");
        for (k = 0; k < SM_CRAWL_JSON_DEPTH - 1; k++)
            strcat(ok, "]");
        strcat(ok, "}");
        assert_non_null(parse(u, ok, &err));
    }
    /* Huge: over the file bound, refused without reading it */
    big = apr_palloc(u->pool, SM_CRAWL_FILE_MAX + 2);
    memset(big, ' ', SM_CRAWL_FILE_MAX + 1);
    big[0] = '{';
    big[SM_CRAWL_FILE_MAX] = '}';
    refused(u, big, SM_CRAWL_FILE_MAX + 1, "larger than");
    /* Too many prefixes */
    {
        apr_size_t cap = 48 * (SM_CRAWL_PREFIXES_MAX + 2) + 64, at;
        char *many = apr_palloc(u->pool, cap);
        at = (apr_size_t)sprintf(many, "{\"prefixes\":[");
        for (k = 0; k <= SM_CRAWL_PREFIXES_MAX; k++)
            at += (apr_size_t)sprintf(many + at, "%s{\"ipv4Prefix\":"
                                      "\"10.%d.%d.0/24\"}", k ? "," : "",
                                      (k >> 8) & 255, k & 255);
        strcpy(many + at, "]}");
        refused(u, many, strlen(many), "more than 65536 prefixes");
    }
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");

    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void test_ranges_file_reread(void **state)
{
    unit_ctx *u = *state;
    char *path = apr_pstrcat(u->pool, u->dir, "/g.json", NULL);
    char *tmp = apr_pstrcat(u->pool, u->dir, "/g.json.new", NULL);
    char *link = apr_pstrcat(u->pool, u->dir, "/link.json", NULL);
    apr_time_t t0 = apr_time_from_sec(1000000);
    apr_sockaddr_t *two, *three;
    const char *err = NULL;
    sm_crawl_file *f;

    assert_int_equal(apr_sockaddr_info_get(&two, "127.0.0.2", APR_INET, 80,
                                           0, u->pool), APR_SUCCESS);
    assert_int_equal(apr_sockaddr_info_get(&three, "127.0.0.3", APR_INET,
                                           80, 0, u->pool), APR_SUCCESS);
    write_file(path, "{\"prefixes\":[{\"ipv4Prefix\":\"127.0.0.2/32\"}]}");
    f = sm_crawl_file_open(u->pool, path, t0, &err);
    if (!f)
        fail_msg("%s", err);
    assert_true(sm_crawl_file_has(f, two));
    assert_false(sm_crawl_file_has(f, three));

    /* Replaced (a new inode, as curl -o tmp && mv does) */
    write_file(tmp, "{\"prefixes\":[{\"ipv4Prefix\":\"127.0.0.3/32\"}]}");
    assert_int_equal(rename(tmp, path), 0);
    /* Not looked at before SM_CRAWL_RECHECK has passed */
    assert_int_equal(sm_crawl_file_refresh(f, u->pool, t0 + 1, &err), 0);
    assert_true(sm_crawl_file_has(f, two));
    assert_int_equal(sm_crawl_file_refresh(f, u->pool,
                                           t0 + SM_CRAWL_RECHECK, &err), 0);
    assert_false(sm_crawl_file_has(f, two));
    assert_true(sm_crawl_file_has(f, three));
    assert_int_equal(sm_crawl_file_reads(f), 2);
    /* Unchanged: not read again */
    assert_int_equal(sm_crawl_file_refresh(f, u->pool,
                                           t0 + 2 * SM_CRAWL_RECHECK, &err),
                     0);
    assert_int_equal(sm_crawl_file_reads(f), 2);

    /* Broken in place: the ranges read before stay, the error is told */
    write_file(path, "{\"prefixes\":[{\"ipv4Prefix\":\"127.0.0.");
    err = NULL;
    assert_int_equal(sm_crawl_file_refresh(f, u->pool,
                                           t0 + 3 * SM_CRAWL_RECHECK, &err),
                     1);
    assert_non_null(strstr(err, "unterminated string"));
    assert_true(sm_crawl_file_has(f, three));
    assert_int_equal(sm_crawl_file_prefixes(f), 1);

    /* A symbolic link is not followed */
    assert_int_equal(symlink(path, link), 0);
    err = NULL;
    assert_null(sm_crawl_file_open(u->pool, link, t0, &err));
    assert_non_null(strstr(err, "cannot open"));
    /* Nor a file replaced by a link */
    write_file(tmp, "{\"prefixes\":[{\"ipv4Prefix\":\"127.0.0.2/32\"}]}");
    assert_int_equal(unlink(path), 0);
    assert_int_equal(symlink(tmp, path), 0);
    err = NULL;
    assert_int_equal(sm_crawl_file_refresh(f, u->pool,
                                           t0 + 4 * SM_CRAWL_RECHECK, &err),
                     1);
    assert_non_null(err);
    assert_true(sm_crawl_file_has(f, three));
    assert_false(sm_crawl_file_has(f, two));
}

/* The list reads its files and verifies through them. */
static void test_verify_by_ranges(void **state)
{
    unit_ctx *u = *state;
    sm_crawl_list *l = sm_crawl_list_make(u->pool);
    char *path = apr_pstrcat(u->pool, u->dir, "/g.json", NULL);
    apr_sockaddr_t *sa;
    const sm_crawler *c;

    write_file(path, google_json);
    assert_null(add(u, l, "Googlebot", "Googlebot", path, NULL));
    assert_null(sm_crawl_list_open(l, u->pool, apr_time_now()));
    c = sm_crawl_match(l, googlebot);
    assert_non_null(c);
    assert_int_equal(apr_sockaddr_info_get(&sa, "127.0.0.2", APR_INET, 80, 0,
                                           u->pool), APR_SUCCESS);
    assert_int_equal(sm_crawl_verify(c, NULL, sa, 0), SM_CRAWL_VERIFIED);
    assert_int_equal(apr_sockaddr_info_get(&sa, "127.0.0.3", APR_INET, 80, 0,
                                           u->pool), APR_SUCCESS);
    assert_int_equal(sm_crawl_verify(c, NULL, sa, 0), SM_CRAWL_UNVERIFIED);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_directive_errors, unit_setup, unit_teardown),
        cmocka_unit_test_setup_teardown(test_literals, unit_setup, unit_teardown),
        cmocka_unit_test_setup_teardown(test_match, unit_setup, unit_teardown),
        cmocka_unit_test_setup_teardown(test_precheck_no_false_negative, unit_setup, unit_teardown),
        cmocka_unit_test_setup_teardown(test_precheck_off, unit_setup, unit_teardown),
        cmocka_unit_test_setup_teardown(test_precheck_page_edges, unit_setup, unit_teardown),
        cmocka_unit_test_setup_teardown(test_precheck_cost, unit_setup, unit_teardown),
        cmocka_unit_test_setup_teardown(test_visitor, unit_setup, unit_teardown),
        cmocka_unit_test_setup_teardown(test_visitor_key_page_edges, unit_setup, unit_teardown),
        cmocka_unit_test_setup_teardown(test_visitor_cost, unit_setup, unit_teardown),
        cmocka_unit_test_setup_teardown(test_ranges_parse_and_match, unit_setup, unit_teardown),
        cmocka_unit_test_setup_teardown(test_ranges_hostile, unit_setup, unit_teardown),
        cmocka_unit_test_setup_teardown(test_ranges_file_reread, unit_setup, unit_teardown),
        cmocka_unit_test_setup_teardown(test_verify_by_ranges, unit_setup, unit_teardown),
    };
    int rc;

    apr_initialize();
    rc = cmocka_run_group_tests(tests, NULL, NULL);
    apr_terminate();
    return rc;
}
