/* sm_head.c: the streaming <head> scanner (see sm_head.h).
 *
 * Written by hand: no library at hand reads HTML incrementally with
 * bounded memory and stops at the end of the head (libxml2's HTML parser
 * builds a tree, buffers and guesses encodings).  Text is skipped with
 * memchr; only tags, comments and the ends of raw-text elements are looked
 * at byte by byte, after the tokenizer of the HTML standard (section
 * 13.2.5), reduced to what decides where a tag ends. */
#include "sm_head.h"

#include <stddef.h>
#include <string.h>

#include <apr_lib.h>
#include <apr_strings.h>

#include "sm_html.h"


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
    int in_title;               /* raw text kept as the title */
    apr_size_t title_len;
    char title[SM_HEAD_TITLE_MAX];

    char tag_buf[SM_HEAD_TAG_MAX];
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

/* Byte classes of the tokenizer, one table lookup per byte. */
enum { C_SPACE = 1, C_SLASH = 2, C_EQ = 4, C_GT = 8, C_COMMA = 16 };
static const unsigned char byte_class[256] = {
    ['\t'] = C_SPACE, ['\n'] = C_SPACE, ['\f'] = C_SPACE, ['\r'] = C_SPACE,
    [' '] = C_SPACE, ['/'] = C_SLASH, ['='] = C_EQ, ['>'] = C_GT,
    [','] = C_COMMA
};
#define IN_CLASS(c, set) (byte_class[(unsigned char)(c)] & (set))
#define IS_SPACE(c) IN_CLASS(c, C_SPACE)

/* HTML names and keywords are ASCII case-insensitive: folded by hand, with
 * no strlen of lower and no locale-dependent tolower call per byte (the
 * profile showed both; the C library has no length-bounded ASCII compare
 * that also checks lower's end). */
static int ci_equal(const char *a, apr_size_t len, const char *lower)
{
    apr_size_t i;

    for (i = 0; i < len; i++) {
        unsigned char c = (unsigned char)a[i];
        if (c >= 'A' && c <= 'Z')
            c = (unsigned char)(c + ('a' - 'A'));
        if (!lower[i] || c != (unsigned char)lower[i])
            return 0;
    }
    return lower[len] == '\0';
}

/* Does the list v[0..len) (separated by whitespace, and by commas when
 * commas is set) hold one of the tokens? */
static int has_token(const char *v, apr_size_t len, int commas,
                     const char *const *tokens)
{
    const char *end = v + len;

    int seps = C_SPACE | (commas ? C_COMMA : 0);

    while (v < end) {
        const char *start;
        int k;
        while (v < end && IN_CLASS(*v, seps))
            v++;
        start = v;
        while (v < end && !IN_CLASS(*v, seps))
            v++;
        for (k = 0; v > start && tokens[k]; k++)
            if (ci_equal(start, (apr_size_t)(v - start), tokens[k]))
                return 1;
    }
    return 0;
}

/* has_token on an attribute's value, decoded only when it holds '&'. */
static int value_has_token(apr_pool_t *p, const char *v, apr_size_t len,
                           int commas, const char *const *tokens)
{
    if (memchr(v, '&', len)) {
        v = sm_html_decode(p, v, len);
        len = strlen(v);
    }
    return has_token(v, len, commas, tokens);
}

/* ---- tags ----------------------------------------------------------------- */

typedef struct {
    const char *name;   /* lowercase */
    apr_size_t name_len;
    const char *value;  /* raw, NULL: not seen */
    apr_size_t len;
} attr;

/* The attributes of a tag, from s (just after its name) up to its '>' or
 * end, as the HTML tokenizer reads them (before/after attribute name,
 * attribute value states): the values of those named in want are noted
 * (the first of duplicates).  Returns the '>' that ends the tag, NULL when
 * end comes first.  Attribute names are short and walked byte by byte,
 * quoted values are skipped with memchr. */
static const char *parse_attrs(const char *s, const char *end, attr *want,
                               int n)
{
    for (;;) {
        const char *name, *value = NULL;
        apr_size_t name_len, value_len = 0;
        int k;

        while (s < end && IN_CLASS(*s, C_SPACE | C_SLASH))
            s++;
        if (s == end)
            return NULL;
        if (*s == '>')
            return s;
        name = s++;                             /* may be '=' */
        while (s < end && !IN_CLASS(*s, C_SPACE | C_SLASH | C_EQ | C_GT))
            s++;
        name_len = (apr_size_t)(s - name);
        while (s < end && IS_SPACE(*s))
            s++;
        if (s < end && *s == '=') {
            s++;
            while (s < end && IS_SPACE(*s))
                s++;
            if (s < end && (*s == '"' || *s == '\'')) {
                const char *q = memchr(s + 1, *s, (apr_size_t)(end - s - 1));
                value = s + 1;
                value_len = (apr_size_t)((q ? q : end) - value);
                s = q ? q + 1 : end;
            }
            else {
                value = s;
                while (s < end && !IN_CLASS(*s, C_SPACE | C_GT))
                    s++;
                value_len = (apr_size_t)(s - value);
            }
        }
        for (k = 0; k < n; k++) {
            if (want[k].name_len == name_len && !want[k].value
                && ci_equal(name, name_len, want[k].name)) {
                want[k].value = value ? value : "";
                want[k].len = value_len;
            }
        }
    }
}

/* The attributes each tag we read wants, in this order. */
#define META_ATTRS {{"name", 4, NULL, 0}, {"content", 7, NULL, 0}}
#define LINK_ATTRS {{"rel", 3, NULL, 0}, {"href", 4, NULL, 0}, \
                    {"hreflang", 8, NULL, 0}}
#define BASE_ATTRS {{"href", 4, NULL, 0}}

static void on_meta(sm_head *h, const attr *a)
{
    static const char *const names[] = {"robots", "googlebot", NULL};
    static const char *const noindex[] = {"noindex", "none", NULL};

    if (a[0].value && a[1].value
        && value_has_token(h->p, a[0].value, a[0].len, 0, names)
        && value_has_token(h->p, a[1].value, a[1].len, 1, noindex))
        h->res.noindex = 1;
}

static int is_http_url(const char *href)
{
    const char *c;
    if (strncasecmp(href, "http://", 7) != 0
        && strncasecmp(href, "https://", 8) != 0)
        return 0;
    for (c = href; *c; c++)
        if ((unsigned char)*c <= ' ')
            return 0;
    return c - href <= 4096;
}

static int is_language_tag(const char *v)
{
    const char *c;
    for (c = v; *c; c++)
        if (!apr_isalnum(*c) && *c != '-')
            return 0;
    return c > v && c - v <= 35;
}

static void on_link(sm_head *h, const attr *a)
{
    static const char *const canonical[] = {"canonical", NULL};
    static const char *const alternate[] = {"alternate", NULL};
    const char *href;
    int is_canonical, is_alternate;

    if (!a[0].value || !a[1].value)
        return;
    is_canonical = value_has_token(h->p, a[0].value, a[0].len, 0, canonical);
    is_alternate = a[2].value
                   && value_has_token(h->p, a[0].value, a[0].len, 0,
                                      alternate);
    if (!is_canonical && !is_alternate)
        return;                         /* stylesheets, icons... */
    href = sm_html_decode(h->p, a[1].value, a[1].len);
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
        const char *lang = sm_html_decode(h->p, a[2].value, a[2].len);
        apr_array_header_t *alts = h->res.alternates;
        int i;
        if (!is_language_tag(lang) || !is_http_url(href)
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
    if (a[0].value && !h->res.base_href)
        h->res.base_href = sm_html_decode(h->p, a[0].value, a[0].len);
}

/* What a tag's name makes of it. */
typedef enum {
    K_OTHER = 0,    /* starts the body (<body>, <div>, <plaintext>...) */
    K_HEAD_OK,      /* may be in a head, nothing to read */
    K_RAW,          /* its content is text up to its own end tag */
    K_TEMPLATE,
    K_META, K_LINK, K_BASE,
    K_END_HEAD      /* as an end tag: </head>, </body>, </html>, </br> */
} tag_kind;

static const struct { const char *name; tag_kind kind; } tag_names[] = {
    {"base", K_BASE}, {"basefont", K_HEAD_OK}, {"bgsound", K_HEAD_OK},
    {"body", K_END_HEAD}, {"br", K_END_HEAD}, {"head", K_END_HEAD},
    {"html", K_END_HEAD}, {"iframe", K_RAW}, {"link", K_LINK},
    {"meta", K_META}, {"noembed", K_RAW}, {"noframes", K_RAW},
    {"noscript", K_RAW}, {"script", K_RAW}, {"style", K_RAW},
    {"template", K_TEMPLATE}, {"textarea", K_RAW}, {"title", K_RAW},
    {"xmp", K_RAW}
};

/* The kind of the name at s (any case); *raw_name, for K_RAW, its
 * lowercase spelling.  Compared only with the names of its first letter
 * and length, so most tags cost one comparison or none. */
static tag_kind classify(const char *s, apr_size_t n, int is_end,
                         const char **raw_name)
{
    unsigned k, lo, hi;

    switch (apr_tolower(*s)) {      /* tag_names is sorted */
    case 'b': lo = 0; hi = 5; break;
    case 'h': lo = 5; hi = 7; break;
    case 'i': lo = 7; hi = 8; break;
    case 'l': lo = 8; hi = 9; break;
    case 'm': lo = 9; hi = 10; break;
    case 'n': lo = 10; hi = 13; break;
    case 's': lo = 13; hi = 15; break;
    case 't': lo = 15; hi = 18; break;
    case 'x': lo = 18; hi = 19; break;
    default: lo = hi = 0; break;
    }
    for (k = lo; k < hi; k++) {
        const char *name = tag_names[k].name;
        tag_kind kind = tag_names[k].kind;
        if (!ci_equal(s, n, name))
            continue;
        *raw_name = name;
        if (kind == K_END_HEAD && !is_end)
            /* <html>, <head> start tags are fine; <body>, <br> are not */
            return (name[1] == 't' || name[1] == 'e') ? K_HEAD_OK : K_OTHER;
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

/* A whole tag was read: act on it.  a: the attributes of a tag we read
 * (META_ATTRS...), NULL when it is too long to be read. */
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

/* The attributes a tag of this kind wants read: their count. */
static int wanted(tag_kind kind, attr *a)
{
    static const attr meta[] = META_ATTRS, link[] = LINK_ATTRS,
                      base[] = BASE_ATTRS;

    switch (kind) {
    case K_META:
        memcpy(a, meta, sizeof(meta));
        return 2;
    case K_LINK:
        memcpy(a, link, sizeof(link));
        return 3;
    case K_BASE:
        memcpy(a, base, sizeof(base));
        return 1;
    default:
        return 0;
    }
}

/* The fast path: a whole tag inside the chunk (d: just after its '<'),
 * read in place.  Returns the bytes it took (up to its '>'), 0 when the
 * tag is not whole here or is not a tag (the byte-wise path takes it). */
static apr_size_t tag_in_place(sm_head *h, const char *d, apr_size_t len)
{
    const char *p = d, *end = d + len, *name, *gt;
    int is_end = 0, n;
    tag_kind kind;
    attr a[3];

    if (p < end && *p == '/') {
        is_end = 1;
        p++;
    }
    if (p == end || !apr_isalpha(*p))
        return 0;
    name = p;
    while (p < end && !IN_CLASS(*p, C_SPACE | C_SLASH | C_GT))
        p++;
    if (p == end)
        return 0;
    kind = classify(name, (apr_size_t)(p - name), is_end, &h->raw_name);
    n = is_end ? 0 : wanted(kind, a);
    gt = n ? parse_attrs(p, end, a, n) : memchr(p, '>', (apr_size_t)(end - p));
    if (!gt)
        return 0;
    on_tag(h, kind, is_end,
           n && gt - name <= SM_HEAD_TAG_MAX ? a : NULL);
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
    h->kind = classify(h->tag_buf, h->tag_len, h->tag_is_end, &h->raw_name);
    h->name_len = h->tag_len;
    h->tag = T_BEFORE_NAME;
    if (h->tag_is_end || h->kind < K_META) {
        h->tag_over = 1;
        h->tag = T_SKIP;
    }
}

/* Its '>' came: the same reading as tag_in_place's. */
static void tag_end(sm_head *h)
{
    attr a[3];
    int n = h->tag_is_end || h->tag_over ? 0 : wanted(h->kind, a);

    if (n)
        parse_attrs(h->tag_buf + h->name_len, h->tag_buf + h->tag_len, a, n);
    on_tag(h, h->kind, h->tag_is_end, n ? a : NULL);
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
            if (apr_tolower(c) != h->raw_name[h->raw_matched - 1])
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
        h->raw_matched++;
        i++;
    }
    if (i < len) {                      /* not the end tag: it was text */
        title_append(h, "<", 1);
        if (h->raw_matched)
            title_append(h, "/", 1);
        if (h->raw_matched > 1)
            title_append(h, h->raw_name, h->raw_matched - 1);
        h->state = S_RAW;
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
        char c = d[i];
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
            if (c == '!') {
                h->state = S_BANG;
                h->bang_dashes = 0;
                i++;
            }
            else if (c == '/') {
                h->state = S_END_OPEN;
                i++;
            }
            else if (apr_isalpha(c)) {
                tag_begin(h, 0, &c, 1);
                i++;
            }
            else if (c == '?') {
                h->state = S_BOGUS;
                i++;
            }
            else {
                h->state = S_DATA;
            }
            break;
        case S_BANG:
            if (c != '-') {
                h->state = S_BOGUS;
            }
            else if (++h->bang_dashes == 2) {
                h->state = S_COMMENT;
                h->comment_len = 0;
                i++;
            }
            else {
                i++;
            }
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
        case S_END_OPEN:
            if (apr_isalpha(c)) {
                tag_begin(h, 1, &c, 1);
                i++;
            }
            else {
                h->state = c == '>' ? S_DATA : S_BOGUS;
                i += c == '>';
            }
            break;
        case S_TAG:
            i += scan_tag(h, d + i, len - i);
            break;
        case S_RAW:
            lt = memchr(d + i, '<', len - i);
            title_append(h, d + i, lt ? (apr_size_t)(lt - d) - i : len - i);
            if (!lt) {
                i = len;
                break;
            }
            i = (apr_size_t)(lt - d) + 1;
            h->state = S_RAW_END;
            h->raw_matched = 0;
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
