/* SPDX-License-Identifier: Apache-2.0 */
/* Unit tests of the images a head declares (sm_head_images.c): og:image,
 * twitter:image and <link rel="image_src">, found by the head reader
 * whatever the chunks (fed whole, at every cut, byte by byte) and
 * resolved against the page and its <base href> as canonicals are. */
#include "unit.h"

#include <string.h>

#include "head/sm_head.h"

#define POOL(state) (((unit_ctx *)*(state))->pool)

static const char *found(apr_pool_t *p, sm_head *h)
{
    const sm_head_result *r = sm_head_result_get(h);
    const char *s = "";
    int i;

    for (i = 0; r->images && i < r->images->nelts; i++) {
        const sm_head_image *x = &APR_ARRAY_IDX(r->images, i, sm_head_image);
        s = apr_psprintf(p, "%s%s%d:%s", s, i ? " " : "", x->form, x->href);
    }
    return s;
}

/* The images of doc ("form:href" joined by spaces), the same fed whole,
 * cut once anywhere, and byte by byte. */
static const char *scan(apr_pool_t *p, const char *doc)
{
    apr_size_t len = strlen(doc), i, cut;
    sm_head *h = sm_head_create(p);
    const char *whole;

    sm_head_feed(h, doc, len);
    whole = found(p, h);
    for (cut = 0; cut <= len; cut++) {
        h = sm_head_create(p);
        if (!sm_head_feed(h, doc, cut))
            sm_head_feed(h, doc + cut, len - cut);
        assert_string_equal(whole, found(p, h));
    }
    h = sm_head_create(p);
    for (i = 0; i < len; i++)
        sm_head_feed(h, doc + i, 1);
    assert_string_equal(whole, found(p, h));
    return whole;
}

static void test_forms(void **state)
{
    apr_pool_t *p = POOL(state);

    assert_string_equal(scan(p, "<head><title>t</title></head>"), "");
    assert_null(sm_head_result_get(sm_head_create(p))->images);
    assert_string_equal(
        scan(p, "<meta property=\"og:image\" content=\"/a.png\">"
                "<meta name='twitter:image' content='https://ex.com/b.jpg'>"
                "<link rel=image_src href=c.gif>"),
        "0:/a.png 1:https://ex.com/b.jpg 2:c.gif");
    /* Either attribute, any case, the variants; entities decoded. */
    assert_string_equal(
        scan(p, "<META NAME=OG:IMAGE CONTENT=/a.png>"
                "<meta property=twitter:image content=/b.png>"
                "<meta property=og:image:secure_url content=/c.png>"
                "<meta property=og:image:url content='/d.png?a=1&amp;b=2'>"
                "<meta name=twitter:image:src content=/e.png>"
                "<link REL='Image_Src' HREF=/f.png>"),
        "0:/a.png 1:/b.png 0:/c.png 0:/d.png?a=1&b=2 1:/e.png 2:/f.png");
    /* Not images: other properties, no content, empty, other rels, and
     * duplicates (kept once). */
    assert_string_equal(
        scan(p, "<meta property=og:image:width content=800>"
                "<meta property=og:title content=/x.png>"
                "<meta name=twitter:card content=summary_large_image>"
                "<meta property=og:image>"
                "<meta property=og:image content=''>"
                "<meta property=og:image content='  '>"
                "<link rel=icon href=/i.png>"
                "<link rel=image_srcx href=/j.png>"
                "<meta property=og:image content=/a.png>"
                "<meta name=twitter:image content=/a.png>"),
        "0:/a.png");
    /* Not in the head: a body's tags, a script's text, a comment. */
    assert_string_equal(
        scan(p, "<script>'<meta property=og:image content=/s.png>'</script>"
                "<!-- <link rel=image_src href=/c.png> -->"
                "<body><meta property=og:image content=/b.png>"),
        "");
}

static void test_bounded(void **state)
{
    apr_pool_t *p = POOL(state);
    const char *doc = "";
    const sm_head_result *r;
    sm_head *h = sm_head_create(p);
    int i;

    for (i = 0; i < 3 * SM_HEAD_MAX_IMAGES; i++)
        doc = apr_psprintf(p, "%s<meta property=og:image content=/o%d.png>"
                              "<meta name=twitter:image content=/t%d.png>",
                           doc, i, i);
    sm_head_feed(h, doc, strlen(doc));
    r = sm_head_result_get(h);
    assert_int_equal(r->images->nelts, 2 * SM_HEAD_MAX_IMAGES);
    assert_string_equal(APR_ARRAY_IDX(r->images, 1, sm_head_image).href,
                        "/t0.png");
}

static void test_resolve(void **state)
{
    apr_pool_t *p = POOL(state);
    apr_array_header_t *hosts = apr_array_make(p, 1, sizeof(char *));
    apr_array_header_t *out;
    const char *doc =
        "<base href='/dir/'>"
        "<meta property=og:image content='a b.png?w=1&amp;h=2#frag'>"
        "<meta name=twitter:image content='//cdn.example.net/x.png'>"
        "<meta property=og:image:url content='https://EX.com:443/y.png'>"
        "<link rel=image_src href='https://other.example/z.png'>"
        "<meta property=og:image:secure_url content='data:image/png,x'>"
        "<meta property=og:image content='https://ex.com/y.png'>";
    sm_head *h = sm_head_create(p);

    sm_head_feed(h, doc, strlen(doc));
    out = sm_head_images_resolve(p, sm_head_result_get(h), "https://ex.com",
                                 "/page/x.html", NULL);
    assert_int_equal(out->nelts, 2);
    assert_string_equal(APR_ARRAY_IDX(out, 0, const char *),
                        "https://ex.com/dir/a%20b.png?w=1&h=2");
    assert_string_equal(APR_ARRAY_IDX(out, 1, const char *),
                        "https://ex.com/y.png");
    APR_ARRAY_PUSH(hosts, const char *) = "CDN.example.net";
    out = sm_head_images_resolve(p, sm_head_result_get(h), "https://ex.com",
                                 "/page/x.html", hosts);
    assert_int_equal(out->nelts, 3);
    assert_string_equal(APR_ARRAY_IDX(out, 1, const char *),
                        "https://cdn.example.net/x.png");
    /* No images: an empty array. */
    h = sm_head_create(p);
    out = sm_head_images_resolve(p, sm_head_result_get(h), "https://ex.com",
                                 "/", hosts);
    assert_int_equal(out->nelts, 0);
    assert_int_equal(sm_image_host_allowed(p, "http://ex.com",
                                           "https://ex.com", NULL), 0);
    assert_int_equal(sm_image_host_allowed(p, "http://cdn.example.net:8080",
                                           "https://ex.com", hosts), 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_forms, unit_setup,
                                        unit_teardown),
        cmocka_unit_test_setup_teardown(test_bounded, unit_setup,
                                        unit_teardown),
        cmocka_unit_test_setup_teardown(test_resolve, unit_setup,
                                        unit_teardown),
    };
    apr_initialize();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
