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

#include "sm_url.h"

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
typedef enum { T_NAME, T_AFTER_EQ, T_UNQUOTED, T_DQ, T_SQ } tag_state;

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
    int tag_over;               /* longer than SM_HEAD_TAG_MAX: skipped */
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

#define IS_SPACE(c) ((c) == ' ' || (c) == '\t' || (c) == '\n' \
                     || (c) == '\r' || (c) == '\f')

static int ci_equal(const char *a, apr_size_t len, const char *lower)
{
    apr_size_t i;
    for (i = 0; i < len; i++)
        if (!lower[i] || apr_tolower(a[i]) != lower[i])
            return 0;
    return lower[len] == '\0';
}

static char *put_utf8(char *o, unsigned long cp)
{
    if (cp == 0 || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
        cp = 0xFFFD;
    if (cp < 0x80) {
        *o++ = (char)cp;
    }
    else if (cp < 0x800) {
        *o++ = (char)(0xC0 | (cp >> 6));
        *o++ = (char)(0x80 | (cp & 0x3F));
    }
    else if (cp < 0x10000) {
        *o++ = (char)(0xE0 | (cp >> 12));
        *o++ = (char)(0x80 | ((cp >> 6) & 0x3F));
        *o++ = (char)(0x80 | (cp & 0x3F));
    }
    else {
        *o++ = (char)(0xF0 | (cp >> 18));
        *o++ = (char)(0x80 | ((cp >> 12) & 0x3F));
        *o++ = (char)(0x80 | ((cp >> 6) & 0x3F));
        *o++ = (char)(0x80 | (cp & 0x3F));
    }
    return o;
}

/* The named references a head's URLs and titles use; the first four are
 * also read without ';' (as browsers read them in attribute values, unless
 * an alphanumeric or '=' follows). */
static const struct { const char *name; unsigned long cp; } named[] = {
    {"amp", '&'}, {"lt", '<'}, {"gt", '>'}, {"quot", '"'}, {"apos", '\''},
    {"nbsp", 0xA0}, {"copy", 0xA9}, {"reg", 0xAE}, {"trade", 0x2122},
    {"ndash", 0x2013}, {"mdash", 0x2014}, {"hellip", 0x2026},
    {"laquo", 0xAB}, {"raquo", 0xBB}, {"lsquo", 0x2018},
    {"rsquo", 0x2019}, {"ldquo", 0x201C}, {"rdquo", 0x201D},
    {"euro", 0x20AC}, {"middot", 0xB7}, {"bull", 0x2022}
};
#define LEGACY_NAMED 4

/* One character reference at s (s[0] == '&'); returns the bytes it takes,
 * 0 when it is not one (then '&' is literal). */
static apr_size_t char_ref(const char *s, apr_size_t len, char **o)
{
    apr_size_t i = 1, start;
    unsigned long cp = 0;
    unsigned k;

    if (i < len && s[i] == '#') {
        int hex = 0;
        i++;
        if (i < len && (s[i] == 'x' || s[i] == 'X')) {
            hex = 1;
            i++;
        }
        start = i;
        while (i < len && (hex ? apr_isxdigit(s[i]) : apr_isdigit(s[i]))) {
            if (cp <= 0x10FFFF)
                cp = cp * (hex ? 16 : 10)
                     + (unsigned long)(apr_isdigit(s[i]) ? s[i] - '0'
                                       : apr_tolower(s[i]) - 'a' + 10);
            i++;
        }
        if (i == start)
            return 0;
        if (i < len && s[i] == ';')
            i++;
        *o = put_utf8(*o, cp);
        return i;
    }
    start = i;
    while (i < len && apr_isalnum(s[i]) && i - start < 8)
        i++;
    for (k = 0; k < sizeof(named) / sizeof(named[0]); k++) {
        apr_size_t n = strlen(named[k].name);
        if (start + n > len || memcmp(s + start, named[k].name, n) != 0)
            continue;
        if (start + n < len && s[start + n] == ';') {
            *o = put_utf8(*o, named[k].cp);
            return start + n + 1;
        }
        if (k < LEGACY_NAMED && (start + n == len
                                 || !(apr_isalnum(s[start + n])
                                      || s[start + n] == '='))) {
            *o = put_utf8(*o, named[k].cp);
            return start + n;
        }
    }
    return 0;
}

/* A value with its character references decoded and its leading and
 * trailing whitespace removed. */
static char *decode(apr_pool_t *p, const char *s, apr_size_t len)
{
    /* A reference never takes fewer bytes than it gives, except &#...;
     * forms of 1-2 digits giving 3-4 bytes: 2x is enough. */
    char *out = apr_palloc(p, 2 * len + 1), *o = out;
    apr_size_t i = 0;

    while (len && IS_SPACE(*s)) {
        s++;
        len--;
    }
    while (len && IS_SPACE(s[len - 1]))
        len--;
    while (i < len) {
        const char *amp = memchr(s + i, '&', len - i);
        apr_size_t n = amp ? (apr_size_t)(amp - s) - i : len - i, used;
        memcpy(o, s + i, n);
        o += n;
        i += n;
        if (!amp)
            break;
        used = char_ref(s + i, len - i, &o);
        if (!used) {
            *o++ = '&';
            used = 1;
        }
        i += used;
    }
    *o = '\0';
    return out;
}

/* Does the list (separated by whitespace, and by commas when commas is
 * set) hold one of the tokens? */
static int has_token(const char *v, int commas, const char *const *tokens)
{
    while (*v) {
        const char *start;
        int k;
        while (*v && (IS_SPACE(*v) || (commas && *v == ',')))
            v++;
        start = v;
        while (*v && !IS_SPACE(*v) && !(commas && *v == ','))
            v++;
        for (k = 0; v > start && tokens[k]; k++)
            if (ci_equal(start, (apr_size_t)(v - start), tokens[k]))
                return 1;
    }
    return 0;
}

/* ---- tags ----------------------------------------------------------------- */

typedef struct {
    const char *name;   /* lowercase */
    const char *value;  /* raw, NULL: not seen */
    apr_size_t len;
} attr;

/* The tag buffer's attributes named in want (the first of duplicates). */
static void read_attrs(const char *s, apr_size_t len, attr *want, int n)
{
    apr_size_t i = 0;
    int k;

    while (i < len && !IS_SPACE(s[i]) && s[i] != '/')
        i++;                                    /* the tag name */
    for (;;) {
        apr_size_t name, name_len, value = 0, value_len = 0;
        while (i < len && (IS_SPACE(s[i]) || s[i] == '/'))
            i++;
        if (i >= len)
            return;
        name = i++;                             /* may start with '=' */
        while (i < len && !IS_SPACE(s[i]) && s[i] != '/' && s[i] != '=')
            i++;
        name_len = i - name;
        while (i < len && IS_SPACE(s[i]))
            i++;
        if (i < len && s[i] == '=') {
            i++;
            while (i < len && IS_SPACE(s[i]))
                i++;
            if (i < len && (s[i] == '"' || s[i] == '\'')) {
                const char *q = memchr(s + i + 1, s[i], len - i - 1);
                value = i + 1;
                value_len = q ? (apr_size_t)(q - s) - value : len - value;
                i = value + value_len + 1;
            }
            else {
                value = i;
                while (i < len && !IS_SPACE(s[i]))
                    i++;
                value_len = i - value;
            }
        }
        for (k = 0; k < n; k++) {
            if (!want[k].value && ci_equal(s + name, name_len, want[k].name)) {
                want[k].value = s + value;
                want[k].len = value_len;
            }
        }
    }
}

static void on_meta(sm_head *h, const char *s, apr_size_t len)
{
    static const char *const names[] = {"robots", "googlebot", NULL};
    static const char *const noindex[] = {"noindex", "none", NULL};
    attr a[2] = {{"name", NULL, 0}, {"content", NULL, 0}};

    read_attrs(s, len, a, 2);
    if (a[0].value && a[1].value
        && has_token(decode(h->p, a[0].value, a[0].len), 0, names)
        && has_token(decode(h->p, a[1].value, a[1].len), 1, noindex))
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

static void on_link(sm_head *h, const char *s, apr_size_t len)
{
    static const char *const canonical[] = {"canonical", NULL};
    static const char *const alternate[] = {"alternate", NULL};
    attr a[3] = {{"rel", NULL, 0}, {"href", NULL, 0}, {"hreflang", NULL, 0}};
    const char *rel, *href;

    read_attrs(s, len, a, 3);
    if (!a[0].value || !a[1].value)
        return;
    rel = decode(h->p, a[0].value, a[0].len);
    href = decode(h->p, a[1].value, a[1].len);
    if (has_token(rel, 0, canonical) && !h->canonical_conflict) {
        if (!h->res.canonical) {
            h->res.canonical = href;
        }
        else if (strcmp(h->res.canonical, href) != 0) {
            h->res.canonical = NULL;
            h->canonical_conflict = 1;
        }
    }
    if (a[2].value && has_token(rel, 0, alternate)) {
        const char *lang = decode(h->p, a[2].value, a[2].len);
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

static void on_base(sm_head *h, const char *s, apr_size_t len)
{
    attr a[1] = {{"href", NULL, 0}};

    read_attrs(s, len, a, 1);
    if (a[0].value && !h->res.base_href)
        h->res.base_href = decode(h->p, a[0].value, a[0].len);
}

/* Elements whose content is text up to their own end tag. */
static const char *const raw_text[] = {
    "script", "style", "noscript", "textarea", "title", "xmp", "iframe",
    "noembed", "noframes", NULL
};

/* Start tags a head may hold; any other starts the body. */
static const char *const in_head[] = {
    "html", "head", "base", "basefont", "bgsound", "link", "meta", "title",
    "noscript", "noframes", "style", "script", "template", NULL
};

static const char *listed(const char *name, apr_size_t len,
                          const char *const *list)
{
    for (; *list; list++)
        if (ci_equal(name, len, *list))
            return *list;
    return NULL;
}

static void finish_title(sm_head *h)
{
    char *t = decode(h->p, h->title, h->title_len), *i, *o;
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

/* A whole tag is in tag_buf: act on it. */
static void on_tag(sm_head *h)
{
    const char *s = h->tag_buf;
    apr_size_t len = h->tag_len, n = 0;
    const char *raw;

    while (n < len && !IS_SPACE(s[n]) && s[n] != '/')
        n++;
    h->state = S_DATA;
    if (h->tag_is_end) {
        if (ci_equal(s, n, "template")) {
            if (h->template_depth)
                h->template_depth--;
        }
        else if (!h->template_depth
                 && (ci_equal(s, n, "head") || ci_equal(s, n, "body")
                     || ci_equal(s, n, "html") || ci_equal(s, n, "br"))) {
            h->state = S_DONE;
        }
        return;
    }
    if ((raw = listed(s, n, raw_text))) {
        h->state = S_RAW;
        h->raw_name = raw;
        h->in_title = !h->template_depth && !h->res.title
                      && strcmp(raw, "title") == 0;
        h->title_len = 0;
        return;
    }
    if (ci_equal(s, n, "template")) {
        h->template_depth++;
        return;
    }
    if (h->template_depth)
        return;
    if (ci_equal(s, n, "plaintext") || !listed(s, n, in_head)) {
        h->state = S_DONE;
        return;
    }
    if (h->tag_over)
        return;
    if (ci_equal(s, n, "meta"))
        on_meta(h, s, len);
    else if (ci_equal(s, n, "link"))
        on_link(h, s, len);
    else if (ci_equal(s, n, "base"))
        on_base(h, s, len);
}

static void tag_begin(sm_head *h, int is_end, const char *name,
                      apr_size_t len)
{
    h->state = S_TAG;
    h->tag = T_NAME;
    h->tag_is_end = is_end;
    h->tag_over = 0;
    memcpy(h->tag_buf, name, len);
    h->tag_len = len;
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

/* In a tag: up to its '>' (quotes respected).  Returns bytes used. */
static apr_size_t scan_tag(sm_head *h, const char *d, apr_size_t len)
{
    apr_size_t i = 0;

    while (i < len) {
        char c = d[i];
        if (h->tag == T_DQ || h->tag == T_SQ) {
            const char *q = memchr(d + i, h->tag == T_DQ ? '"' : '\'',
                                   len - i);
            apr_size_t n = q ? (apr_size_t)(q - d) - i + 1 : len - i;
            tag_append(h, d + i, n);
            i += n;
            if (q)
                h->tag = T_NAME;
            continue;
        }
        if (c == '>') {
            on_tag(h);
            return i + 1;
        }
        switch (h->tag) {
        case T_NAME:
            if (c == '=')
                h->tag = T_AFTER_EQ;
            break;
        case T_AFTER_EQ:
            if (c == '"')
                h->tag = T_DQ;
            else if (c == '\'')
                h->tag = T_SQ;
            else if (!IS_SPACE(c))
                h->tag = T_UNQUOTED;
            break;
        default:                                /* T_UNQUOTED */
            if (IS_SPACE(c))
                h->tag = T_NAME;
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
    apr_size_t i = 0;
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

/* ---- resolving hrefs ------------------------------------------------------ */

/* "scheme://authority" of an absolute http(s) href, canonical; *rest after
 * the authority.  NULL when it is not one. */
static const char *href_base(apr_pool_t *p, const char *href,
                             const char *scheme, const char **rest)
{
    const char *a = href + 2, *end = a + strcspn(a, "/?#"), *err;

    *rest = end;
    return sm_url_parse_base(p, apr_pstrcat(p, scheme, "://",
                                            apr_pstrmemdup(p, a,
                                                           (apr_size_t)
                                                           (end - a)),
                                            NULL), &err);
}

int sm_head_resolve(apr_pool_t *p, const char *page_base,
                    const char *page_path, const char *href,
                    const char **base, const char **target)
{
    char *h = apr_palloc(p, strlen(href) + 1), *o = h;
    const char *c, *rest, *scheme_end;
    char *t;
    apr_size_t n;

    for (c = href; *c; c++)         /* as URL parsers: tabs, newlines */
        if (*c != '\t' && *c != '\n' && *c != '\r')
            *o++ = *c;
    *o = '\0';
    if (page_path[0] != '/') {      /* absolute-form request target */
        const char *a = strstr(page_path, "://");
        page_path = a ? a + 3 + strcspn(a + 3, "/?#") : "";
        if (page_path[0] != '/')
            page_path = apr_pstrcat(p, "/", page_path, NULL);
    }

    scheme_end = h + strspn(h, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQ"
                               "RSTUVWXYZ0123456789+.-");
    if (scheme_end > h && *scheme_end == ':' && apr_isalpha(h[0])) {
        char *scheme = apr_pstrmemdup(p, h, (apr_size_t)(scheme_end - h));
        for (o = scheme; *o; o++)
            *o = (char)apr_tolower(*o);
        if ((strcmp(scheme, "http") && strcmp(scheme, "https"))
            || strncmp(scheme_end + 1, "//", 2) != 0)
            return 0;
        if (!(*base = href_base(p, scheme_end + 1, scheme, &rest)))
            return 0;
    }
    else if (h[0] == '/' && h[1] == '/') {
        char *scheme = apr_pstrmemdup(p, page_base,
                                      strcspn(page_base, ":"));
        if (!(*base = href_base(p, h, scheme, &rest)))
            return 0;
    }
    else {
        *base = page_base;
        if (h[0] == '/') {
            rest = h;
        }
        else if (h[0] == '?') {
            rest = apr_pstrcat(p, apr_pstrmemdup(p, page_path,
                                                 strcspn(page_path, "?#")),
                               h, NULL);
        }
        else if (h[0] == '#' || h[0] == '\0') {
            rest = page_path;
        }
        else {
            n = strcspn(page_path, "?#");
            while (n && page_path[n - 1] != '/')
                n--;
            rest = apr_pstrcat(p, apr_pstrmemdup(p, page_path, n), h, NULL);
        }
    }
    n = strcspn(rest, "#");
    t = apr_palloc(p, n + 2);
    t[0] = '/';
    memcpy(t + (rest[0] != '/'), rest, n);
    t[n + (rest[0] != '/')] = '\0';
    for (o = t; *o && *o != '?'; o++)   /* '\' is '/' in http(s) URLs */
        if (*o == '\\')
            *o = '/';
    *target = t;
    return 1;
}

int sm_head_names_other(apr_pool_t *p, const sm_head_result *res,
                        const char *site_base, const char *page_target,
                        const char *page_url,
                        const apr_array_header_t *allow)
{
    const char *base = site_base, *path = page_target, *cbase, *ctarget;
    char *cpath, *curl;

    if (!res->canonical)
        return 0;
    if (res->base_href
        && !sm_head_resolve(p, site_base, page_target, res->base_href,
                            &base, &path))
        base = site_base, path = page_target;
    if (!sm_head_resolve(p, base, path, res->canonical, &cbase, &ctarget))
        return 0;                   /* not an http(s) URL: ignored */
    if (strcmp(cbase, site_base) != 0)
        return 1;                   /* another site */
    if (sm_url_from_target(p, ctarget, allow, 0, &cpath, &curl) != SM_URL_OK)
        return 1;                   /* a URL this page cannot be */
    return strcmp(curl, page_url) != 0;
}
