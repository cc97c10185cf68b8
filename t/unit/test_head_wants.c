/* SPDX-License-Identifier: Apache-2.0 */
/* Unit tests of the scanner that reads only what the configuration uses
 * (sm_head_create_ex: no images without SitemapImages On, no description
 * or publication time without a news sitemap or llms.txt): on every
 * real head (bench/cms_page.html, t/fuzz/corpus/head), on pages written
 * to catch a field read by the wrong branch, and on those heads mutated
 * at random, it reads robots, the canonical, the alternates, <base> and
 * the title exactly as sm_head_create's scanner does, whole and cut at
 * every byte, and leaves what it does not want unset. */
#include "unit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <apr_file_info.h>
#include <apr_strings.h>

#include "head/sm_head.h"

/* The answer for doc[0..len) cut at cut, of what wants names besides
 * what every scanner reads: one string. */
static const char *answer(apr_pool_t *p, const char *doc, apr_size_t len,
                          apr_size_t cut, unsigned make, unsigned wants)
{
    sm_head *h = sm_head_create_ex(p, make);
    const sm_head_result *r;
    int news = (wants & SM_HEAD_WANT_NEWS) != 0, i;
    const char *s;

    if (!sm_head_feed(h, doc, cut))
        sm_head_feed(h, doc + cut, len - cut);
    r = sm_head_result_get(h);
    if (!(make & SM_HEAD_WANT_IMAGES))
        assert_null(r->images);
    if (!(make & SM_HEAD_WANT_NEWS)) {
        assert_null(r->description);
        assert_int_equal(r->published, 0);
    }
    s = apr_psprintf(p, "%d %d %d [%s] [%s] [%s] [%s] %" APR_TIME_T_FMT,
                     r->done, r->truncated, r->noindex,
                     r->canonical ? r->canonical : "-",
                     r->base_href ? r->base_href : "-",
                     r->title ? r->title : "-",
                     news && r->description ? r->description : "-",
                     news ? r->published : 0);
    for (i = 0; i < r->alternates->nelts; i++)
        s = apr_pstrcat(p, s, " ", APR_ARRAY_IDX(r->alternates, i,
                                                 sm_head_alternate).hreflang,
                        "=", APR_ARRAY_IDX(r->alternates, i,
                                           sm_head_alternate).href, NULL);
    for (i = 0; (wants & SM_HEAD_WANT_IMAGES) && r->images
                && i < r->images->nelts; i++)
        s = apr_pstrcat(p, s, " img=", APR_ARRAY_IDX(r->images, i,
                                                     sm_head_image).href,
                        NULL);
    return s;
}

/* doc read by every reduced scanner as by the full one; cut at every
 * byte when cuts is set.  Returns the full answer. */
static const char *same_reading(apr_pool_t *p, const char *name,
                                const char *doc, apr_size_t len, int cuts)
{
    const char *full = answer(p, doc, len, len, SM_HEAD_WANT_ALL,
                              SM_HEAD_WANT_ALL);
    unsigned w;
    apr_size_t cut;

    for (w = 0; w < SM_HEAD_WANT_ALL; w++) {
        const char *want = answer(p, doc, len, len, SM_HEAD_WANT_ALL, w);
        for (cut = cuts ? 0 : len; cut <= len; cut++) {
            apr_pool_t *q;
            const char *got;
            apr_pool_create(&q, p);
            got = answer(q, doc, len, cut, w, w);
            if (strcmp(got, want) != 0)
                fail_msg("%s wanting %u cut at %lu: \"%s\", not \"%s\"",
                         name, w, (unsigned long)cut, got, want);
            apr_pool_destroy(q);
        }
    }
    return full;
}

/* Pages where a field not wanted is next to one that is: an image's or
 * a description's meta that also names robots, a canonical whose rel
 * holds image_src, JSON-LD before the title. */
static void test_written(void **state)
{
    unit_ctx *ctx = *state;
    static const char *const pages[] = {
        "<head><meta property=og:image name=robots content=noindex>"
        "<title>a</title>",
        "<head><meta name=twitter:image content=noindex>"
        "<meta name=robots content=none></head>",
        "<head><meta name=description content=noindex>"
        "<meta name=\"robots description\" content=\"noindex\">",
        "<head><meta property=article:published_time name=robots "
        "content=\"noindex\"><title>t</title>",
        "<link rel=\"image_src canonical\" href=\"http://a.example/x\">"
        "<link rel=image_src href=/i.png><base href=http://b.example/>",
        "<script type=application/ld+json>{\"@type\":\"NewsArticle\","
        "\"datePublished\":\"2024-01-02T03:04:05Z\",\"x\":\"</title>\"}"
        "</script><title>after &amp; json</title>"
        "<link rel=alternate hreflang=de href=http://a.example/de>",
        "<meta name=description content=\"<link rel=canonical href=x>\">"
        "<meta property=og:image content='>'><link rel=canonical "
        "href=http://c.example/>",
    };
    size_t i;

    for (i = 0; i < sizeof(pages) / sizeof(pages[0]); i++)
        same_reading(ctx->pool, pages[i], pages[i], strlen(pages[i]), 1);
    /* the first is no robots noindex, images read or not */
    assert_true(strncmp(same_reading(ctx->pool, "og", pages[0],
                                     strlen(pages[0]), 0), "0 0 0 ", 6)
                == 0);
}


static unsigned long seed = 35;

static unsigned rnd(unsigned n)
{
    seed = seed * 6364136223846793005UL + 1442695040888963407UL;
    return (unsigned)(seed >> 33) % n;
}

/* A real head as it is, cut at every byte, then mutated at random:
 * bytes of the tokenizer's alphabet put in, spans repeated or dropped. */
static void real_head(apr_pool_t *p, const char *name, const char *doc,
                      apr_size_t len, const char **full)
{
    static const char alphabet[] = "<>\"'= /!-&;abcmnot\n";
    char *m = apr_palloc(p, len + 64);
    int k;

    *full = same_reading(p, name, doc, len, 1);
    for (k = 0; k < 300; k++) {
        apr_size_t n = len, at, j, edits = 1 + rnd(4);
        memcpy(m, doc, len);
        for (j = 0; j < edits && n; j++) {
            at = rnd((unsigned)n);
            switch (rnd(3)) {
            case 0:
                m[at] = alphabet[rnd(sizeof(alphabet) - 1)];
                break;
            case 1: {
                apr_size_t span = 1 + rnd(40);
                if (span > n - at)
                    span = n - at;
                memmove(m + at, m + at + span, n - at - span);
                n -= span;
                break;
            }
            default: {
                apr_size_t span = 1 + rnd(16);
                if (span > n - at)
                    span = n - at;
                if (n + span > len + 64)
                    break;
                memmove(m + at + span, m + at, n - at);
                n += span;
                break;
            }
            }
        }
        same_reading(p, name, m, n, 0);
    }
}

/* A corpus file's head: read as real_head does, its images counted. */
typedef struct {
    apr_pool_t *pool;
    int images;
} corpus_ctx;

static void corpus_head(void *baton, const char *rel, const char *doc,
                        apr_size_t len)
{
    corpus_ctx *c = baton;
    const char *full;

    real_head(c->pool, rel, doc, len, &full);
    c->images += strstr(full, "img=") != NULL;
}

static void test_real_heads(void **state)
{
    unit_ctx *ctx = *state;
    const char *full;
    apr_size_t len = 0;
    char *doc = unit_read_src(ctx->pool, "bench/cms_page.html", &len);
    corpus_ctx c = { ctx->pool, 0 };
    int files;

    assert_non_null(doc);
    real_head(ctx->pool, "bench/cms_page.html", doc, len, &full);
    /* what the page says is read at all: its canonical */
    assert_non_null(strstr(full, "[/p/@N@.html]"));
    files = unit_each_src_file(ctx->pool, "t/fuzz/corpus/head", corpus_head,
                               &c);
    if (files < 0)
        return;
    assert_true(files > 0);
    assert_true(c.images > 0);          /* images-forms.html's at least */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_written, unit_setup,
                                        unit_teardown),
        cmocka_unit_test_setup_teardown(test_real_heads, unit_setup,
                                        unit_teardown),
    };
    apr_initialize();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
