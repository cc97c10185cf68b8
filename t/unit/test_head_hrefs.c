/* SPDX-License-Identifier: Apache-2.0 */
/* Unit tests of the hrefs a head names (hreflang alternates, canonicals)
 * written as pages write them and browsers read them: a literal space or
 * other byte a URL may not hold (percent-encoded), an internationalised
 * host (its A-label, xn--, form). */
#include "unit.h"

#include <string.h>

#include "head/sm_alternates.h"
#include "head/sm_head.h"

#define POOL(state) (((unit_ctx *)*(state))->pool)

/* What the head reader and sm_alternates_from_head store for head, fed
 * whole and byte by byte (the same either way). */
static const char *stored(apr_pool_t *p, const char *head)
{
    apr_array_header_t *allow = apr_array_make(p, 1, sizeof(char *));
    const char *whole, *bytes;
    sm_head *h = sm_head_create(p);
    apr_size_t i, len = strlen(head);

    APR_ARRAY_PUSH(allow, const char *) = "q";
    sm_head_feed(h, head, len);
    whole = sm_alternates_from_head(p, sm_head_result_get(h)->alternates,
                                    "https://ex.com", "/dir/page.html",
                                    allow);
    h = sm_head_create(p);
    for (i = 0; i < len; i++)
        sm_head_feed(h, head + i, 1);
    bytes = sm_alternates_from_head(p, sm_head_result_get(h)->alternates,
                                    "https://ex.com", "/dir/page.html",
                                    allow);
    assert_string_equal(whole, bytes);
    assert_true(sm_alternates_valid(p, whole));
    return whole;
}

static void test_alternate_with_blanks(void **state)
{
    apr_pool_t *p = POOL(state);

    assert_string_equal(stored(p,
        "<link rel=alternate hreflang=de href=\"https://ex.com/a b.html\">"
        "<link rel=alternate hreflang=fr href='https://ex.com/f r/?q=a b'>"
        "<link rel=alternate hreflang=it href=\" https://ex.com/i\tt\n\">"
        "<link rel=alternate hreflang=es href=\"https://ex.com/\x01\x7f\">"
        "<link rel=alternate hreflang=pt href=\"https://ex.com/caf\xc3\xa9"
        "?q=\xe2\x82\xac\">"),
        "de https://ex.com/a%20b.html\n"
        "fr https://ex.com/f%20r/?q=a%20b\n"
        "it https://ex.com/it\n"
        "pt https://ex.com/caf%C3%A9?q=%E2%82%AC");
    /* (es: control characters are never stored, so it is dropped) */
    /* a blank in the host is no host */
    assert_string_equal(stored(p,
        "<link rel=alternate hreflang=de href=\"https://ex .com/a\">"), "");
}

static void test_alternate_idn_host(void **state)
{
    apr_pool_t *p = POOL(state);

    assert_string_equal(stored(p,
        "<link rel=alternate hreflang=de href=\"https://b\xc3\xbc"
        "cher.example/x\">"
        "<link rel=alternate hreflang=fr href=\"https://B\xc3\x9c"
        "CHER.EXAMPLE:8443/y z\">"
        "<link rel=alternate hreflang=it href=\"https://b%C3%BCcher.example"
        "/\">"
        "<link rel=alternate hreflang=ja href=\"https://\xe4\xbe\x8b\xe3\x81"
        "\x88.\xe3\x83\x86\xe3\x82\xb9\xe3\x83\x88/\">"
        "<link rel=alternate hreflang=en href=\"https://xn--bcher-kva."
        "example/\">"),
        "de https://xn--bcher-kva.example/x\n"
        "fr https://xn--bcher-kva.example:8443/y%20z\n"
        "it https://xn--bcher-kva.example/\n"
        "ja https://xn--r8jz45g.xn--zckzah/\n"
        "en https://xn--bcher-kva.example/");
    /* what IDNA refuses, a bad escape, a NUL: left out */
    assert_string_equal(stored(p,
        "<link rel=alternate hreflang=de href=\"https://b\xc3\xbc"
        "cher..example/\">"
        "<link rel=alternate hreflang=fr href=\"https://b\xff.example/\">"
        "<link rel=alternate hreflang=it href=\"https://b%C3%B.example/\">"
        "<link rel=alternate hreflang=es href=\"https://b%00\xc3\xbc"
        ".example/\">"
        "<link rel=alternate hreflang=pt href=\"https://\xc3\xbc@ex.com/\">"),
        "");
}

static int names_other(apr_pool_t *p, const char *canonical,
                       const char *site, const char *url)
{
    sm_head_result r;

    memset(&r, 0, sizeof(r));
    r.canonical = canonical;
    return sm_head_names_other(p, &r, site, url, url, NULL);
}

static void test_canonical_forms(void **state)
{
    apr_pool_t *p = POOL(state);
    const char *base, *target;

    /* the canonical shares the resolver: the page itself however written */
    assert_false(names_other(p, "https://ex.com/a b.html", "https://ex.com",
                             "/a%20b.html"));
    assert_false(names_other(p, "https://b\xc3\xbc" "cher.example/a b",
                             "https://xn--bcher-kva.example", "/a%20b"));
    assert_false(names_other(p, "//B\xc3\x9c" "CHER.example/a b",
                             "https://xn--bcher-kva.example", "/a%20b"));
    assert_true(names_other(p, "https://b\xc3\xbc" "cher.example/other",
                            "https://xn--bcher-kva.example", "/a"));
    assert_true(sm_head_resolve(p, "https://ex.com", "/", "https://b\xc3\xbc"
                                "cher.example:8080/x?y", &base, &target));
    assert_string_equal(base, "https://xn--bcher-kva.example:8080");
    assert_string_equal(target, "/x?y");
    assert_false(sm_head_resolve(p, "https://ex.com", "/", "https://\xff/",
                                 &base, &target));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_alternate_with_blanks,
                                        unit_setup, unit_teardown),
        cmocka_unit_test_setup_teardown(test_alternate_idn_host,
                                        unit_setup, unit_teardown),
        cmocka_unit_test_setup_teardown(test_canonical_forms,
                                        unit_setup, unit_teardown),
    };
    apr_initialize();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
