/* SPDX-License-Identifier: Apache-2.0 */
/* sm_head_news.c: a head's description and publication time (see
 * sm_head_news.h). */
#include "head/sm_head_news.h"

#include <string.h>

#include <apr_lib.h>
#include <apr_strings.h>

#include "util/sm_date.h"
#include "util/sm_html.h"

static int is_blank(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f';
}

/* The high bit of each byte of x that is zero, exactly (no borrow from a
 * lower byte). */
#define LOW7 0x7f7f7f7f7f7f7f7fULL
#define HIGH 0x8080808080808080ULL
#define BYTES(c) (0x0101010101010101ULL * (c))
#define ZERO_BYTES(x) (~((((x) & LOW7) + LOW7) | (x) | LOW7))

/* Is v[0..len) what sm_head_text makes of it already: printable ASCII
 * without '&' (unless amp), words single spaces apart, no space at either
 * end?  (Most titles and descriptions are.)  Eight bytes at a time. */
static APR_INLINE int plain_text(const char *v, apr_size_t len, int amp)
{
    const apr_uint64_t no_amp = amp ? 0 : ~0ULL;
    apr_uint64_t space_before = 1;      /* a leading space is not plain */
    apr_size_t i;

    if (len && v[len - 1] == ' ')
        return 0;
    for (i = 0; i + 8 <= len; i += 8) {
        apr_uint64_t w, sp;
        memcpy(&w, v + i, 8);
#if APR_IS_BIGENDIAN
        w = __builtin_bswap64(w);
#endif
        sp = ZERO_BYTES(w ^ BYTES(' '));
        if (((~((w & LOW7) + BYTES(0x60)) | w) & HIGH)  /* < 0x20, >= 0x80 */
            | ZERO_BYTES(w ^ BYTES(0x7f))
            | (ZERO_BYTES(w ^ BYTES('&')) & no_amp)
            | (sp & ((sp << 8) | (space_before << 7))))
            return 0;
        space_before = sp >> 63;
    }
    for (; i < len; i++) {
        unsigned char c = (unsigned char)v[i];
        if (c < 0x20 || c >= 0x7f || (c == '&' && !amp)
            || (c == ' ' && (i == 0 || v[i - 1] == ' ')))
            return 0;
    }
    return 1;
}

/* The end of t (decoded from plain text but for its references: most CMS
 * titles, "&#8211;" in them) when it needs no cleaning, else NULL.  A
 * reference gives valid UTF-8 (sm_html_decode: U+FFFD for what is not a
 * character), which sm_utf8_clean keeps as it is: only the ASCII it gives
 * (a control byte, a blank, a space at an end or beside another) needs
 * the general path. */
static char *clean_already(char *t)
{
    char *i;

    if (*t == ' ')
        return NULL;
    for (i = t; *i; i++) {
        unsigned char c = (unsigned char)*i;
        if ((c < 0x20 || c == 0x7f) || (c == ' ' && i[1] == ' '))
            return NULL;
    }
    return i > t && i[-1] == ' ' ? NULL : i;
}

/* t's blanks collapsed (none at either end, single spaces), in place:
 * returns its new end. */
static char *collapse(char *t)
{
    char *i, *o;
    int space = 0;

    for (i = o = t; *i; i++) {
        if (is_blank(*i)) {
            space = 1;
            continue;
        }
        if (space && o > t)
            *o++ = ' ';
        space = 0;
        *o++ = *i;
    }
    return o;
}

/* Valid UTF-8 first, so that no dropped control byte leaves two spaces
 * side by side (found by fuzz_head). */
char *sm_head_text(apr_pool_t *p, const char *v, apr_size_t len,
                   int max_chars)
{
    char *t, *i, *o;
    int chars = 0;

    if (plain_text(v, len, 0)) {        /* a character a byte */
        if (max_chars && len > (apr_size_t)max_chars) {
            len = (apr_size_t)max_chars;
            if (v[len - 1] == ' ')
                len--;
        }
        return apr_pstrmemdup(p, v, len);
    }
    if (!plain_text(v, len, 1)
        || !(o = clean_already(t = sm_html_decode(p, v, len))))
        o = collapse(t = sm_utf8_clean(p, sm_html_decode(p, v, len)));
    if (max_chars)                      /* a title is not cut: no cost */
        for (i = t; i < o; i++)         /* characters start at bytes */
            if (((unsigned char)*i & 0xc0) != 0x80    /* not 10xxxxxx */
                && chars++ == max_chars) {
                o = i > t && i[-1] == ' ' ? i - 1 : i;
                break;
            }
    *o = '\0';
    return t;
}

/* ---- ISO 8601 ------------------------------------------------------------- */

/* n digits at *s (within end): their value, -1 when they are not. */
static int digits(const char **s, const char *end, int n)
{
    int v = 0;

    if (end - *s < n)
        return -1;
    while (n--) {
        if (!apr_isdigit(**s))
            return -1;
        v = v * 10 + (*(*s)++ - '0');
    }
    return v;
}

static int days_in_month(int y, int m)
{
    static const int days[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};

    if (m == 2 && ((y % 4 == 0 && y % 100 != 0) || y % 400 == 0))
        return 29;
    return days[m - 1];
}

/* The offset at s ("Z", "+hh:mm", "+hhmm", "+hh", or nothing) in
 * seconds east of UTC; 1 on success with s at end. */
static int offset_at(const char *s, const char *end, long *off)
{
    int sign, hh, mm = 0;

    *off = 0;
    if (s == end)
        return 1;
    if ((*s == 'Z' || *s == 'z') && s + 1 == end)
        return 1;
    if (*s != '+' && *s != '-')
        return 0;
    sign = *s++ == '-' ? -1 : 1;
    if ((hh = digits(&s, end, 2)) < 0 || hh > 23)
        return 0;
    if (s < end && *s == ':')
        s++;
    if (s < end && ((mm = digits(&s, end, 2)) < 0 || mm > 59))
        return 0;
    *off = sign * (hh * 3600L + mm * 60L);
    return s == end;
}

apr_time_t sm_iso8601_time(const char *s, apr_size_t len)
{
    const char *end = s + len;
    int y, mo, d, h = 0, mi = 0, sec = 0;
    long off = 0;
    apr_int64_t t;

    while (s < end && is_blank(*s))
        s++;
    while (end > s && is_blank(end[-1]))
        end--;
    if ((y = digits(&s, end, 4)) < 1970 || s == end || *s++ != '-'
        || (mo = digits(&s, end, 2)) < 1 || mo > 12 || s == end
        || *s++ != '-' || (d = digits(&s, end, 2)) < 1
        || d > days_in_month(y, mo))
        return 0;
    if (s < end) {
        if (*s != 'T' && *s != 't')
            return 0;
        s++;
        if ((h = digits(&s, end, 2)) < 0 || h > 23 || s == end || *s++ != ':'
            || (mi = digits(&s, end, 2)) < 0 || mi > 59)
            return 0;
        if (s < end && *s == ':') {
            s++;
            if ((sec = digits(&s, end, 2)) < 0 || sec > 60)
                return 0;
            if (s < end && (*s == '.' || *s == ',')) {
                const char *f = ++s;
                while (s < end && apr_isdigit(*s))
                    s++;
                if (s == f)
                    return 0;
            }
        }
        if (!offset_at(s, end, &off))
            return 0;
    }
    t = sm_days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + sec
        - off;
    return t > 0 ? apr_time_from_sec(t) : 0;
}

int sm_head_is_jsonld(const char *v, apr_size_t len)
{
    static const char want[] = "application/ld+json";

    while (len && is_blank(*v)) {
        v++;
        len--;
    }
    while (len && is_blank(v[len - 1]))
        len--;
    return len == sizeof(want) - 1 && strncasecmp(v, want, len) == 0;
}

/* ---- JSON-LD -------------------------------------------------------------- */

#define JSON_DEPTH 32
#define JSON_STR   64

enum { KEY_OTHER = 0, KEY_TYPE, KEY_DATE };

typedef struct {
    char is_array;
    char expect_key;    /* an object's next string is a name */
    char key;           /* the name of the value in progress (KEY_*);
                           an array's: its own name's */
    char article;
    apr_time_t date;
} json_frame;

/* Is t[0..n) (no NUL in it) one of the article types, after any prefix
 * up to its last '/' or ':'? */
static int is_article_type(const char *t, apr_size_t n)
{
    const char *i = t + n;

    while (i > t && i[-1] != '/' && i[-1] != ':')
        i--;
    n -= (apr_size_t)(i - t);
    return (n == 11 && memcmp(i, "NewsArticle", 11) == 0)
           || (n == 7 && memcmp(i, "Article", 7) == 0)
           || (n == 11 && memcmp(i, "BlogPosting", 11) == 0);
}

/* The string starting after the '"' at s: up to JSON_STR - 1 bytes of it
 * into buf (escapes but \" and \\ kept as written; a longer one is cut),
 * the position after its closing '"' returned, end when there is none. */
static const char *json_string(const char *s, const char *end, char *buf)
{
    apr_size_t n = 0;

    while (s < end && *s != '"') {
        char c = *s++;
        if (c == '\\' && s < end)
            c = *s++;
        if (n < JSON_STR - 1)
            buf[n++] = c;
    }
    buf[n] = '\0';
    return s < end ? s + 1 : end;
}

/* A string value v[0..n) of the innermost frame f (depth i); as a C
 * string: what a NUL in it ends. */
static void json_value(json_frame *st, int i, const char *v, apr_size_t n)
{
    json_frame *f = &st[i];
    int key = f->key;

    if (key == KEY_OTHER)
        return;
    if (f->is_array) {              /* its object is the frame below */
        if (i == 0 || st[i - 1].is_array)
            return;
        f = &st[i - 1];
    }
    n = strnlen(v, n);
    if (key == KEY_TYPE && is_article_type(v, n))
        f->article = 1;
    else if (key == KEY_DATE && !st[i].is_array)
        f->date = sm_iso8601_time(v, n);
}

/* Is the string v[0..n) the name word (as a C string: up to a NUL)? */
#define JSON_IS(v, n, word) \
    ((n) >= sizeof(word) - 1 && memcmp(v, word, sizeof(word) - 1) == 0 \
     && ((n) == sizeof(word) - 1 || (v)[sizeof(word) - 1] == '\0'))

/* The string starting after the '"' at s: *v and *n its bytes, in place
 * when it holds no escape and is shorter than JSON_STR (most are: found
 * with memchr), else as json_string copies them into buf.  Returns the
 * position after its closing '"' (end when there is none). */
static const char *json_token(const char *s, const char *end, char *buf,
                              const char **v, apr_size_t *n)
{
    const char *q = memchr(s, '"', (apr_size_t)(end - s));

    if (q && q - s < JSON_STR && !memchr(s, '\\', (apr_size_t)(q - s))) {
        *v = s;
        *n = (apr_size_t)(q - s);
        return q + 1;
    }
    s = json_string(s, end, buf);
    *v = buf;
    *n = strlen(buf);
    return s;
}

apr_time_t sm_jsonld_published(const char *s, apr_size_t len)
{
    const char *end = s + len;
    json_frame st[JSON_DEPTH];
    char buf[JSON_STR];
    const char *v;
    apr_size_t n;
    int top = -1;

    while (s < end) {
        char c = *s++;
        json_frame *f = top >= 0 ? &st[top] : NULL;
        switch (c) {
        case '{':
        case '[':
            if (top == JSON_DEPTH - 1)
                return 0;
            st[++top].is_array = c == '[';
            st[top].expect_key = c == '{';
            st[top].key = c == '[' && f ? f->key : KEY_OTHER;
            st[top].article = 0;
            st[top].date = 0;
            break;
        case '}':
        case ']':
            if (!f)
                return 0;
            if (!f->is_array && f->article && f->date)
                return f->date;
            top--;
            break;
        case ',':
            if (f && !f->is_array) {
                f->expect_key = 1;
                f->key = KEY_OTHER;
            }
            break;
        case ':':
            if (f && !f->is_array)
                f->expect_key = 0;
            break;
        case '"':
            s = json_token(s, end, buf, &v, &n);
            if (!f)
                break;
            if (!f->is_array && f->expect_key)
                f->key = JSON_IS(v, n, "@type") ? KEY_TYPE
                         : JSON_IS(v, n, "datePublished") ? KEY_DATE
                         : KEY_OTHER;
            else
                json_value(st, top, v, n);
            break;
        default:                    /* blanks, numbers, literals */
            break;
        }
    }
    return 0;
}
