/* SPDX-License-Identifier: Apache-2.0 */
/* sm_head.c: the streaming <head> scanner (see sm_head.h).
 *
 * Written by hand: no library at hand reads HTML incrementally with
 * bounded memory and stops at the end of the head (libxml2's HTML parser
 * builds a tree, buffers and guesses encodings).  Text is skipped with
 * memchr; tags, comments and the ends of raw-text elements are read after
 * the tokenizer of the HTML standard (section 13.2.5), reduced to what
 * decides where a tag ends, their names and values a word at a time,
 * or 16 bytes at a time with SSE2 (sm_head_bytes.h).  A tag split
 * between two chunks is read byte by byte. */
#include "head/sm_head_int.h"

#include <stddef.h>
#include <string.h>

#include <apr_lib.h>
#include <apr_strings.h>

#include "head/sm_alternates.h"
#include "head/sm_head_bytes.h"
#include "head/sm_head_images.h"
#include "head/sm_head_news.h"
#include "util/sm_hot.h"
#include "util/sm_html.h"


sm_head *sm_head_create_ex(apr_pool_t *p, unsigned wants)
{
    sm_head *h = apr_palloc(p, sizeof(*h));

    memset(h, 0, offsetof(sm_head, title));
    h->p = p;
    h->state = S_DATA;
    h->wants = wants;
    h->res.alternates = apr_array_make(p, 0, sizeof(sm_head_alternate));
    return h;
}

sm_head *sm_head_create(apr_pool_t *p)
{
    return sm_head_create_ex(p, SM_HEAD_WANT_ALL);
}

/* ---- values -------------------------------------------------------------- */

/* Which of two words (letters only) the list v[0..len) holds as tokens,
 * separated by whitespace, and by commas when commas is set: bit 0 for a,
 * bit 1 for b.  One pass over the value; a value holding '&' is decoded
 * first (rare: a reference in a rel or robots keyword), once: what the
 * decoding gives is read as it is (decoded is then set). */
static unsigned list_tokens(apr_pool_t *p, const char *v, apr_size_t len,
                            int commas, int decoded, const char *a,
                            apr_size_t a_len, const char *b,
                            apr_size_t b_len)
{
    const char *end = v + len;
    int seps = C_SPACE | (commas ? C_COMMA : 0);
    int stops = seps | (decoded ? 0 : C_AMP);
    unsigned found = 0;

    /* a value no longer than either word holds one only as the whole of
     * it (a reference decodes to fewer bytes, never to more letters) */
    if (len <= a_len && len <= b_len)
        return (ci_is(v, len, a, a_len) ? 1 : 0)
               | (ci_is(v, len, b, b_len) ? 2 : 0);
    while (v < end) {
        const char *start;
        apr_size_t n;
        while (v < end && IN_CLASS(*v, seps))
            v++;
        start = v;
        v = find_class(v, end, stops);
        if (v < end && *v == '&' && !decoded) {
            const char *plain = sm_html_decode(p, start,
                                               (apr_size_t)(end - start));
            return found | list_tokens(p, plain, strlen(plain), commas, 1,
                                       a, a_len, b, b_len);
        }
        n = (apr_size_t)(v - start);
        if (ci_is(start, n, a, a_len))
            found |= 1;
        else if (ci_is(start, n, b, b_len))
            found |= 2;
    }
    return found;
}
/* pair: two letters side by side in both a and b, which a value must
 * hold to hold either (may_hold: most values are answered by it). */
#define value_tokens(p, v, len, commas, a, b, pair) \
    (may_hold(v, len, pair) \
     ? list_tokens(p, v, len, commas, 0, a, sizeof(a) - 1, b, sizeof(b) - 1) \
     : 0)

/* ---- tags ----------------------------------------------------------------- */

static int attr_id(const char *s, apr_size_t n, const char *end)
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

/* The attribute named by w, the folded word of a name of n (3 to 8)
 * bytes: attr_id's answer, one or two comparisons chosen by the length. */
static APR_INLINE int attr_of(apr_uint64_t w, apr_size_t n)
{
    switch (n) {
    case 3:
        return w == WORD("rel") ? A_REL : -1;
    case 4:
        return w == WORD("href") ? A_HREF : w == WORD("name") ? A_NAME
               : w == WORD("type") ? A_TYPE : -1;
    case 7:
        return w == WORD("content") ? A_CONTENT : -1;
    case 8:
        return w == WORD("hreflang") ? A_HREFLANG
               : w == WORD("property") ? A_PROPERTY : -1;
    default:
        return -1;
    }
}

/* An attribute's name at s (its first byte taken whatever it is, even
 * '='): where it ends (the first blank, '/', '=' or '>' after that byte,
 * or end), *id the attribute it is.  Names of eight bytes or fewer, all
 * that attr_id knows, end in the word after their first byte: that word
 * gives the end and the word at s the name, with no search.  With SSE2
 * (x86-64) the 16 bytes after the first are compared at once (bytes up
 * to 0x20 with one min, the control bytes that are not blanks checked at
 * the end found), so names of up to 16 bytes end with no search either. */
static APR_INLINE const char *attr_name(const char *s, const char *end,
                                        int *id)
{
    const int set = C_SPACE | C_SLASH | C_EQ | C_GT;
    const char *e;

#if defined(__SSE2__)
    if ((e = name_end16(s + 1, end, 1))) {
        apr_size_t n = (apr_size_t)(e - s);
        *id = n < 3 || n > 8 ? -1
              : attr_of((load8(s) | 0x2020202020202020ULL)
                        & (n == 8 ? ~0ULL : (1ULL << (8 * n)) - 1), n);
        return e;
    }
#else
    if (end - s >= 9) {
        apr_uint64_t w = load8(s + 1);
        apr_uint64_t m = BELOW_BYTES(w, 0x21) | EQ_BYTES(w, '/')
                         | EQ_BYTES(w, '=') | EQ_BYTES(w, '>');
        apr_size_t n = 1 + FIRST_BYTE(m | (1ULL << 63));
        if (m && IN_CLASS(s[n], set)) {
            *id = n < 3 ? -1
                  : attr_of((load8(s) | 0x2020202020202020ULL)
                            & (n == 8 ? ~0ULL : (1ULL << (8 * n)) - 1), n);
            return s + n;
        }
    }
#endif
    e = find_class(s + 1, end, set);    /* long, or a control byte in it */
    *id = attr_id(s, (apr_size_t)(e - s), end);
    return e;
}

/* The attributes of a tag, from s (just after its name) as the HTML
 * tokenizer reads them (before/after attribute name, attribute value
 * states), up to the '>' that ends the tag: returned, NULL when end comes
 * first.  Names are read by attr_name, unquoted values walked a word at a
 * time (find_class), quoted values skipped with find_byte.  The values of
 * the names attr_id knows are noted in a[A_COUNT]. */
static const char *parse_attrs(const char *s, const char *end, attr *a)
{
    for (;;) {
        const char *value = NULL;
        apr_size_t value_len = 0;
        int id;

        while (s < end && IN_CLASS(*s, C_SPACE | C_SLASH))
            s++;
        if (s == end)
            return NULL;
        if (*s == '>')
            return s;
        s = attr_name(s, end, &id);
        if (end - s >= 2 && *s == '=' && (s[1] == '"' || s[1] == '\'')) {
            const char *q = find_byte(s + 2, end, s[1]);  /* name="value" */
            if (!q)
                return NULL;
            value = s + 2;
            value_len = (apr_size_t)(q - value);
            s = q + 1;
        }
        else {
            while (s < end && IS_SPACE(*s))
                s++;
        }
        if (!value && s < end && *s == '=') {
            s++;
            while (s < end && IS_SPACE(*s))
                s++;
            if (s == end)
                return NULL;
            if (*s == '"' || *s == '\'') {
                const char *q = find_byte(s + 1, end, *s);
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

/* The image form of a meta (og:image is a property (RDFa), twitter:image
 * a name; both are written either way in the wild), -1: none. */
static int meta_image_form(const attr *a)
{
    int form = sm_head_image_meta_form(a[A_PROPERTY].value,
                                       a[A_PROPERTY].len);

    return form >= 0 ? form : sm_head_image_meta_form(a[A_NAME].value,
                                                      a[A_NAME].len);
}

/* The description and publication time of a meta (wanted: news): 1 when
 * it was the description. */
static int meta_news(sm_head *h, const attr *a)
{
    if (a[A_PROPERTY].value && !h->published_meta
        && a[A_PROPERTY].len == 22     /* '_' is no letter for ci_is */
        && strncasecmp(a[A_PROPERTY].value, "article:published_time",
                       22) == 0)
        h->published_meta = sm_iso8601_time(a[A_CONTENT].value,
                                            a[A_CONTENT].len);
    if (a[A_NAME].value && !h->res.description
        && ci_is(a[A_NAME].value, a[A_NAME].len, "description", 11)) {
        h->res.description = sm_head_text(h->p, a[A_CONTENT].value,
                                          a[A_CONTENT].len,
                                          SM_HEAD_DESCRIPTION_MAX);
        return 1;
    }
    return 0;
}

/* A meta: its image and news (when wanted), robots.  An image's meta is
 * never robots, images wanted or not: its form is looked at then only
 * for the rare meta that would say noindex. */
static void on_meta(sm_head *h, const attr *a)
{
    int form;

    if (!a[A_CONTENT].value)
        return;
    if ((h->wants & SM_HEAD_WANT_IMAGES) && (form = meta_image_form(a)) >= 0) {
        sm_head_image_add(h->p, &h->res, h->images, form,
                          a[A_CONTENT].value, a[A_CONTENT].len);
        return;
    }
    if ((h->wants & SM_HEAD_WANT_NEWS) && meta_news(h, a))
        return;
    if (a[A_NAME].value
        && value_tokens(h->p, a[A_NAME].value, a[A_NAME].len, 0, "robots",
                        "googlebot", "bo")
        && value_tokens(h->p, a[A_CONTENT].value, a[A_CONTENT].len, 1,
                        "noindex", "none", "no")
        && ((h->wants & SM_HEAD_WANT_IMAGES) || meta_image_form(a) < 0))
        h->res.noindex = 1;
}

/* Blanks and other bytes inside are the resolver's to normalise
 * (sm_head_resolve, sm_url: a space is %20, as browsers read it). */
static int is_http_url(const char *href)
{
    return (strncasecmp(href, "http://", 7) == 0
            || strncasecmp(href, "https://", 8) == 0)
           && strlen(href) <= 4096;
}

static void on_link(sm_head *h, const attr *a)
{
    const char *href;
    unsigned rel;
    int is_canonical, is_alternate;

    if (!a[A_REL].value || !a[A_HREF].value)
        return;
    rel = value_tokens(h->p, a[A_REL].value, a[A_REL].len, 0, "canonical",
                       "alternate", "al");
    is_canonical = rel & 1;
    is_alternate = (rel & 2) && a[A_HREFLANG].value;
    if (!is_canonical && !is_alternate) {
        if ((h->wants & SM_HEAD_WANT_IMAGES)
            && sm_head_image_rel(a[A_REL].value, a[A_REL].len))
            sm_head_image_add(h->p, &h->res, h->images, SM_HEAD_IMAGE_SRC,
                              a[A_HREF].value, a[A_HREF].len);
        return;                         /* stylesheets, icons, feeds... */
    }
    href = sm_html_decode(h->p, a[A_HREF].value, a[A_HREF].len);
    if (is_canonical && !h->canonical_conflict) {
        if (!h->res.canonical) {
            h->res.canonical = href;
        }
        else if (strcmp(h->res.canonical, href) != 0) {
            h->res.canonical = NULL;
            h->canonical_conflict = 1;
        }
    }
    if (is_alternate) {
        const char *lang = sm_html_decode(h->p, a[A_HREFLANG].value,
                                          a[A_HREFLANG].len);
        apr_array_header_t *alts = h->res.alternates;
        int i;
        if (!sm_hreflang_canon(h->p, lang) || !is_http_url(href)
            || alts->nelts >= SM_HEAD_MAX_ALTERNATES)
            return;
        for (i = 0; i < alts->nelts; i++)
            if (strcasecmp(APR_ARRAY_IDX(alts, i, sm_head_alternate).hreflang,
                           lang) == 0)
                return;
        APR_ARRAY_PUSH(alts, sm_head_alternate).hreflang = lang;
        APR_ARRAY_IDX(alts, alts->nelts - 1, sm_head_alternate).href = href;
    }
}

static void on_base(sm_head *h, const attr *a)
{
    if (a[A_HREF].value && !h->res.base_href)
        h->res.base_href = sm_html_decode(h->p, a[A_HREF].value,
                                          a[A_HREF].len);
}

/* The kind of the tag named s[0..n) (any case; end: where the chunk
 * ends, for folded_word); *raw_name, for K_RAW, its lowercase spelling.
 * Its case-folded word picks one slot of a table by a multiplicative hash
 * (the multiplier found by search: no two names share a slot), whose
 * word is compared with it. */
static tag_kind classify(const char *s, apr_size_t n, const char *end,
                         int is_end, const char **raw_name)
{
#define TAG_SLOT(w) ((unsigned)(((w) * 0xa17a4340f9c08fefULL) >> 59))
    static const struct {
        const char *name;
        apr_uint64_t word;
        tag_kind kind;
    } names[32] = {
#define TAG(name, kind) {name, WORD(name), kind}
        [1] = TAG("html", K_END_HEAD), [2] = TAG("meta", K_META),
        [3] = TAG("textarea", K_RAW), [4] = TAG("basefont", K_HEAD_OK),
        [5] = TAG("xmp", K_RAW), [6] = TAG("noscript", K_RAW),
        [8] = TAG("br", K_END_HEAD), [9] = TAG("template", K_TEMPLATE),
        [10] = TAG("link", K_LINK), [12] = TAG("noembed", K_RAW),
        [16] = TAG("bgsound", K_HEAD_OK), [21] = TAG("style", K_RAW),
        [22] = TAG("head", K_END_HEAD), [23] = TAG("title", K_RAW),
        [25] = TAG("body", K_END_HEAD), [26] = TAG("iframe", K_RAW),
        [28] = TAG("noframes", K_RAW), [30] = TAG("script", K_RAW),
        [31] = TAG("base", K_BASE)
#undef TAG
    };
    apr_uint64_t w;
    unsigned k;
    tag_kind kind;

    if (n < 2 || n > 8)
        return is_end ? K_HEAD_OK : K_OTHER;
    w = folded_word(s, n, end);
    k = TAG_SLOT(w);
    if (names[k].word != w)
        return is_end ? K_HEAD_OK : K_OTHER;
    kind = names[k].kind;
    *raw_name = names[k].name;
    if (kind == K_END_HEAD && !is_end)
        /* <html>, <head> start tags are fine; <body>, <br> are not */
        return (names[k].name[1] == 't' || names[k].name[1] == 'e')
               ? K_HEAD_OK : K_OTHER;
    if (is_end && kind != K_END_HEAD && kind != K_TEMPLATE)
        return K_HEAD_OK;
    return kind;
#undef TAG_SLOT
}

void sm_head_finish_title(sm_head *h)
{
    h->res.title = sm_head_text(h->p, h->title, h->title_len, 0);
}

/* The end of a JSON-LD script: its publication time, if none yet. */
void sm_head_finish_jsonld(sm_head *h)
{
    if (!h->published_ld)
        h->published_ld = sm_jsonld_published(h->json, h->json_len);
    h->in_json = 0;
}

/* A whole tag was read: act on it.  a: the attributes of a tag whose
 * attributes are read (READS_ATTRS), NULL when it is too long to be read. */
static SM_NOINLINE void on_tag(sm_head *h, tag_kind kind, int is_end,
                               const attr *a)
{
    h->state = S_DATA;
    if (h->template_depth) {            /* only templates count in one */
        if (kind == K_TEMPLATE)
            h->template_depth += is_end ? -1 : 1;
        else if (kind == K_RAW && !is_end)
            h->state = S_RAW;
        return;
    }
    switch (kind) {
    case K_END_HEAD:
    case K_OTHER:
        h->state = S_DONE;
        break;
    case K_RAW:
        h->state = S_RAW;
        h->in_title = !h->res.title && strcmp(h->raw_name, "title") == 0;
        h->title_len = 0;
        /* JSON-LD is read only for what it may give: a time when none
         * was found yet (an article:published_time meta wins anyway) */
        h->in_json = a && (h->wants & SM_HEAD_WANT_NEWS)
                     && !h->published_ld && !h->published_meta
                     && a[A_TYPE].value
                     && sm_head_is_jsonld(a[A_TYPE].value, a[A_TYPE].len);
        if (h->in_json && !h->json)
            h->json = apr_palloc(h->p, SM_HEAD_JSONLD_MAX);
        h->json_len = 0;
        break;
    case K_TEMPLATE:
        if (!is_end)
            h->template_depth++;
        break;
    case K_META:
        if (a)
            on_meta(h, a);
        break;
    case K_LINK:
        if (a)
            on_link(h, a);
        break;
    case K_BASE:
        if (a)
            on_base(h, a);
        break;
    default:
        break;
    }
}

/* The attributes of a <script> start tag s[..gt) (gt its first '>'), into
 * a: only when it may say application/ld+json (a '+' in it), else NULL,
 * so that other scripts cost a memchr. */
static const attr *script_attrs(const sm_head *h, const char *s,
                                const char *gt, attr *a)
{
    if (h->raw_name[1] != 'c' || !(h->wants & SM_HEAD_WANT_NEWS)
        || !memchr(s, '+', (apr_size_t)(gt - s)))
        return NULL;
    ATTRS_CLEAR(a);
    return parse_attrs(s, gt + 1, a) ? a : NULL;
}

/* The fast path: a whole tag inside the chunk (d: just after its '<'),
 * read in place.  Returns the bytes it took (up to its '>'), 0 when the
 * tag is not whole here or is not a tag (the byte-wise path takes it). */
static apr_size_t tag_in_place(sm_head *h, const char *d, apr_size_t len)
{
    const char *p = d, *end = d + len, *name, *gt;
    int is_end = 0;
    tag_kind kind;
    attr a[A_COUNT];

    if (p < end && *p == '/') {
        is_end = 1;
        p++;
    }
    if (p == end || !IS_ALPHA(*p))
        return 0;
    name = p;
#if defined(__SSE2__)
    if (!(p = name_end16(name + 1, end, 0)))
#endif
        p = find_class(name + 1, end, C_SPACE | C_SLASH | C_GT);
    if (p == end)
        return 0;
    kind = classify(name, (apr_size_t)(p - name), end, is_end,
                    &h->raw_name);
    if (is_end || !READS_ATTRS(kind)) {
        gt = find_byte(p, end, '>');  /* its first '>' */
        if (!gt)
            return 0;
        on_tag(h, kind, is_end, kind == K_RAW && !is_end
                                && h->raw_name[1] == 'c'
                                && gt - name <= SM_HEAD_TAG_MAX
                                ? script_attrs(h, p, gt, a) : NULL);
        return (apr_size_t)(gt - d) + 1;
    }
    ATTRS_CLEAR(a);
    gt = parse_attrs(p, end, a);
    if (!gt)
        return 0;
    on_tag(h, kind, 0, gt - name <= SM_HEAD_TAG_MAX ? a : NULL);
    return (apr_size_t)(gt - d) + 1;
}

/* A JSON-LD script's text (out of line: title_append stays small: sm_head_int.h). */
void sm_head_json_append(sm_head *h, const char *s, apr_size_t n)
{
    if (n > SM_HEAD_JSONLD_MAX - h->json_len)
        n = SM_HEAD_JSONLD_MAX - h->json_len;
    memcpy(h->json + h->json_len, s, n);
    h->json_len += n;
}

/* The byte-wise path's ways in (sm_head_split.c); the fast path's calls
 * stay static, for the compiler to inline and clone them. */
const char *sm_head_parse_attrs(const char *s, const char *end, attr *a)
{
    return parse_attrs(s, end, a);
}

tag_kind sm_head_classify(const char *s, apr_size_t n, const char *end,
                          int is_end, const char **raw_name)
{
    return classify(s, n, end, is_end, raw_name);
}

void sm_head_on_tag(sm_head *h, tag_kind kind, int is_end, const attr *a)
{
    on_tag(h, kind, is_end, a);
}

const attr *sm_head_script_attrs(const sm_head *h, const char *s,
                                 const char *gt, attr *a)
{
    return script_attrs(h, s, gt, a);
}

/* ---- the tokenizer ------------------------------------------------------- */

/* In a comment: up to "-->" or "--!>" (or the abrupt "<!-->", "<!--->").
 * The bytes before a '>' may be in an earlier chunk: back[] keeps them. */
static apr_size_t scan_comment(sm_head *h, const char *d, apr_size_t len)
{
    apr_size_t i = 0, k;

    while (i < len) {
        const char *gt = memchr(d + i, '>', len - i);
        apr_size_t j, at;
        unsigned char b[3];
        if (!gt)
            break;
        j = (apr_size_t)(gt - d);
        at = h->comment_len + j;                /* '>' offset in comment */
        for (k = 0; k < 3; k++)
            b[k] = j > k ? (unsigned char)d[j - 1 - k] : h->back[k - j];
        if (at == 0 || (at == 1 && b[0] == '-')
            || (at >= 2 && b[0] == '-' && b[1] == '-')
            || (at >= 3 && b[0] == '!' && b[1] == '-' && b[2] == '-')) {
            h->state = S_DATA;
            return j + 1;
        }
        i = j + 1;
    }
    for (k = len > 3 ? len - 3 : 0; k < len; k++) {
        h->back[2] = h->back[1];
        h->back[1] = h->back[0];
        h->back[0] = (unsigned char)d[k];
    }
    h->comment_len += len;
    return len;
}

/* The fast path of sm_head_scan_raw_end: "</name", its delimiter and its '>'
 * whole in the chunk (d: just after the '<').  Returns the bytes the end
 * tag took after the '<' (the element is over), -1 when the '<' is text,
 * 0 when the chunk ends first (the byte-wise path decides). */
static long raw_end_in_place(sm_head *h, const char *d, apr_size_t len)
{
    apr_size_t n = strlen(h->raw_name);
    const char *gt;

    if (len < n + 2)
        return 0;
    if (d[0] != '/' || !ci_is(d + 1, n, h->raw_name, n)
        || !IN_CLASS(d[n + 1], C_SPACE | C_SLASH | C_GT))
        return -1;
    gt = find_byte(d + n + 1, d + len, '>');
    if (!gt)
        return 0;
    if (h->in_title)
        sm_head_finish_title(h);
    if (h->in_json)
        sm_head_finish_jsonld(h);
    h->in_title = 0;
    on_tag(h, classify(d + 1, n, d + len, 1, &h->raw_name), 1, NULL);
    return (long)(gt - d) + 1;
}

/* After '<', "<!" or "</": one byte decides what follows (0 or 1 of it
 * taken). */
static apr_size_t after_lt(sm_head *h, char c)
{
    switch (h->state) {
    case S_LT:
        if (c == '!') {
            h->state = S_BANG;
            h->bang_dashes = 0;
            return 1;
        }
        if (c == '/') {
            h->state = S_END_OPEN;
            return 1;
        }
        if (IS_ALPHA(c)) {
            sm_head_tag_begin(h, 0, &c, 1);
            return 1;
        }
        if (c == '?') {
            h->state = S_BOGUS;
            return 1;
        }
        h->state = S_DATA;
        return 0;
    case S_BANG:
        if (c != '-') {
            h->state = S_BOGUS;
            return 0;
        }
        if (++h->bang_dashes == 2) {
            h->state = S_COMMENT;
            h->comment_len = 0;
        }
        return 1;
    default:                /* S_END_OPEN */
        if (IS_ALPHA(c)) {
            sm_head_tag_begin(h, 1, &c, 1);
            return 1;
        }
        h->state = c == '>' ? S_DATA : S_BOGUS;
        return c == '>';
    }
}

/* Raw text (the title's): up to and past the next '<' that ends it. */
static apr_size_t scan_raw(sm_head *h, const char *d, apr_size_t len)
{
    const char *lt = memchr(d, '<', len);
    apr_size_t i;
    long r;

    title_append(h, d, lt ? (apr_size_t)(lt - d) : len);
    if (!lt)
        return len;
    i = (apr_size_t)(lt - d) + 1;
    r = raw_end_in_place(h, d + i, len - i);
    if (r > 0)
        return i + (apr_size_t)r;
    if (r < 0)
        title_append(h, "<", 1);
    else {
        h->state = S_RAW_END;
        h->raw_matched = 0;
    }
    return i;
}

int sm_head_feed(sm_head *h, const char *d, apr_size_t len)
{
    apr_size_t i = 0, n;
    int at_limit = 0;

    if (h->state == S_DONE)
        return 1;
    if (len >= SM_HEAD_LIMIT - h->seen) {
        len = SM_HEAD_LIMIT - h->seen;
        at_limit = 1;
    }
    while (i < len && h->state != S_DONE) {
        const char *lt;
        switch (h->state) {
        case S_DATA:            /* tags a newline apart: no memchr call */
            if (d[i] == '<')
                lt = d + i;
            else if (i + 1 < len && d[i + 1] == '<')
                lt = d + i + 1;
            else
                lt = memchr(d + i, '<', len - i);
            if (!lt) {
                i = len;
                break;
            }
            i = (apr_size_t)(lt - d) + 1;
            n = tag_in_place(h, d + i, len - i);
            if (n)
                i += n;
            else
                h->state = S_LT;
            break;
        case S_LT:
        case S_BANG:
        case S_END_OPEN:
            i += after_lt(h, d[i]);
            break;
        case S_COMMENT:
            i += scan_comment(h, d + i, len - i);
            break;
        case S_BOGUS:
            lt = memchr(d + i, '>', len - i);
            i = lt ? (apr_size_t)(lt - d) + 1 : len;
            if (lt)
                h->state = S_DATA;
            break;
        case S_TAG:
            i += sm_head_scan_tag(h, d + i, len - i);
            break;
        case S_RAW:
            i += scan_raw(h, d + i, len - i);
            break;
        case S_RAW_END:
            i += sm_head_scan_raw_end(h, d + i, len - i);
            break;
        case S_DONE:
            break;
        }
    }
    h->seen += i;
    if (at_limit && h->state != S_DONE) {
        h->state = S_DONE;
        h->res.truncated = 1;
    }
    h->res.done = h->state == S_DONE;
    return h->res.done;
}

const sm_head_result *sm_head_result_get(sm_head *h)
{
    if (h->in_title && !h->res.title)
        sm_head_finish_title(h);        /* an unclosed <title>: what was read */
    h->res.published = h->published_meta ? h->published_meta
                                         : h->published_ld;
    return &h->res;
}
