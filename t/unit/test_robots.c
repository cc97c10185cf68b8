/* Unit tests of the robots.txt scanner: lines added once, line ends,
 * existing lines in any case, bodies split anywhere. */
#include "unit.h"

#include "sm_robots.h"

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
        assert_string_equal(tail_of(p, "User-agent: *\nSITEMAP :  " A "  \n", step, A, NULL),
                            "");
        assert_string_equal(tail_of(p, "sitemap:" A "\r\n", step, A, B),
                            "Sitemap: " B "\r\n");
        /* Present on a last line without a line end. */
        assert_string_equal(tail_of(p, "Disallow:\nSitemap: " A, step, A, NULL), "");
        /* A different Sitemap line is kept and ours added. */
        assert_string_equal(tail_of(p, "Sitemap: https://other.example/s.xml\n", step, A, NULL),
                            "Sitemap: " A "\n");
        /* A BOM before the first line does not hide it. */
        assert_string_equal(tail_of(p, "\xEF\xBB\xBFSitemap: " A "\n", step, A, NULL), "");
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_appends, unit_setup, unit_teardown),
        cmocka_unit_test_setup_teardown(test_not_fooled, unit_setup, unit_teardown),
    };
    apr_initialize();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
