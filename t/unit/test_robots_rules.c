/* SPDX-License-Identifier: Apache-2.0 */
/* Unit tests of robots.txt rules (RFC 9309): groups, agents, longest
 * match, Allow on a tie, '*' and '$', encodings, line numbers. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <apr_general.h>
#include <apr_pools.h>

#include <string.h>

#include "record/sm_robots_rules.h"

static apr_pool_t *pool;

static sm_robots_rules *parse(const char *body)
{
    return sm_robots_rules_parse(pool, body, strlen(body));
}

static int blocked(const sm_robots_rules *r, const char *agent,
                   const char *path)
{
    return sm_robots_disallows(r, agent, path, NULL);
}

static void test_groups_and_agents(void **state)
{
    sm_robots_rules *r = parse(
        "# comment\n"
        "User-agent: *\n"
        "Disallow: /private/\n"
        "\n"
        "User-agent: Googlebot\n"
        "User-agent: bingbot/2.0\n"
        "Disallow: /nogoogle\n"
        "Sitemap: https://ex.com/s.xml\n"
        "User-agent: other\n"
        "Disallow: /\n");
    int line = 0;
    (void)state;

    assert_true(sm_robots_disallows(r, "*", "/private/a", &line));
    assert_int_equal(line, 3);
    /* Googlebot follows its own group only */
    assert_false(blocked(r, "googlebot", "/private/a"));
    assert_true(sm_robots_disallows(r, "googlebot", "/nogoogle.html", &line));
    assert_int_equal(line, 7);
    assert_true(blocked(r, "bingbot", "/nogoogle"));
    assert_false(blocked(r, "*", "/nogoogle"));
    assert_false(blocked(r, "*", "/public"));
    /* any of the three */
    assert_true(sm_robots_disallows_any(r, "/private/x", NULL, NULL));
    assert_true(sm_robots_disallows_any(r, "/nogoogle", NULL, NULL));
    assert_false(sm_robots_disallows_any(r, "/ok", NULL, NULL));
}

static void test_longest_match_and_tie(void **state)
{
    sm_robots_rules *r = parse(
        "User-agent: *\r\n"
        "Disallow: /a\r\n"
        "Allow: /a/b\r\n"
        "Disallow: /a/b/c\r\n"
        "Allow: /x\r\n"
        "Disallow: /x\r\n"
        "Disallow:\r\n");
    (void)state;

    assert_true(blocked(r, "*", "/a"));
    assert_true(blocked(r, "*", "/a/z"));
    assert_false(blocked(r, "*", "/a/b"));
    assert_true(blocked(r, "*", "/a/b/c/d"));
    assert_false(blocked(r, "*", "/x"));          /* Allow wins a tie */
    assert_false(blocked(r, "*", "/"));
}

static void test_wildcards(void **state)
{
    sm_robots_rules *r = parse(
        "user-agent: *\n"
        "disallow: /*.pdf$\n"
        "disallow: /*?replytocom=\n"
        "disallow: /search$\n"
        "disallow: *private*\n"
        "allow: /search$x\n");
    (void)state;

    assert_true(blocked(r, "*", "/a/b.pdf"));
    assert_false(blocked(r, "*", "/a/b.pdf?x=1"));
    assert_true(blocked(r, "*", "/post/?replytocom=5"));
    assert_true(blocked(r, "*", "/search"));
    assert_false(blocked(r, "*", "/search/x"));
    assert_true(blocked(r, "*", "/my-private-page"));
    assert_false(blocked(r, "*", "/public"));
}

static void test_encodings_and_junk(void **state)
{
    sm_robots_rules *r = parse(
        "\xEF\xBB\xBFUser-agent: *\n"
        "Disallow: /caf\xC3\xA9/\n"
        "Disallow: /%7euser/\n"
        "Disallow: /a%2fb\n"
        "Nonsense line\n"
        "Disallow : /spaced\n"
        "Disallow: relative\n");
    (void)state;

    assert_true(blocked(r, "*", "/caf%C3%A9/menu"));
    assert_true(blocked(r, "*", "/~user/x"));
    assert_true(blocked(r, "*", "/a%2Fb"));
    assert_false(blocked(r, "*", "/a/b"));
    assert_true(blocked(r, "*", "/spaced"));
    assert_false(blocked(r, "*", "/relative"));
    /* rules before any User-agent line and an empty file: nothing */
    assert_false(blocked(parse("Disallow: /\n"), "*", "/x"));
    assert_false(blocked(parse(""), "googlebot", "/x"));
}

static void test_bounded(void **state)
{
    static char big[SM_ROBOTS_RULES_MAX + 64];
    const char *tail = "\nUser-agent: *\nDisallow: /late\n";
    sm_robots_rules *r;
    (void)state;

    memset(big, '#', sizeof(big));
    memcpy(big + sizeof(big) - strlen(tail), tail, strlen(tail));
    r = sm_robots_rules_parse(pool, big, sizeof(big));
    assert_false(blocked(r, "*", "/late"));   /* past the 500 KiB read */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_groups_and_agents),
        cmocka_unit_test(test_longest_match_and_tie),
        cmocka_unit_test(test_wildcards),
        cmocka_unit_test(test_encodings_and_junk),
        cmocka_unit_test(test_bounded),
    };
    int rc;

    apr_initialize();
    apr_pool_create(&pool, NULL);
    rc = cmocka_run_group_tests(tests, NULL, NULL);
    apr_pool_destroy(pool);
    apr_terminate();
    return rc;
}
