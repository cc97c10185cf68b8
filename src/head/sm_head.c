/* SPDX-License-Identifier: Apache-2.0 */
/* sm_head.c: the streaming <head> scanner (see sm_head.h).
 *
 * Written by hand: no library at hand reads HTML incrementally with
 * bounded memory and stops at the end of the head (libxml2's HTML parser
 * builds a tree, buffers and guesses encodings).  Text is skipped with
 * memchr; tags, comments and the ends of raw-text elements are read after
 * the tokenizer of the HTML standard (section 13.2.5), reduced to what
 * decides where a tag ends, their names and values a word at a time
 * (sm_head_bytes.h).  A tag split between two chunks is read byte by
 * byte. */
#include "head/sm_head.h"

#include <stddef.h>
#include <string.h>

#include <apr_lib.h>
#include <apr_strings.h>

#include "head/sm_alternates.h"
#include "head/sm_head_bytes.h"
#include "head/sm_head_images.h"
#include "util/sm_html.h"


typedef enum {
    S_DATA,         /* text: look for '<' */
    S_LT,           /* after '<' */
    S_BANG,         /* after "<!" (and bang_dashes '-') */
    S_COMMENT,      /* inside "<!-- ... -->" */
    S_BOGUS,        /* "<!DOCTYPE ...>", "<?...>": up to '>' */
    S_END_OPEN,     /* after "</" */
    S_TAG,          /* a tag in progress, up to its '>' */
    S_RAW,          /* raw text (script, style...): up to its end tag */
    S_RAW_END,      /* raw text after '<': matching "/name" */
    S_DONE
} scan_state;

/* Where a tag's '>' may be: only outside a quoted attribute value. */
typedef enum {
    T_TAG_NAME, T_BEFORE_NAME, T_ATTR_NAME, T_AFTER_NAME, T_BEFORE_VALUE,
    T_UNQUOTED, T_DQ, T_SQ,
    T_SKIP          /* a tag we do not read: up to the next '>' */
} tag_state;

struct sm_head {
    apr_pool_t *p;
    sm_head_result res;
    scan_state state;
    apr_size_t seen;            /* bytes consumed */
    int canonical_conflict;
    int template_depth;

    /* The tag in progress, without '<' and '>'. */
    tag_state tag;
    int tag_is_end;
    int tag_over;               /* not kept: longer than SM_HEAD_TAG_MAX,
                                   or not a tag we read */
    int kind;                   /* tag_kind, once the name is complete */
    apr_size_t name_len;
    apr_size_t tag_len;

    int bang_dashes;
    apr_size_t comment_len;     /* bytes of the comment so far */
    unsigned char back[3];      /* its last bytes, back[0] the last */

    const char *raw_name;       /* the raw-text element's name */
    apr_size_t raw_matched;     /* of "/name" after '<' */
    char raw_text[16];          /* those bytes as written (the longest raw
                                   name is 8 letters) */
    unsigned images[SM_HEAD_IMAGE_FORMS];   /* kept of each form */
    int in_title;               /* raw text kept as the title */
    apr_size_t title_len;
    char title[SM_HEAD_TITLE_MAX];

    char tag_buf[SM_HEAD_TAG_MAX + 1];   /* + the '>' tag_end puts */
};

sm_head *sm_head_create(apr_pool_t *p)
{
    sm_head *h = apr_palloc(p, sizeof(*h));

    memset(h, 0, offsetof(sm_head, title));
    h->p = p;
    h->state = S_DATA;
    h->res.alternates = apr_array_make(p, 0, sizeof(sm_head_alternate));
    return h;
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
#define value_tokens(p, v, len, commas, a, b) \
    list_tokens(p, v, len, commas, 0, a, sizeof(a) - 1, b, sizeof(b) - 1)

/* ---- tags ----------------------------------------------------------------- */

/* The attributes read, by name; a tag keeps the first of each. */
enum { A_REL, A_HREF, A_HREFLANG, A_NAME, A_CONTENT, A_PROPERTY, A_COUNT };

typedef struct {
    const char *value;  /* raw, NULL: not seen */
    apr_size_t len;
} attr;

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
    return -1;
}

/* The attributes of a tag, from s (just after its name) as the HTML
 * tokenizer reads them (before/after attribute name, attribute value
 * states), up to the '>' that ends the tag: returned, NULL when end comes
 * first.  Names and unquoted values are walked a word at a time
 * (find_class), quoted values skipped with find_byte.  The values of the
 * names attr_id knows are noted in a[A_COUNT]. */
static const char *parse_attrs(const char *s, const char *end, attr *a)
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
        id = attr_id(name, (apr_size_t)(s - name), end);
        while (s < end && IS_SPACE(*s))
            s++;
        if (s < end && *s == '=') {
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

static void on_meta(sm_head *h, const attr *a)
{
    int form;

    if (!a[A_CONTENT].value)
        return;
    /* og:image is a property (RDFa), twitter:image a name; both are
     * written either way in the wild. */
    if ((form = sm_head_image_meta_form(a[A_PROPERTY].value,
                                        a[A_PROPERTY].len)) >= 0
        || (form = sm_head_image_meta_form(a[A_NAME].value,
                                           a[A_NAME].len)) >= 0) {
        sm_head_image_add(h->p, &h->res, h->images, form,
                          a[A_CONTENT].value, a[A_CONTENT].len);
        return;
    }
    if (a[A_NAME].value
        && value_tokens(h->p, a[A_NAME].value, a[A_NAME].len, 0, "robots",
                        "googlebot")
        && value_tokens(h->p, a[A_CONTENT].value, a[A_CONTENT].len, 1,
                        "noindex", "none"))
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
                       "alternate");
    is_canonical = rel & 1;
    is_alternate = (rel & 2) && a[A_HREFLANG].value;
    if (!is_canonical && !is_alternate) {
        if (sm_head_image_rel(a[A_REL].value, a[A_REL].len))
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

/* What a tag's name makes of it. */
typedef enum {
    K_OTHER = 0,    /* starts the body (<body>, <div>, <plaintext>...) */
    K_HEAD_OK,      /* may be in a head, nothing to read */
    K_RAW,          /* its content is text up to its own end tag */
    K_TEMPLATE,
    K_END_HEAD,     /* as an end tag: </head>, </body>, </html>, </br> */
    K_META, K_LINK, K_BASE      /* start tags whose attributes are read */
} tag_kind;

#define READS_ATTRS(kind) ((kind) >= K_META)

/* The kind of the tag named s[0..n) (any case; end: where the chunk
 * ends, for folded_word); *raw_name, for K_RAW, its lowercase spelling.
 * Its case-folded word is compared with each name's. */
static tag_kind classify(const char *s, apr_size_t n, const char *end,
                         int is_end, const char **raw_name)
{
    static const struct {
        const char *name;
        apr_uint64_t word;
        tag_kind kind;
    } names[] = {
#define TAG(name, kind) {name, WORD(name), kind}
        TAG("meta", K_META), TAG("link", K_LINK), TAG("script", K_RAW),
        TAG("style", K_RAW), TAG("title", K_RAW), TAG("base", K_BASE),
        TAG("head", K_END_HEAD), TAG("body", K_END_HEAD),
        TAG("html", K_END_HEAD), TAG("br", K_END_HEAD),
        TAG("noscript", K_RAW), TAG("template", K_TEMPLATE),
        TAG("iframe", K_RAW), TAG("textarea", K_RAW), TAG("xmp", K_RAW),
        TAG("noembed", K_RAW), TAG("noframes", K_RAW),
        TAG("basefont", K_HEAD_OK), TAG("bgsound", K_HEAD_OK)
#undef TAG
    };
    apr_uint64_t w;
    unsigned k;

    if (n < 2 || n > 8)
        return is_end ? K_HEAD_OK : K_OTHER;
    w = folded_word(s, n, end);
    for (k = 0; k < sizeof(names) / sizeof(names[0]); k++) {
        tag_kind kind = names[k].kind;
        if (names[k].word != w)
            continue;
        *raw_name = names[k].name;
        if (kind == K_END_HEAD && !is_end)
            /* <html>, <head> start tags are fine; <body>, <br> are not */
            return (names[k].name[1] == 't' || names[k].name[1] == 'e')
                   ? K_HEAD_OK : K_OTHER;
        if (is_end && kind != K_END_HEAD && kind != K_TEMPLATE)
            return K_HEAD_OK;
        return kind;
    }
    return is_end ? K_HEAD_OK : K_OTHER;
}

static void finish_title(sm_head *h)
{
    /* Valid UTF-8 first, so that no dropped control byte leaves two
     * spaces side by side (found by fuzz_head). */
    char *t = sm_utf8_clean(h->p, sm_html_decode(h->p, h->title,
                                                 h->title_len)), *i, *o;
    int space = 0;

    for (i = o = t; *i; i++) {          /* collapse whitespace */
        if (IS_SPACE(*i)) {
            space = 1;
            continue;
        }
        if (space && o > t)
            *o++ = ' ';
        space = 0;
        *o++ = *i;
    }
    *o = '\0';
    h->res.title = t;
}

/* A whole tag was read: act on it.  a: the attributes of a tag whose
 * attributes are read (READS_ATTRS), NULL when it is too long to be read. */
static void on_tag(sm_head *h, tag_kind kind, int is_end, const attr *a)
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
    p = find_class(p + 1, end, C_SPACE | C_SLASH | C_GT);
    if (p == end)
        return 0;
    kind = classify(name, (apr_size_t)(p - name), end, is_end,
                    &h->raw_name);
    if (is_end || !READS_ATTRS(kind)) {
        gt = memchr(p, '>', (apr_size_t)(end - p));  /* its first '>' */
        if (!gt)
            return 0;
        on_tag(h, kind, is_end, NULL);
        return (apr_size_t)(gt - d) + 1;
    }
    memset(a, 0, sizeof(a));
    gt = parse_attrs(p, end, a);
    if (!gt)
        return 0;
    on_tag(h, kind, 0, gt - name <= SM_HEAD_TAG_MAX ? a : NULL);
    return (apr_size_t)(gt - d) + 1;
}

/* The byte-wise path, for a tag split between chunks: it is kept in
 * tag_buf (only its name, unless it is one we read). */
static void tag_begin(sm_head *h, int is_end, const char *name,
                      apr_size_t len)
{
    h->state = S_TAG;
    h->tag = T_TAG_NAME;
    h->tag_is_end = is_end;
    h->tag_over = 0;
    memcpy(h->tag_buf, name, len);
    h->tag_len = len;
}

/* The tag's name is complete: only the tags we read keep the rest. */
static void tag_named(sm_head *h)
{
    h->kind = classify(h->tag_buf, h->tag_len, h->tag_buf + h->tag_len,
                       h->tag_is_end, &h->raw_name);
    h->name_len = h->tag_len;
    h->tag = T_BEFORE_NAME;
    if (h->tag_is_end || !READS_ATTRS(h->kind)) {
        h->tag_over = 1;
        h->tag = T_SKIP;
    }
}

/* Its '>' came: the same reading as tag_in_place's, over tag_buf with a
 * '>' put after the tag for parse_attrs to stop at. */
static void tag_end(sm_head *h)
{
    attr a[A_COUNT];
    const char *s, *end;

    if (h->tag_is_end || h->tag_over || !READS_ATTRS(h->kind)) {
        on_tag(h, h->kind, h->tag_is_end, NULL);
        return;
    }
    memset(a, 0, sizeof(a));
    h->tag_buf[h->tag_len] = '>';
    s = h->tag_buf + h->name_len;
    end = h->tag_buf + h->tag_len + 1;
    parse_attrs(s, end, a);
    on_tag(h, h->kind, 0, a);
}

static void tag_append(sm_head *h, const char *s, apr_size_t n)
{
    if (h->tag_over)
        return;
    if (n > SM_HEAD_TAG_MAX - h->tag_len) {
        h->tag_over = 1;
        return;
    }
    memcpy(h->tag_buf + h->tag_len, s, n);
    h->tag_len += n;
}

static void title_append(sm_head *h, const char *s, apr_size_t n)
{
    if (!h->in_title)
        return;
    if (n > SM_HEAD_TITLE_MAX - h->title_len)
        n = SM_HEAD_TITLE_MAX - h->title_len;
    memcpy(h->title + h->title_len, s, n);
    h->title_len += n;
}

/* ---- the tokenizer ------------------------------------------------------- */

/* In a tag split between chunks: up to its '>', byte by byte through the
 * states parse_attrs walks (quoted values with memchr).  Returns bytes
 * used. */
static apr_size_t scan_tag(sm_head *h, const char *d, apr_size_t len)
{
    apr_size_t i = 0;

    while (i < len) {
        char c = d[i];

        if (h->tag == T_SKIP) {
            const char *gt = memchr(d + i, '>', len - i);
            if (!gt)
                return len;
            tag_end(h);
            return (apr_size_t)(gt - d) + 1;
        }
        if (h->tag == T_DQ || h->tag == T_SQ) {
            const char *q = memchr(d + i, h->tag == T_DQ ? '"' : '\'',
                                   len - i);
            apr_size_t n = q ? (apr_size_t)(q - d) + 1 - i : len - i;
            tag_append(h, d + i, n);
            i += n;
            if (q)
                h->tag = T_BEFORE_NAME;
            continue;
        }
        if (c == '>') {
            if (h->tag == T_TAG_NAME)
                tag_named(h);
            tag_end(h);
            return i + 1;
        }
        switch (h->tag) {
        case T_TAG_NAME:
            if (IS_SPACE(c) || c == '/')
                tag_named(h);
            break;
        case T_BEFORE_NAME:
            if (!IS_SPACE(c) && c != '/')
                h->tag = T_ATTR_NAME;
            break;
        case T_ATTR_NAME:
            if (IS_SPACE(c))
                h->tag = T_AFTER_NAME;
            else if (c == '/')
                h->tag = T_BEFORE_NAME;
            else if (c == '=')
                h->tag = T_BEFORE_VALUE;
            break;
        case T_AFTER_NAME:
            if (c == '=')
                h->tag = T_BEFORE_VALUE;
            else if (c == '/')
                h->tag = T_BEFORE_NAME;
            else if (!IS_SPACE(c))
                h->tag = T_ATTR_NAME;
            break;
        case T_BEFORE_VALUE:
            if (c == '"')
                h->tag = T_DQ;
            else if (c == '\'')
                h->tag = T_SQ;
            else if (!IS_SPACE(c))
                h->tag = T_UNQUOTED;
            break;
        default:                                /* T_UNQUOTED */
            if (IS_SPACE(c))
                h->tag = T_BEFORE_NAME;
            break;
        }
        tag_append(h, &c, 1);
        i++;
    }
    return i;
}

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

/* After '<' in raw text: is it "</name" and a delimiter? */
static apr_size_t scan_raw_end(sm_head *h, const char *d, apr_size_t len)
{
    apr_size_t i = 0, name_len = strlen(h->raw_name);

    while (i < len) {
        char c = d[i];
        if (h->raw_matched == 0) {
            if (c != '/')
                break;
        }
        else if (h->raw_matched <= name_len) {
            if (((unsigned char)c | 0x20)
                != (unsigned char)h->raw_name[h->raw_matched - 1])
                break;
        }
        else {
            if (!(IS_SPACE(c) || c == '/' || c == '>'))
                break;
            if (h->in_title)
                finish_title(h);
            h->in_title = 0;
            tag_begin(h, 1, h->raw_name, name_len);
            return i;                   /* scan_tag reads the delimiter */
        }
        h->raw_text[h->raw_matched++] = c;
        i++;
    }
    if (i < len) {                      /* not the end tag: it was text */
        title_append(h, "<", 1);
        title_append(h, h->raw_text, h->raw_matched);
        h->state = S_RAW;
    }
    return i;
}

/* The fast path of scan_raw_end: "</name", its delimiter and its '>'
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
    gt = memchr(d + n + 1, '>', len - n - 1);
    if (!gt)
        return 0;
    if (h->in_title)
        finish_title(h);
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
            tag_begin(h, 0, &c, 1);
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
            tag_begin(h, 1, &c, 1);
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
        case S_DATA:
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
            i += scan_tag(h, d + i, len - i);
            break;
        case S_RAW:
            i += scan_raw(h, d + i, len - i);
            break;
        case S_RAW_END:
            i += scan_raw_end(h, d + i, len - i);
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
        finish_title(h);        /* an unclosed <title>: what was read */
    return &h->res;
}
