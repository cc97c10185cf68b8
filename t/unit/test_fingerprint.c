/* SPDX-License-Identifier: Apache-2.0 */
/* Unit tests of the content fingerprint: what changes per request leaves
 * it alone, what changes the page moves it, and where the body is split
 * never matters. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <apr_general.h>
#include <apr_pools.h>

#include <string.h>

#include "head/sm_fingerprint.h"

static apr_pool_t *pool;

static apr_uint64_t fp_chunked(const char *doc, apr_size_t chunk)
{
    sm_fingerprint *fp = sm_fingerprint_create(pool);
    apr_size_t len = strlen(doc), i;

    for (i = 0; i < len; i += chunk)
        sm_fingerprint_feed(fp, doc + i, len - i < chunk ? len - i : chunk);
    return sm_fingerprint_end(fp);
}

static apr_uint64_t fp_of(const char *doc)
{
    return fp_chunked(doc, strlen(doc) ? strlen(doc) : 1);
}

#define PAGE(head, body) \
    "<!DOCTYPE html><html><head><title>Hello</title>" head "</head>" \
    "<body><h1>Hello world</h1>" body "</body></html>"

static void test_split_anywhere(void **state)
{
    const char *doc = PAGE("<script nonce=\"abc\">var t = '</p>';</script>",
                           "<!-- served in 0.1 s --><p class='x'>a &amp; b"
                           "</p><input type=hidden name=n value=1>");
    apr_uint64_t whole = fp_of(doc);
    apr_size_t k;
    (void)state;

    for (k = 1; k < 40; k++)
        assert_true(fp_chunked(doc, k) == whole);
}

static void test_per_request_parts_ignored(void **state)
{
    apr_uint64_t base = fp_of(PAGE(
        "<script>var rid = 'a1';</script><style>.a{}</style>"
        "<meta name=\"csrf-token\" content=\"t1\">",
        "<!-- NewPP limit report 0.01 s --><form><input type=\"hidden\" "
        "name=\"_wpnonce\" value=\"n1\"><input name=q></form>"
        "<script nonce=\"x1\" src=\"/a.js\"></script>"
        "<div data-nonce=\"d1\">text</div>"));
    apr_uint64_t again = fp_of(PAGE(
        "<script>var rid = 'zz9'; if (a < b) {}</script>"
        "<style>.b{color:red}</style>"
        "<meta name=\"CSRF-Token\" content=\"other\">",
        "<!-- NewPP limit report 0.73 s -->  <form><INPUT TYPE=HIDDEN "
        "name=\"_wpnonce\" value=\"n2\"><input name=q></form>"
        "<script nonce='x2' src=\"/a.js\"></script>\n\n"
        "<div data-nonce=\"d2\">text</div>"));
    (void)state;

    assert_true(base == again);
}

static void test_changes_move_it(void **state)
{
    apr_uint64_t base = fp_of(PAGE("", "<p>one</p><a href=\"/a\">a</a>"));
    (void)state;

    assert_true(base != fp_of(PAGE("", "<p>two</p><a href=\"/a\">a</a>")));
    assert_true(base != fp_of(PAGE("", "<p>one</p><a href=\"/b\">a</a>")));
    assert_true(base != fp_of(PAGE("<meta name=robots content=noindex>",
                                   "<p>one</p><a href=\"/a\">a</a>")));
    assert_true(base != fp_of(PAGE("<link rel=canonical href=/x>",
                                   "<p>one</p><a href=\"/a\">a</a>")));
    /* a visible input's value is content */
    assert_true(fp_of("<input name=a value=1>")
                != fp_of("<input name=a value=2>"));
    /* text after a script still counts */
    assert_true(fp_of("<script>x</script>after")
                != fp_of("<script>x</script>later"));
    /* a '<' that starts no tag is text */
    assert_true(fp_of("a < b") != fp_of("a < c"));
    assert_true(fp_of("") != 0);
}

static void test_whitespace_runs(void **state)
{
    (void)state;
    assert_true(fp_of("<p>a b</p>") == fp_of("<p>a \n\t b</p>"));
    assert_true(fp_of("<p>a b</p>") != fp_of("<p>ab</p>"));
    assert_true(fp_of("<P CLASS=\"x\">a</P>") == fp_of("<p class='x'>a</p>"));
}

static void test_limit_and_tag(void **state)
{
    sm_fingerprint *fp = sm_fingerprint_create(pool);
    static char big[64 * 1024];
    apr_size_t fed = 0;
    int done = 0;
    (void)state;

    memset(big, 'a', sizeof(big));
    while (!done && fed < 2 * SM_FP_LIMIT) {
        done = sm_fingerprint_feed(fp, big, sizeof(big));
        fed += sizeof(big);
    }
    assert_true(done);
    assert_true(fed >= SM_FP_LIMIT && fed < SM_FP_LIMIT + sizeof(big) + 1);
    assert_string_equal(sm_fingerprint_tag(pool, 0x1fULL),
                        "fp:000000000000001f");
    assert_true(sm_fingerprint_is_tag("fp:000000000000001f"));
    assert_false(sm_fingerprint_is_tag("\"fp:1\""));
    assert_false(sm_fingerprint_is_tag(NULL));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_split_anywhere),
        cmocka_unit_test(test_per_request_parts_ignored),
        cmocka_unit_test(test_changes_move_it),
        cmocka_unit_test(test_whitespace_runs),
        cmocka_unit_test(test_limit_and_tag),
    };
    int rc;

    apr_initialize();
    apr_pool_create(&pool, NULL);
    rc = cmocka_run_group_tests(tests, NULL, NULL);
    apr_pool_destroy(pool);
    apr_terminate();
    return rc;
}
