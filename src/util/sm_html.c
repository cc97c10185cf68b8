/* SPDX-License-Identifier: Apache-2.0 */
/* sm_html.c: HTML character references (see sm_html.h).  Written by
 * hand: APR's apr_unescape_entity reads a few names and decimal
 * references as single bytes (no hexadecimal ones, no UTF-8, and it
 * deletes what it cannot map), which is not how browsers read a URL in an
 * attribute. */
#include "util/sm_html.h"

#include <string.h>

#include <apr_lib.h>

#define IS_SPACE(c) ((c) == ' ' || (c) == '\t' || (c) == '\n' \
                     || (c) == '\r' || (c) == '\f')

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

char *sm_html_decode(apr_pool_t *p, const char *s, apr_size_t len)
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

/* The length of the valid UTF-8 sequence at s (RFC 3629: no overlongs,
 * surrogates or code points past U+10FFFF), 0 if there is none.  By hand:
 * APR's apr_conv_utf8_to_ucs2 converts, it does not say where a sequence
 * ends, and the core has no other UTF-8 library. */
static apr_size_t utf8_len(const unsigned char *s)
{
    unsigned char c = s[0];

    if (c < 0x80)
        return 1;
    if (c >= 0xc2 && c <= 0xdf)
        return (s[1] & 0xc0) == 0x80 ? 2 : 0;
    if (c >= 0xe0 && c <= 0xef) {
        if ((s[1] & 0xc0) != 0x80 || (s[2] & 0xc0) != 0x80
            || (c == 0xe0 && s[1] < 0xa0) || (c == 0xed && s[1] > 0x9f))
            return 0;
        return 3;
    }
    if (c >= 0xf0 && c <= 0xf4) {
        if ((s[1] & 0xc0) != 0x80 || (s[2] & 0xc0) != 0x80
            || (s[3] & 0xc0) != 0x80 || (c == 0xf0 && s[1] < 0x90)
            || (c == 0xf4 && s[1] > 0x8f))
            return 0;
        return 4;
    }
    return 0;
}

char *sm_utf8_clean(apr_pool_t *p, const char *s)
{
    const unsigned char *i = (const unsigned char *)s;
    char *out = apr_palloc(p, 3 * strlen(s) + 1);
    unsigned char *o = (unsigned char *)out;

    while (*i) {
        apr_size_t n;
        if (*i >= 0x20 && *i < 0x7f) {     /* printable ASCII: as it is */
            *o++ = *i++;
            continue;
        }
        n = utf8_len(i);
        if (n == 0) {
            while (*i && utf8_len(i) == 0)
                i++;
            *o++ = 0xef;                /* U+FFFD */
            *o++ = 0xbf;
            *o++ = 0xbd;
            continue;
        }
        if (n == 1 && ((*i < 0x20 && !strchr("\t\n\f\r", *i))
                       || *i == 0x7f)) {
            i++;
            continue;
        }
        memcpy(o, i, n);
        o += n;
        i += n;
    }
    *o = '\0';
    return out;
}

/* Formatting characters a URL could use to hide or reorder what it shows
 * (C1 controls, U+061C, the zero-width space, joiners and bidi marks
 * U+200B-U+200F, line and paragraph separators and bidi embeddings and
 * overrides U+2028-U+202E, isolates U+2066-U+2069, the BOM), as UTF-8 of
 * n bytes: they stay escaped, as browsers keep them in their address
 * bar. */
static int hidden(const unsigned char *b, apr_size_t n)
{
    if (n == 2)
        return (b[0] == 0xc2 && b[1] < 0xa0)
               || (b[0] == 0xd8 && b[1] == 0x9c);
    return n == 3
           && ((b[0] == 0xe2 && b[1] == 0x80
                && ((b[2] >= 0x8b && b[2] <= 0x8f)
                    || (b[2] >= 0xa8 && b[2] <= 0xae)))
               || (b[0] == 0xe2 && b[1] == 0x81 && b[2] >= 0xa6
                   && b[2] <= 0xa9)
               || (b[0] == 0xef && b[1] == 0xbb && b[2] == 0xbf));
}

static unsigned char hex_pair(const char *s)
{
    int hi = s[0] <= '9' ? s[0] - '0' : (s[0] | 0x20) - 'a' + 10;
    int lo = s[1] <= '9' ? s[1] - '0' : (s[1] | 0x20) - 'a' + 10;
    return (unsigned char)(hi << 4 | lo);
}

/* By hand: APR's apr_unescape_url decodes every escape (or refuses the
 * string), it cannot keep those of invalid UTF-8 or of ASCII. */
char *sm_url_shown(apr_pool_t *p, const char *url)
{
    char *out = apr_palloc(p, strlen(url) + 1), *o = out;

    while (*url) {
        unsigned char b[4] = { 0, 0, 0, 0 };
        apr_size_t k = 0, n;

        /* the bytes of up to four escapes in a row */
        while (k < 4 && url[3 * k] == '%' && apr_isxdigit(url[3 * k + 1])
               && apr_isxdigit(url[3 * k + 2])) {
            b[k] = hex_pair(url + 3 * k + 1);
            k++;
        }
        n = k >= 2 && b[0] >= 0x80 ? utf8_len(b) : 0;
        if (n >= 2 && n <= k && !hidden(b, n)) {
            memcpy(o, b, n);
            o += n;
            url += 3 * n;
            continue;
        }
        *o++ = *url++;
    }
    *o = '\0';
    return out;
}
