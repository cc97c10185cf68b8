/* SPDX-License-Identifier: Apache-2.0 */
/* Unit tests of the robots.txt scanner: lines added once, line ends,
 * existing lines in any case, bodies split anywhere. */
#include "unit.h"

#include "serve/sm_robots.h"

#include <string.h>

static apr_array_header_t *urls(apr_pool_t *p, const char *a, const char *b)
{
    apr_array_header_t *u = apr_array_make(p, 2, sizeof(char *));
    APR_ARRAY_PUSH(u, const char *) = a;
    if (b)
        APR_ARRAY_PUSH(u, const char *) = b;
    return u;
}

/* Feed body in pieces of `step` bytes; return the tail. */
static const char *tail_of(apr_pool_t *p, const char *body, apr_size_t step,
                           const char *a, const char *b)
{
    sm_robots *rb = sm_robots_create(p, urls(p, a, b));
    apr_size_t len = strlen(body), off, n;

    for (off = 0; off < len; off += step) {
        n = len - off < step ? len - off : step;
        sm_robots_feed(rb, body + off, n);
    }
    return sm_robots_tail(rb, p, &n);
}

#define A "https://h.example/sitemap.xml"
#define B "https://cdn.example/more.xml"

static void test_appends(void **state)
{
    unit_ctx *u = *state;
    apr_pool_t *p = u->pool;
    apr_size_t step;

    for (step = 1; step <= 64; step++) {
        assert_string_equal(tail_of(p, "User-agent: *\nDisallow:\n", step, A, NULL),
                            "Sitemap: " A "\n");
        /* No final newline: one is added first. */
        assert_string_equal(tail_of(p, "User-agent: *\nDisallow: /x", step, A, NULL),
                            "\nSitemap: " A "\n");
        /* CRLF bodies get CRLF lines. */
        assert_string_equal(tail_of(p, "User-agent: *\r\nDisallow:\r\n", step, A, NULL),
                            "Sitemap: " A "\r\n");
        assert_string_equal(tail_of(p, "User-agent: *\r\nDisallow:", step, A, B),
                            "\r\nSitemap: " A "\r\nSitemap: " B "\r\n");
        /* Already there, in another case and with blanks: not again. */
        assert_string_equal(tail_of(p, "User-agent: *\nSITEMAP:  " A "  \n", step, A, NULL),
                            "");
        assert_string_equal(tail_of(p, " \tsItEmAp:\t" A "\t \r\n", step, A, NULL),
                            "");
        assert_string_equal(tail_of(p, "sitemap:" A "\r\n", step, A, B),
                            "Sitemap: " B "\r\n");
        /* Present on a last line without a line end. */
        assert_string_equal(tail_of(p, "Disallow:\nSitemap: " A, step, A, NULL), "");
        /* A different Sitemap line is kept and ours added. */
        assert_string_equal(tail_of(p, "Sitemap: https://other.example/s.xml\n", step, A, NULL),
                            "Sitemap: " A "\n");
        /* A BOM makes the first line another field for urllib and
         * Protego: ours is added; a later line is fine. */
        assert_string_equal(tail_of(p, "\xEF\xBB\xBFSitemap: " A "\n", step, A, NULL),
                            "Sitemap: " A "\n");
        assert_string_equal(tail_of(p, "\xEF\xBB\xBF\nSitemap: " A "\n", step, A, NULL),
                            "");
        assert_string_equal(tail_of(p, "\xEF\xBB\xBFUser-agent: *\nSitemap: " A "\n",
                                    step, A, NULL), "");
    }
    /* An empty body: just the lines. */
    assert_string_equal(tail_of(p, "", 1, A, NULL), "Sitemap: " A "\n");
}

static void test_not_fooled(void **state)
{
    unit_ctx *u = *state;
    apr_pool_t *p = u->pool;

    /* A prefix of the URL, a longer URL, a comment, another field. */
    assert_string_equal(tail_of(p, "Sitemap: " A "x\n", 7, A, NULL),
                        "Sitemap: " A "\n");
    assert_string_equal(tail_of(p, "# Sitemap: " A "\n", 7, A, NULL),
                        "Sitemap: " A "\n");
    assert_string_equal(tail_of(p, "Sitemaps: " A "\n", 7, A, NULL),
                        "Sitemap: " A "\n");
    /* Forms some parser does not read as this URL: a blank before the
     * colon (Scrapy skips the line), a comment after the URL (Scrapy keeps
     * it), no colon (only Google and Protego take a blank instead), other
     * white space, a BOM-like prefix not at the start. */
    {
        static const char *const doubtful[] = {
            "SITEMAP :\t" A "  \n", "Sitemap\t: " A "\n", "Sitemap: " A " # ours\n",
            "Sitemap " A "\n", "Sitemap:\v" A "\n", "\fSitemap: " A "\n",
            "Disallow: /\n\xEF\xBB\xBFSitemap: " A "\n", "Site-map: " A "\n",
            "Sitemap: " A "\rDisallow: /\n", "Sitemap: <" A ">\n",
        };
        apr_size_t i;
        for (i = 0; i < sizeof(doubtful) / sizeof(*doubtful); i++)
            assert_string_equal(tail_of(p, doubtful[i], 3, A, NULL), "Sitemap: " A "\n");
    }
    /* A very long line is skipped, not overflowed. */
    {
        char *big = apr_palloc(p, 20001);
        memset(big, 'x', 20000);
        big[20000] = '\0';
        assert_string_equal(tail_of(p, apr_pstrcat(p, big, "\nSitemap: " A "\n", NULL),
                                    4096, A, NULL), "");
        assert_string_equal(tail_of(p, apr_pstrcat(p, "Sitemap: " A, big, "\n", NULL),
                                    999, A, NULL), "Sitemap: " A "\n");
    }
}

/* Feed body in pieces of step bytes; return what goes at its start. */
static const char *head_of(apr_pool_t *p, const char *body, apr_size_t step,
                           apr_size_t *offset)
{
    sm_robots *rb = sm_robots_create(p, urls(p, A, B));
    apr_size_t len = strlen(body), off, n;

    for (off = 0; off < len; off += step) {
        n = len - off < step ? len - off : step;
        sm_robots_feed(rb, body + off, n);
    }
    return sm_robots_head(rb, p, &n, offset);
}

static void test_head(void **state)
{
    unit_ctx *u = *state;
    apr_pool_t *p = u->pool;
    apr_size_t step, off;

    for (step = 1; step <= 8; step++) {
        /* The missing lines, ending like the first line; after a BOM. */
        assert_string_equal(head_of(p, "User-agent: *\r\nDisallow:\n", step, &off),
                            "Sitemap: " A "\r\nSitemap: " B "\r\n");
        assert_int_equal(off, 0);
        assert_string_equal(head_of(p, "\xEF\xBB\xBFUser-agent: *\nDisallow:\r\n", step,
                                    &off), "\nSitemap: " A "\nSitemap: " B "\n");
        assert_int_equal(off, 3);
        /* Not a BOM: a byte of it only. */
        head_of(p, "\xEF\xBBUser-agent: *\n", step, &off);
        assert_int_equal(off, 0);
        /* Found by t/fuzz/fuzz_robots: a mismatch in an earlier piece was
         * forgotten, so "si\xBF" fed a byte at a time was taken for a
         * BOM (its last byte matched) and the lines went after it. */
        head_of(p, "si\xBFtemap: x\n", step, &off);
        assert_int_equal(off, 0);
        head_of(p, "\xEFX\xBF\n", step, &off);
        assert_int_equal(off, 0);
        /* Present in what was seen: not again.  A line still in
         * progress (it may go on) does not count. */
        assert_string_equal(head_of(p, "Sitemap: " B "\nDisallow: /x\n", step, &off),
                            "Sitemap: " A "\n");
        assert_string_equal(head_of(p, "Disallow: /x\nSitemap: " B, step, &off),
                            "Sitemap: " A "\nSitemap: " B "\n");
        /* No line end seen yet: LF. */
        assert_string_equal(head_of(p, "Disallow: /x", step, &off),
                            "Sitemap: " A "\nSitemap: " B "\n");
    }
}

static void expect_problem(apr_pool_t *p, const char *url, const char *needle)
{
    const char *why = sm_robots_url_problem(p, url);
    if (!why || !strstr(why, needle))
        fail_msg("%s: %s (wanted \"%s\")", url, why ? why : "accepted", needle);
}

static void test_url_problem(void **state)
{
    unit_ctx *u = *state;
    apr_pool_t *p = u->pool;
    static const char *const fine[] = {
        "https://www.example.com/news-sitemap.xml", "http://example.org:8080/a/b.xml?x=1&y=2",
        "https://h.example/s%C3%A9.xml", "HTTPS://[::1]:8443/a;b=c/~d/(e)/f*g!h$i'j,k+l@m.xml",
    };
    apr_size_t i;

    for (i = 0; i < sizeof(fine) / sizeof(*fine); i++)
        assert_null(sm_robots_url_problem(p, fine[i]));
    expect_problem(p, "https://h.example/s.xml#frag", "'#'");
    expect_problem(p, "https://h.example/#", "'#'");
    expect_problem(p, "https://h.example/a b.xml", "0x20");
    expect_problem(p, "https://h.example/a\tb.xml", "0x09");
    expect_problem(p, "https://h.example/\x7f.xml", "0x7F");
    expect_problem(p, "https://h.example/s\xC3\xA9.xml", "0xC3");
    expect_problem(p, "https://h.example/a\"b.xml", "0x22");
    expect_problem(p, "https://h.example/a<b>.xml", "0x3C");
    expect_problem(p, "https://h.example/a{b}.xml", "0x7B");
    expect_problem(p, "https://h.example/a|b.xml", "0x7C");
    expect_problem(p, "https://h.example/a\\b.xml", "0x5C");
    expect_problem(p, "https://h.example/a%2.xml", "%-escape");
    expect_problem(p, "https://h.example/a%zz.xml", "%-escape");
    expect_problem(p, "https://h.example/a%", "%-escape");
    expect_problem(p, "/news-sitemap.xml", "absolute");
    expect_problem(p, "ftp://h.example/s.xml", "absolute");
    expect_problem(p, "http:///s.xml", "absolute");
    {
        char *url = apr_pstrcat(p, "https://h.example/", NULL);
        while (strlen(url) < 2048)
            url = apr_pstrcat(p, url, "a", NULL);
        assert_null(sm_robots_url_problem(p, url));
        expect_problem(p, apr_pstrcat(p, url, "b", NULL), "2,048");
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_appends, unit_setup, unit_teardown),
        cmocka_unit_test_setup_teardown(test_not_fooled, unit_setup, unit_teardown),
        cmocka_unit_test_setup_teardown(test_head, unit_setup, unit_teardown),
        cmocka_unit_test_setup_teardown(test_url_problem, unit_setup, unit_teardown),
    };
    apr_initialize();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
