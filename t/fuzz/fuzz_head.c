/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_head: the streaming <head> scanner (sm_head_feed) and the
 * canonical's resolution (sm_head_resolve, sm_head_names_other), as any
 * page or backend can make them read.
 *
 * Input: two option bytes (where to cut the document into three pieces),
 * then the document.  Invariants checked:
 *   - the answer is the same whether the document comes whole, in the
 *     three pieces, or byte by byte (the first 4 KiB of it);
 *   - at most SM_HEAD_LIMIT bytes are read: a document of that many bytes
 *     is always over (done) when fed whole;
 *   - alternates are at most SM_HEAD_MAX_ALTERNATES, each an http(s) URL
 *     (spaces and other bytes left to the resolver) and a non-empty
 *     hreflang; resolved, each gives a base sm_url_parse_base accepts (an
 *     IDN host in its A-label form) and a target starting with '/';
 *   - the title has no leading, trailing or doubled space;
 *   - the description likewise, at most SM_HEAD_DESCRIPTION_MAX
 *     characters of valid UTF-8; a publication time is after 1970;
 *   - a canonical resolved against a page gives a target starting with '/'
 *     and a base sm_url_parse_base accepts;
 *   - the alternates' stored form (sm_alternates_from_head) reads back
 *     whole (every entry valid, at most SM_ALTERNATES_MAX, every href
 *     printable ASCII without a space), and their XML
 *     (sm_xml_url_alternates) is as long as sm_xml_alternates_len says,
 *     and no '<', '>' or '"' of a value unescaped;
 *   - a scanner reading less (sm_head_create_ex: no images, no news, or
 *     one of them) gives the full one's answer for what it reads (robots,
 *     canonical, base, title, alternates and what it wants), nothing for
 *     the rest;
 *   - images are at most SM_HEAD_MAX_IMAGES of each form, none empty, each
 *     once; resolved, each is an http(s) URL of the site whose path
 *     passes sm_url_is_stored_form. */
#include "fuzz.h"
#include "head/sm_alternates.h"
#include "head/sm_head.h"
#include "head/sm_head_news.h"
#include "util/sm_url.h"
#include "serve/sm_xml.h"

#include <apr_strings.h>
#include <strings.h>

/* The answer of h, of what wants (SM_HEAD_WANT_*) names besides what
 * every scanner reads. */
static const char *answer_of(apr_pool_t *p, sm_head *h, unsigned wants)
{
    const sm_head_result *r = sm_head_result_get(h);
    int news = (wants & SM_HEAD_WANT_NEWS) != 0;
    const char *s = apr_psprintf(p, "%d %d %d [%s] [%s] [%s] [%s] %"
                                 APR_TIME_T_FMT, r->done,
                                 r->truncated, r->noindex,
                                 r->canonical ? r->canonical : "-",
                                 r->base_href ? r->base_href : "-",
                                 r->title ? r->title : "-",
                                 news && r->description ? r->description
                                                        : "-",
                                 news ? r->published : 0);
    int i;

    for (i = 0; i < r->alternates->nelts; i++) {
        const sm_head_alternate *a =
            &APR_ARRAY_IDX(r->alternates, i, sm_head_alternate);
        s = apr_pstrcat(p, s, " ", a->hreflang, "=", a->href, NULL);
    }
    for (i = 0; (wants & SM_HEAD_WANT_IMAGES) && r->images
                && i < r->images->nelts; i++) {
        const sm_head_image *m = &APR_ARRAY_IDX(r->images, i, sm_head_image);
        s = apr_psprintf(p, "%s i%d=%s", s, m->form, m->href);
    }
    return s;
}

#define answer(p, h) answer_of(p, h, SM_HEAD_WANT_ALL)

/* An XML writer's sink: the bytes appended to an array of char. */
static apr_status_t to_array(void *baton, const char *data, apr_size_t len)
{
    while (len--)
        APR_ARRAY_PUSH((apr_array_header_t *)baton, char) = *data++;
    return APR_SUCCESS;
}

/* The stored form, read back, and its XML. */
static void check_alternates(apr_pool_t *p, const sm_head_result *r)
{
    apr_array_header_t *allow = apr_array_make(p, 1, sizeof(char *));
    apr_array_header_t *back;
    const char *stored, *c;
    apr_array_header_t *plain = apr_array_make(p, 256, 1);
    apr_array_header_t *with = apr_array_make(p, 1024, 1);
    sm_xml_writer *w;
    size_t quotes = 0, opens = 0, closes = 0;
    int i;

    APR_ARRAY_PUSH(allow, const char *) = "q";
    stored = sm_alternates_from_head(p, r->alternates, "http://ex.com",
                                     "/a/b?c", allow);
    FUZZ_ASSERT(sm_alternates_parse(p, stored, &back) == 0);
    FUZZ_ASSERT(back->nelts <= SM_ALTERNATES_MAX);
    FUZZ_ASSERT(back->nelts == sm_alternates_count(stored));
    for (i = 0; i < back->nelts; i++)
        for (c = APR_ARRAY_IDX(back, i, sm_alternate).href; *c; c++)
            FUZZ_ASSERT((unsigned char)*c > ' ' && (unsigned char)*c < 0x7f);
    w = sm_xml_writer_create(p, to_array, plain);
    sm_xml_url(w, "http://ex.com", "/a/b", 0, NULL, NULL);
    sm_xml_flush(w);
    w = sm_xml_writer_create(p, to_array, with);
    sm_xml_url_alternates(w, "http://ex.com", "/a/b", 0, NULL, NULL, back);
    sm_xml_flush(w);
    FUZZ_ASSERT((apr_size_t)with->nelts
                == (apr_size_t)plain->nelts + sm_xml_alternates_len(back));
    for (c = with->elts; c < with->elts + with->nelts; c++) {
        quotes += *c == '"';
        opens += *c == '<';
        closes += *c == '>';
    }
    /* <url><loc></loc></url> and one tag an alternate (three quoted
     * attributes; xmlns:xhtml is declared on <urlset>): no '<', '>' or '"'
     * of a value went out unescaped */
    FUZZ_ASSERT(opens == 4 + (size_t)back->nelts && closes == opens);
    FUZZ_ASSERT(quotes == 6 * (size_t)back->nelts);
}

static void check_images(apr_pool_t *p, const sm_head_result *r)
{
    apr_array_header_t *out;
    int i, j, forms[3] = {0, 0, 0};

    for (i = 0; r->images && i < r->images->nelts; i++) {
        const sm_head_image *m = &APR_ARRAY_IDX(r->images, i, sm_head_image);
        FUZZ_ASSERT(m->form >= 0 && m->form < 3 && *m->href);
        FUZZ_ASSERT(++forms[m->form] <= SM_HEAD_MAX_IMAGES);
        for (j = 0; j < i; j++)
            FUZZ_ASSERT(strcmp(APR_ARRAY_IDX(r->images, j,
                                             sm_head_image).href,
                               m->href) != 0);
    }
    out = sm_head_images_resolve(p, r, "http://ex.com", "/a/b?c", NULL);
    FUZZ_ASSERT(out->nelts <= (r->images ? r->images->nelts : 0));
    for (i = 0; i < out->nelts; i++) {
        const char *u = APR_ARRAY_IDX(out, i, const char *);
        FUZZ_ASSERT(strncmp(u, "http://ex.com/", 14) == 0);
        FUZZ_ASSERT(sm_url_is_stored_form(u + 13));
    }
}

static void check_result(apr_pool_t *p, const sm_head_result *r)
{
    const char *base, *target, *err;
    int i;

    FUZZ_ASSERT(r->alternates->nelts <= SM_HEAD_MAX_ALTERNATES);
    for (i = 0; i < r->alternates->nelts; i++) {
        const sm_head_alternate *a =
            &APR_ARRAY_IDX(r->alternates, i, sm_head_alternate);
        FUZZ_ASSERT(*a->hreflang);
        FUZZ_ASSERT(strncasecmp(a->href, "http://", 7) == 0
                    || strncasecmp(a->href, "https://", 8) == 0);
        if (sm_head_resolve(p, "http://ex.com", "/a/b?c", a->href, &base,
                            &target)) {
            FUZZ_ASSERT(target[0] == '/');
            FUZZ_ASSERT(sm_url_parse_base(p, base, &err) != NULL);
        }
    }
    FUZZ_ASSERT(r->published >= 0);
    if (r->title) {
        size_t n = strlen(r->title);
        FUZZ_ASSERT(n == 0 || (r->title[0] != ' ' && r->title[n - 1] != ' '));
        FUZZ_ASSERT(!strstr(r->title, "  "));
    }
    if (r->description) {
        const unsigned char *c = (const unsigned char *)r->description;
        size_t n = strlen(r->description), chars = 0;
        FUZZ_ASSERT(n == 0 || (c[0] != ' ' && c[n - 1] != ' '));
        FUZZ_ASSERT(!strstr(r->description, "  "));
        for (; *c; c++)
            chars += (*c & 0xc0) != 0x80;
        FUZZ_ASSERT(chars <= SM_HEAD_DESCRIPTION_MAX);
        FUZZ_ASSERT(n == 0 || (c[-1] & 0x80) == 0 || (c[-1] & 0xc0) == 0x80);
    }
    if (r->canonical
        && sm_head_resolve(p, "http://ex.com", "/a/b?c", r->canonical, &base,
                           &target)) {
        FUZZ_ASSERT(target[0] == '/');
        FUZZ_ASSERT(sm_url_parse_base(p, base, &err) != NULL);
    }
    sm_head_names_other(p, r, "http://ex.com", "/a/b?c", "/a/b", NULL);
    check_alternates(p, r);
    check_images(p, r);
}

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)
{
    apr_pool_t *p = fuzz_pool();
    unsigned cut1 = fuzz_take_byte(&d, &n), cut2 = fuzz_take_byte(&d, &n);
    char *doc = malloc(n ? n : 1);
    sm_head *whole, *cut, *bytes, *part;
    size_t a, b, i;
    unsigned w;
    const char *expected;

    if (!doc)
        abort();
    memcpy(doc, d, n);
    a = n ? (cut1 * n) / 256 : 0;
    b = n ? (cut2 * n) / 256 : 0;
    if (a > b) {
        size_t t = a;
        a = b;
        b = t;
    }

    whole = sm_head_create(p);
    sm_head_feed(whole, doc, n);
    expected = answer(p, whole);
    check_result(p, sm_head_result_get(whole));
    if (n >= SM_HEAD_LIMIT)
        FUZZ_ASSERT(sm_head_result_get(whole)->done);

    cut = sm_head_create(p);
    if (!sm_head_feed(cut, doc, a) && !sm_head_feed(cut, doc + a, b - a))
        sm_head_feed(cut, doc + b, n - b);
    FUZZ_ASSERT(strcmp(expected, answer(p, cut)) == 0);

    /* a scanner reading less (sm_head_create_ex, as the glue makes one
     * for a configuration without images or news) reads the rest exactly
     * as the full one does, and leaves what it does not read unset */
    w = (cut1 ^ cut2) & SM_HEAD_WANT_ALL;
    part = sm_head_create_ex(p, w);
    if (!sm_head_feed(part, doc, a) && !sm_head_feed(part, doc + a, b - a))
        sm_head_feed(part, doc + b, n - b);
    FUZZ_ASSERT(strcmp(answer_of(p, whole, w), answer_of(p, part, w)) == 0);
    if (!(w & SM_HEAD_WANT_IMAGES))
        FUZZ_ASSERT(!sm_head_result_get(part)->images);
    if (!(w & SM_HEAD_WANT_NEWS))
        FUZZ_ASSERT(!sm_head_result_get(part)->description
                    && !sm_head_result_get(part)->published);

    if (n <= 4096) {
        bytes = sm_head_create(p);
        for (i = 0; i < n; i++)
            if (sm_head_feed(bytes, doc + i, 1))
                break;
        FUZZ_ASSERT(strcmp(expected, answer(p, bytes)) == 0);
    }
    free(doc);
    apr_pool_destroy(p);
    return 0;
}
