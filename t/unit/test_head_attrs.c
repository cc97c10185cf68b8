/* SPDX-License-Identifier: Apache-2.0 */
/* Unit tests of the head scanner's attribute reader (sm_head_parse_attrs,
 * src/head/sm_head.c), against the reader it replaced, kept here as the
 * reference: on tags in the shapes pages write and on random bytes of
 * the tokenizer's alphabet, both must find the same '>' and the same
 * values; so must they on every <meta>, <link>, <base> and <script> tag
 * of real heads (bench/cms_page.html, t/fuzz/corpus/head), cut at every byte,
 * and the whole scanner must give one answer for those heads however
 * they are cut (the reader under test takes 16 bytes at once with SSE2;
 * the reference never does). */
#include "unit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <apr_file_info.h>
#include <apr_strings.h>

#include "head/sm_head_bytes.h"
#include "head/sm_head_int.h"

/* ---- the reference: the reader before it read names from one word ------- */

static int ref_attr_id(const char *s, apr_size_t n, const char *end)
{
    apr_uint64_t w;

    if (n < 3 || n > 8)
        return -1;
    w = folded_word(s, n, end);
    if (w == WORD("rel"))
        return A_REL;
    if (w == WORD("href"))
        return A_HREF;
    if (w == WORD("name"))
        return A_NAME;
    if (w == WORD("content"))
        return A_CONTENT;
    if (w == WORD("hreflang"))
        return A_HREFLANG;
    if (w == WORD("property"))
        return A_PROPERTY;
    if (w == WORD("type"))
        return A_TYPE;
    return -1;
}

/* The attributes of a tag, from s (just after its name) as the HTML
 * tokenizer reads them (before/after attribute name, attribute value
 * states), up to the '>' that ends the tag: returned, NULL when end comes
 * first.  Names and unquoted values are walked a word at a time
 * (find_class), quoted values skipped with memchr.  The values of the
 * names attr_id knows are noted in a[A_COUNT]. */
static const char *ref_parse_attrs(const char *s, const char *end, attr *a)
{
    for (;;) {
        const char *name, *value = NULL;
        apr_size_t value_len = 0;
        int id;

        while (s < end && IN_CLASS(*s, C_SPACE | C_SLASH))
            s++;
        if (s == end)
            return NULL;
        if (*s == '>')
            return s;
        name = s;                               /* may be '=' */
        s = find_class(s + 1, end, C_SPACE | C_SLASH | C_EQ | C_GT);
        id = ref_attr_id(name, (apr_size_t)(s - name), end);
        while (s < end && IS_SPACE(*s))
            s++;
        if (s < end && *s == '=') {
            s++;
            while (s < end && IS_SPACE(*s))
                s++;
            if (s == end)
                return NULL;
            if (*s == '"' || *s == '\'') {
                const char *q = memchr(s + 1, *s, (apr_size_t)(end - s - 1));
                if (!q)
                    return NULL;
                value = s + 1;
                value_len = (apr_size_t)(q - value);
                s = q + 1;
            }
            else {
                value = s;
                s = find_class(s, end, C_SPACE | C_GT);
                value_len = (apr_size_t)(s - value);
            }
        }
        if (id >= 0 && !a[id].value) {
            a[id].value = value ? value : "";
            a[id].len = value_len;
        }
    }
}

/* ---- the comparison -------------------------------------------------------- */

static unsigned long seed = 42;

static unsigned rnd(unsigned n)
{
    seed = seed * 6364136223846793005UL + 1442695040888963407UL;
    return (unsigned)(seed >> 33) % n;
}

/* Both readers over buf[0..len): the same end, the same values.  Read
 * from a copy of exactly len bytes, for ASan and valgrind to see any
 * read past it. */
static void same(const char *text, apr_size_t len)
{
    attr a[A_COUNT], b[A_COUNT];
    const char *x, *y;
    char *buf = malloc(len ? len : 1);
    int k;

    memcpy(buf, text, len);
    ATTRS_CLEAR(a);
    ATTRS_CLEAR(b);
    x = sm_head_parse_attrs(buf, buf + len, a);
    y = ref_parse_attrs(buf, buf + len, b);
    if (x != y)
        fail_msg("end %ld, reference %ld: \"%.*s\"", x ? (long)(x - buf) : -1,
                 y ? (long)(y - buf) : -1, (int)len, buf);
    for (k = 0; k < A_COUNT; k++) {
        if (!a[k].value != !b[k].value
            || (a[k].value && (a[k].len != b[k].len
                               || memcmp(a[k].value, b[k].value, a[k].len))))
            fail_msg("attribute %d differs: \"%.*s\"", k, (int)len, buf);
    }
    free(buf);
}

static void test_shapes(void **state)
{
    unit_ctx *unused = *state;
    static const char *const shapes[] = {
        " rel=\"canonical\" href=\"http://x/\">",
        " name='description' content='a > b' />",
        " property=\"og:image\" content=\"/i.png\">",
        " REL=alternate HREFLANG=de href=/de>",
        " rel = \"x\" href= 'y' hreflang =z>",
        " async rel=\"a\">", " rel>", " =rel=\"x\">", " rel==\"x\">",
        " rel=\"a\"href=\"b\">", " a/rel=\"x\"/>", " rel\t=\n'x'\f>",
        " relx=\"1\" hreflangs=\"2\" typ=\"3\" contents=\"4\">",
        " data-a-long-name=\"x\" rel=\"y\">", " re\x01l=\"x\">",
        " rel=\"x", " rel=", " rel", "", ">", " name=\"a\" name=\"b\">",
        " type=\"application/ld+json\" property=p content=c name=n>",
        /* long enough for 16 bytes at once (SSE2) and for the word */
        " data-long-attribute-name=\"x\" rel=\"canonical\" href=\"/a\">",
        " crossorigin rel=\"preconnect\" href=\"https://example.com/\">",
        " re\x01l=\"canonical\" href=\"http://example.com/a/b\">",
        " rel\x01=\"canonical\" hreflang\x0b=\"de\" href=\"/a/b/c\">",
        " abcdefghijklmnop=\"16\" abcdefghijklmnopq=\"17\" rel=\"x\" >",
        " content=\"a value longer than sixteen bytes, with a > in it\">",
        " content='a \" inside single quotes, long enough' name=x>",
    };
    unsigned i, cut;

    (void)unused;
    for (i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++)
        for (cut = 0; cut <= strlen(shapes[i]); cut++)
            same(shapes[i], cut);
}

/* Random tags of the bytes and words that matter, every length. */
static void test_random(void **state)
{
    static const char *const parts[] = {
        " ", "\t", "/", "=", "\"", "'", ">", "a", "x-y", "\x01", "\xc3\xa9",
        "rel", "href", "name", "type", "content", "property", "hreflang",
        "REL", "Href", "contents", "hreflan", "=\"", "\" ", "='", "' ",
        "canonical", "http://example.com/a/long/enough/value/of/a/url",
    };
    char buf[256];
    unsigned i;

    (void)state;
    for (i = 0; i < 300000; i++) {
        apr_size_t len = 0;
        unsigned n = 1 + rnd(24);
        while (n--) {
            const char *s = parts[rnd(sizeof(parts) / sizeof(parts[0]))];
            apr_size_t l = strlen(s);
            if (len + l >= sizeof(buf))
                break;
            memcpy(buf + len, s, l);
            len += l;
        }
        same(buf, len);
    }
}

/* ---- real heads ------------------------------------------------------------ */


/* What the scanner answers for doc[0..len) cut at cut and at cut2 (len:
 * not cut), as one string. */
static const char *answer_of(apr_pool_t *p, const char *doc, apr_size_t len,
                             apr_size_t cut, apr_size_t cut2)
{
    sm_head *h = sm_head_create(p);
    const sm_head_result *r;
    const char *s;
    int i;

    if (!sm_head_feed(h, doc, cut) && !sm_head_feed(h, doc + cut, cut2 - cut))
        sm_head_feed(h, doc + cut2, len - cut2);
    r = sm_head_result_get(h);
    s = apr_psprintf(p, "%d %d %d [%s] [%s] [%s] [%s] %" APR_TIME_T_FMT,
                     r->done, r->truncated, r->noindex,
                     r->canonical ? r->canonical : "-",
                     r->base_href ? r->base_href : "-",
                     r->title ? r->title : "-",
                     r->description ? r->description : "-", r->published);
    for (i = 0; i < r->alternates->nelts; i++)
        s = apr_pstrcat(p, s, " ", APR_ARRAY_IDX(r->alternates, i,
                                                 sm_head_alternate).hreflang,
                        "=", APR_ARRAY_IDX(r->alternates, i,
                                           sm_head_alternate).href, NULL);
    for (i = 0; r->images && i < r->images->nelts; i++)
        s = apr_pstrcat(p, s, " img=", APR_ARRAY_IDX(r->images, i,
                                                     sm_head_image).href,
                        NULL);
    return s;
}

/* One real head: its tags' attributes against the reference, cut at
 * every byte (up to 600 bytes on), and the scanner's answer cut at every
 * byte and at every pair 61 bytes apart against the answer whole. */
static void real_head(apr_pool_t *p, const char *name, const char *doc,
                      apr_size_t len)
{
    static const char *const names[] = {"<meta", "<link", "<base",
                                        "<script"};
    const char *whole = answer_of(p, doc, len, len, len);
    apr_size_t i, k, cut, tags = 0;

    for (i = 0; i + 8 < len; i++) {
        for (k = 0; k < sizeof(names) / sizeof(names[0]); k++) {
            apr_size_t n = strlen(names[k]);
            if (strncasecmp(doc + i, names[k], n) == 0
                && IS_SPACE(doc[i + n])) {
                apr_size_t upto = len - i - n < 600 ? len - i - n : 600;
                for (cut = 0; cut <= upto; cut++)
                    same(doc + i + n, cut);
                tags++;
            }
        }
    }
    for (cut = 0; cut <= len; cut++) {
        apr_pool_t *q;
        apr_pool_create(&q, p);
        if (strcmp(answer_of(q, doc, len, cut, len), whole) != 0
            || strcmp(answer_of(q, doc, len, cut,
                                cut + 61 < len ? cut + 61 : len), whole) != 0)
            fail_msg("%s cut at %lu: not \"%s\"", name, (unsigned long)cut,
                     whole);
        apr_pool_destroy(q);
    }
    print_message("%s: %lu tags, %lu bytes\n", name, (unsigned long)tags,
                  (unsigned long)len);
}

/* A corpus file's head, read as real_head does. */
static void corpus_head(void *baton, const char *rel, const char *doc,
                        apr_size_t len)
{
    real_head(baton, rel, doc, len);
}

static void test_real_heads(void **state)
{
    unit_ctx *ctx = *state;
    apr_size_t len = 0;
    char *doc = unit_read_src(ctx->pool, "bench/cms_page.html", &len);

    assert_non_null(doc);               /* in the tarball too */
    real_head(ctx->pool, "bench/cms_page.html", doc, len);
    /* the fuzz corpus, in a git checkout */
    assert_true(unit_each_src_file(ctx->pool, "t/fuzz/corpus/head",
                                   corpus_head, ctx->pool) != 0);
}

/* Every name the scanner knows is found (in any case), by its own
 * slot; others are not. */
static void test_classify(void **state)
{
    static const struct {
        const char *name;
        tag_kind start, end;
    } known[] = {
        {"meta", K_META, K_HEAD_OK}, {"LINK", K_LINK, K_HEAD_OK},
        {"Base", K_BASE, K_HEAD_OK}, {"script", K_RAW, K_HEAD_OK},
        {"style", K_RAW, K_HEAD_OK}, {"title", K_RAW, K_HEAD_OK},
        {"noscript", K_RAW, K_HEAD_OK}, {"TEXTAREA", K_RAW, K_HEAD_OK},
        {"iframe", K_RAW, K_HEAD_OK}, {"xmp", K_RAW, K_HEAD_OK},
        {"noembed", K_RAW, K_HEAD_OK}, {"noframes", K_RAW, K_HEAD_OK},
        {"template", K_TEMPLATE, K_TEMPLATE},
        {"basefont", K_HEAD_OK, K_HEAD_OK}, {"bgsound", K_HEAD_OK, K_HEAD_OK},
        {"html", K_HEAD_OK, K_END_HEAD}, {"head", K_HEAD_OK, K_END_HEAD},
        {"body", K_OTHER, K_END_HEAD}, {"br", K_OTHER, K_END_HEAD},
        {"div", K_OTHER, K_HEAD_OK}, {"metas", K_OTHER, K_HEAD_OK},
        {"lin", K_OTHER, K_HEAD_OK}, {"a", K_OTHER, K_HEAD_OK},
        {"scripts", K_OTHER, K_HEAD_OK}, {"templates", K_OTHER, K_HEAD_OK},
    };
    unsigned i;

    (void)state;
    for (i = 0; i < sizeof(known) / sizeof(known[0]); i++) {
        const char *n = known[i].name, *raw = NULL;
        char buf[16];
        apr_size_t len = strlen(n);
        memcpy(buf, n, len);            /* no bytes after it to read */
        assert_int_equal(sm_head_classify(buf, len, buf + len, 0, &raw),
                         known[i].start);
        assert_int_equal(sm_head_classify(n, len, n + len, 1, &raw),
                         known[i].end);
        if (known[i].start == K_RAW)
            assert_true(raw && strcasecmp(raw, n) == 0);
    }
}

/* may_hold against the plain reading: a '&', or the pair in any case. */
static void test_may_hold(void **state)
{
    static const char alphabet[] = "aAlLbBoOnN &x;";
    unsigned i;

    (void)state;
    for (i = 0; i < 200000; i++) {
        char buf[40], *v;
        apr_size_t len = rnd(sizeof(buf)), k;
        int want = 0;
        for (k = 0; k < len; k++)
            buf[k] = alphabet[rnd(sizeof(alphabet) - 1)];
        for (k = 0; k < len; k++)
            if (buf[k] == '&' || (k + 1 < len && (buf[k] | 0x20) == 'a'
                                  && (buf[k + 1] | 0x20) == 'l'))
                want = 1;
        v = malloc(len ? len : 1);      /* nothing after it to read */
        memcpy(v, buf, len);
        if (may_hold(v, len, "al") != want)
            fail_msg("may_hold \"%.*s\" is not %d", (int)len, v, want);
        free(v);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_shapes, unit_setup,
                                        unit_teardown),
        cmocka_unit_test(test_random),
        cmocka_unit_test_setup_teardown(test_real_heads, unit_setup,
                                        unit_teardown),
        cmocka_unit_test(test_classify),
        cmocka_unit_test(test_may_hold),
    };
    apr_initialize();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
