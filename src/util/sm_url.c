/* SPDX-License-Identifier: Apache-2.0 */
/* sm_url.c: URL normalisation (RFC 3986 section 6.2.2) and base URLs.
 *
 * The byte-level work (which bytes stay literal, which escapes are decoded)
 * is a table lookup per byte written here: APR's escape functions each
 * implement a different, fixed character set and none decodes only the
 * escapes of unreserved characters.  Everything is written into one
 * buffer allocated up front (a byte grows to at most three), and dot
 * segments are removed in place. */
#include "util/sm_url.h"

#include <apr_cstr.h>
#include <apr_lib.h>
#include <apr_strings.h>
#include <apr_uri.h>

#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>

/* Byte classes. */
#define C_UNRESERVED 1  /* ALPHA DIGIT - . _ ~ : escapes of these are decoded */
#define C_PATH       2  /* may appear literally in a path */
#define C_QUERY      4  /* may appear literally in a query */

/* 7: unreserved; 6: sub-delims, ':', '@', '/'; 4: '?'; 2: '\'' (literal in
 * a path only); 0: anything else, including '%' (handled apart) and every
 * byte >= 0x80.
 *
 * What is literal is what the crawlers' own URL rules leave literal, so
 * that the URL a crawler derives from a <loc> is byte for byte the stored
 * one: the WHATWG URL standard (browsers, Node's URL) percent-encodes '\''
 * in the query of http(s) URLs (its special-query percent-encode set) but
 * not in a path, and w3lib's safe_url_string (Scrapy) does the same.
 * Where the two differ (WHATWG leaves [ ] \ ^ ` { | } literal in a query,
 * and some of them in a path; w3lib encodes them), the encoded form is
 * kept: both leave an existing %XX escape as it is. */
static const unsigned char url_class[256] = {
    0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,  /* 00 */
    0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,  /* 10 */
    0,6,0,0,6,0,6,2,6,6,6,6,6,7,7,6,  /* 20  !"#$%&'()*+,-./ */
    7,7,7,7,7,7,7,7,7,7,6,6,0,6,0,4,  /* 30 0-9:;<=>? */
    6,7,7,7,7,7,7,7,7,7,7,7,7,7,7,7,  /* 40 @A-O */
    7,7,7,7,7,7,7,7,7,7,7,0,0,0,0,7,  /* 50 P-Z[\]^_ */
    0,7,7,7,7,7,7,7,7,7,7,7,7,7,7,7,  /* 60 `a-o */
    7,7,7,7,7,7,7,7,7,7,7,0,0,0,7,0,  /* 70 p-z{|}~DEL */
    /* 0x80-0xFF: 0 */
};

static const char hex_upper[] = "0123456789ABCDEF";

/* The value of a hex digit already checked with apr_isxdigit. */
static int hexval(int c)
{
    return c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10;
}

const char *sm_url_status_str(sm_url_status st)
{
    switch (st) {
    case SM_URL_OK:            return "ok";
    case SM_URL_BAD_ESCAPE:    return "'%' not followed by two hex digits";
    case SM_URL_NOT_PATH:      return "not a path";
    case SM_URL_QUERY_REFUSED: return "query parameter not allowed";
    case SM_URL_TOO_LONG:      return "URL too long";
    case SM_URL_CONTROL:       return "control character (%00-%1F, %7F)";
    }
    return "unknown status";
}

/* Write the canonical spelling of in[0..len) to out (room for 3 * len):
 * bytes whose class has mask stay literal, escapes are checked, written in
 * uppercase and decoded when they stand for an unreserved character, and
 * everything else is escaped.  A control character, literal or escaped
 * ("%00", "%0A", "%7F"), is refused: no sitemap, log line or header
 * consumer downstream should ever see one come out of a stored URL. */
static sm_url_status norm_bytes(const char *in, apr_size_t len, char *out,
                                apr_size_t *outlen, unsigned char mask)
{
    const unsigned char *s = (const unsigned char *)in;
    char *o = out;
    apr_size_t i;

    for (i = 0; i < len; i++) {
        unsigned int c = s[i];

        if (url_class[c] & mask) {
            *o++ = (char)c;
            continue;
        }
        if (c == '%') {
            if (len - i < 3 || !apr_isxdigit(s[i + 1])
                || !apr_isxdigit(s[i + 2]))
                return SM_URL_BAD_ESCAPE;
            c = (unsigned int)(hexval(s[i + 1]) << 4 | hexval(s[i + 2]));
            i += 2;
            if (c < 0x20 || c == 0x7f)
                return SM_URL_CONTROL;
            if (url_class[c] & C_UNRESERVED) {
                *o++ = (char)c;
                continue;
            }
        }
        else if (c == '\0') {
            return SM_URL_NOT_PATH;
        }
        else if (c < 0x20 || c == 0x7f) {
            return SM_URL_CONTROL;
        }
        *o++ = '%';
        *o++ = hex_upper[c >> 4];
        *o++ = hex_upper[c & 15];
    }
    *outlen = (apr_size_t)(o - out);
    return SM_URL_OK;
}

/* Remove dot segments (RFC 3986 5.2.4) and merge runs of '/', in place, in
 * a canonical path b[0..n) starting with '/'.  Only a literal '/' separates
 * segments ("%2F" stays inside its segment).  Returns the new length. */
static apr_size_t remove_dots(char *b, apr_size_t n)
{
    apr_size_t i = 0, w = 0;
    int trailing = 0;   /* the output must end with '/' */

    while (i < n) {
        apr_size_t s, len;

        while (i < n && b[i] == '/')
            i++;
        if (i == n) {
            trailing = 1;
            break;
        }
        s = i;
        while (i < n && b[i] != '/')
            i++;
        len = i - s;
        if (len == 1 && b[s] == '.') {
            trailing = 1;
            continue;
        }
        if (len == 2 && b[s] == '.' && b[s + 1] == '.') {
            /* Drop the last output segment; above the root stays at it. */
            while (w > 0 && b[w - 1] != '/')
                w--;
            if (w > 0)
                w--;
            trailing = 1;
            continue;
        }
        /* w < s: the output never overtakes the input. */
        b[w++] = '/';
        memmove(b + w, b + s, len);
        w += len;
        trailing = 0;
    }
    if (trailing || w == 0)
        b[w++] = '/';
    return w;
}

sm_url_status sm_url_normalize_path(apr_pool_t *p, const char *raw,
                                    apr_size_t len, char **out)
{
    sm_url_status st;
    apr_size_t n;
    char *buf;

    *out = NULL;
    if (!raw || len == 0 || raw[0] != '/')
        return SM_URL_NOT_PATH;
    buf = apr_palloc(p, 3 * len + 1);
    if ((st = norm_bytes(raw, len, buf, &n, C_PATH)) != SM_URL_OK)
        return st;
    n = remove_dots(buf, n);
    buf[n] = '\0';
    *out = buf;
    return SM_URL_OK;
}

/* Is the canonical query field name s[0..len) (escapes valid), decoded and
 * with '+' read as space, exactly want? */
static int name_is(const char *s, apr_size_t len, const char *want)
{
    apr_size_t i;

    for (i = 0; i < len; i++, want++) {
        unsigned int c = (unsigned char)s[i];

        if (c == '%') {
            c = (unsigned int)(hexval(s[i + 1]) << 4 | hexval(s[i + 2]));
            i += 2;
        }
        else if (c == '+') {
            c = ' ';
        }
        if (*want == '\0' || (unsigned char)*want != c)
            return 0;
    }
    return *want == '\0';
}

static int name_allowed(const char *field, apr_size_t len,
                        const apr_array_header_t *allow)
{
    const char *eq = memchr(field, '=', len);
    apr_size_t nlen = eq ? (apr_size_t)(eq - field) : len;
    int i;

    for (i = 0; i < allow->nelts; i++)
        if (name_is(field, nlen, APR_ARRAY_IDX(allow, i, const char *)))
            return 1;
    return 0;
}

/* Write the canonical query for raw[0..len) to out (room for 3 * len);
 * *outlen is 0 when no field remains. */
static sm_url_status norm_query(const char *raw, apr_size_t len,
                                const apr_array_header_t *allow, char *out,
                                apr_size_t *outlen)
{
    const char *f = raw, *end = raw + len;
    apr_size_t n = 0;
    int none_allowed = !allow || allow->nelts == 0;

    while (f < end) {
        const char *amp = memchr(f, '&', (apr_size_t)(end - f));
        const char *fe = amp ? amp : end;

        if (fe > f) {
            sm_url_status st;
            apr_size_t fl;

            if (none_allowed)
                return SM_URL_QUERY_REFUSED;
            if (n)
                out[n++] = '&';
            st = norm_bytes(f, (apr_size_t)(fe - f), out + n, &fl, C_QUERY);
            if (st != SM_URL_OK)
                return st;
            /* Names are compared decoded, and the canonical spelling
             * decodes to the same bytes as the raw one. */
            if (!name_allowed(out + n, fl, allow))
                return SM_URL_QUERY_REFUSED;
            n += fl;
        }
        if (!amp)
            break;
        f = amp + 1;
    }
    *outlen = n;
    return SM_URL_OK;
}

sm_url_status sm_url_normalize_query(apr_pool_t *p, const char *raw,
                                     const apr_array_header_t *allow,
                                     char **out)
{
    apr_size_t len = raw ? strlen(raw) : 0, n;
    sm_url_status st;
    char *buf;

    *out = NULL;
    if (len == 0)
        return SM_URL_OK;
    buf = apr_palloc(p, 3 * len + 1);
    if ((st = norm_query(raw, len, allow, buf, &n)) != SM_URL_OK)
        return st;
    if (n) {
        buf[n] = '\0';
        *out = buf;
    }
    return SM_URL_OK;
}

sm_url_status sm_url_from_target(apr_pool_t *p, const char *target,
                                 const apr_array_header_t *allow,
                                 apr_size_t base_len,
                                 char **path, char **url)
{
    const char *ps, *pe, *qs = NULL, *qe = NULL;
    apr_size_t plen, qlen = 0, n, qn = 0;
    sm_url_status st;
    char *buf;

    *path = *url = NULL;
    if (!target)
        return SM_URL_NOT_PATH;
    if (target[0] == '/') {
        ps = target;
    }
    else {
        /* absolute-form: skip the scheme and the authority */
        if (apr_cstr_casecmpn(target, "http://", 7) == 0)
            ps = target + 7;
        else if (apr_cstr_casecmpn(target, "https://", 8) == 0)
            ps = target + 8;
        else
            return SM_URL_NOT_PATH;
        ps += strcspn(ps, "/?#");
    }
    pe = ps + strcspn(ps, "?#");
    if (*pe == '?') {
        qs = pe + 1;
        qe = qs + strcspn(qs, "#");
        qlen = (apr_size_t)(qe - qs);
    }
    plen = (apr_size_t)(pe - ps);
    /* "http://host" or "http://host?q"; also keeps the room computed
     * below right, as an empty path still becomes "/". */
    if (plen == 0) {
        ps = "/";
        plen = 1;
    }

    /* Room for the path, '?', the query and the NUL; the query is written
     * straight after the path once its dot segments are gone. */
    buf = apr_palloc(p, 3 * plen + 3 * qlen + 2);
    if ((st = norm_bytes(ps, plen, buf, &n, C_PATH)) != SM_URL_OK)
        return st;
    n = remove_dots(buf, n);
    if (qlen) {
        st = norm_query(qs, qlen, allow, buf + n + 1, &qn);
        if (st != SM_URL_OK)
            return st;
    }
    if (base_len + n + (qn ? qn + 1 : 0) > SM_URL_MAX)
        return SM_URL_TOO_LONG;
    if (qn) {
        buf[n] = '?';
        buf[n + 1 + qn] = '\0';
        *path = apr_pstrmemdup(p, buf, n);
    }
    else {
        buf[n] = '\0';
        *path = buf;
    }
    *url = buf;
    return SM_URL_OK;
}

/* The stored form is the normaliser's output: check each byte against the
 * same table, so a row can never pass that sm_url_from_target would not
 * have written (byte for byte; what it says about dot segments and runs of
 * '/' is not checked again: those cannot make the XML invalid). */
int sm_url_is_stored_form(const char *url)
{
    const unsigned char *s = (const unsigned char *)url;
    unsigned char mask = C_PATH;

    if (!s || s[0] != '/')
        return 0;
    for (; *s; s++) {
        unsigned int c = *s;

        if (c == '?' && mask == C_PATH) {
            mask = C_QUERY;
            continue;
        }
        if (url_class[c] & mask)
            continue;
        if (c != '%')
            return 0;
        /* An escape: uppercase hex, and never of an unreserved byte nor
         * of a control character. */
        if (!apr_isxdigit(s[1]) || !apr_isxdigit(s[2])
            || apr_islower(s[1]) || apr_islower(s[2])
            || url_class[hexval(s[1]) << 4 | hexval(s[2])] & C_UNRESERVED
            || (hexval(s[1]) << 4 | hexval(s[2])) < 0x20
            || (hexval(s[1]) << 4 | hexval(s[2])) == 0x7f)
            return 0;
        s += 2;
    }
    return 1;
}

/* ---- base URLs ----------------------------------------------------------- */

#define BASE_FORM "must be scheme://host[:port] with scheme http or https"

/* The host of a base URL in its normal form (lowercase, an IPv6 literal
 * canonical, no final dot), or NULL with *err. */
static char *base_host(apr_pool_t *p, const apr_uri_t *u, const char **err)
{
    char *host, *h;
    apr_size_t n;

    if (u->hostinfo[0] == '[') {
        /* An IPv6 literal; written back in its canonical (RFC 5952) form. */
        unsigned char a[16];
        char txt[INET6_ADDRSTRLEN];

        if (inet_pton(AF_INET6, u->hostname, a) != 1
            || !inet_ntop(AF_INET6, a, txt, sizeof(txt))) {
            *err = "the IPv6 address in [...] is not valid";
            return NULL;
        }
        return apr_pstrcat(p, "[", txt, "]", NULL);
    }
    /* ASCII only: no locale-dependent ctype here. */
    host = apr_pstrdup(p, u->hostname);
    for (h = host; *h; h++) {
        if (*h >= 'A' && *h <= 'Z')
            *h = (char)(*h - 'A' + 'a');
        else if ((unsigned char)*h >= 0x80) {
            *err = "the host name must be ASCII: write an "
                   "internationalised name in its A-label (xn--) "
                   "form, as in DNS";
            return NULL;
        }
        else if (!(url_class[(unsigned char)*h] & C_UNRESERVED)
                 || *h == '~') {
            *err = "the host name may contain only letters, digits, "
                   "'-', '.' and '_'";
            return NULL;
        }
    }
    /* The fully qualified form's final dot names the same host: the
     * normal form has none (as SitemapSiteFromHost's names). */
    n = strlen(host);
    if (n > 1 && host[n - 1] == '.')
        host[--n] = '\0';
    if (host[0] == '.' || host[n - 1] == '.' || strstr(host, "..")) {
        *err = "the host name has an empty label (a leading dot, or "
               "two dots in a row)";
        return NULL;
    }
    return host;
}

/* The port of a base URL: 0 for none or the scheme's own, -1 (with *err)
 * for one that is no port.  apr_uri_parse wraps big numbers into
 * apr_port_t: checked here from the text. */
static long base_port(const apr_uri_t *u, int https, const char **err)
{
    unsigned long port = 0;
    const char *c;

    if (!u->port_str)
        return 0;
    for (c = u->port_str; *c; c++)
        if (*c < '0' || *c > '9'
            || (port = port * 10 + (unsigned long)(*c - '0')) > 65535)
            break;
    if (!*u->port_str || *c || port == 0) {
        *err = "the port must be a number from 1 to 65535";
        return -1;
    }
    return port == (https ? 443UL : 80UL) ? 0 : (long)port;
}

const char *sm_url_parse_base(apr_pool_t *p, const char *in,
                              const char **err)
{
    apr_uri_t u;
    const char *scheme;
    char *host;
    long port;
    int https;

    if (!in || !*in || apr_uri_parse(p, in, &u) != APR_SUCCESS
        || !u.scheme || !u.hostinfo) {
        *err = BASE_FORM;
        return NULL;
    }
    if (!apr_cstr_casecmp(u.scheme, "http"))
        https = 0;
    else if (!apr_cstr_casecmp(u.scheme, "https"))
        https = 1;
    else {
        *err = BASE_FORM;
        return NULL;
    }
    scheme = https ? "https" : "http";
    if (u.fragment) {
        *err = "must not have a fragment (#...)";
        return NULL;
    }
    if (u.query) {
        *err = "must not have a query (?...)";
        return NULL;
    }
    if (u.user || u.password) {
        *err = "must not have a user name or password (user@host)";
        return NULL;
    }
    if (u.path && strcmp(u.path, "/") != 0) {
        *err = BASE_FORM "; no path";
        return NULL;
    }
    if (!u.hostname || !*u.hostname) {
        *err = "the host name is missing";
        return NULL;
    }
    if (!(host = base_host(p, &u, err)))
        return NULL;
    if ((port = base_port(&u, https, err)) < 0)
        return NULL;
    if (port)
        return apr_psprintf(p, "%s://%s:%ld", scheme, host, port);
    return apr_pstrcat(p, scheme, "://", host, NULL);
}

/* Every parameter name of the query in target (up to '#'), decoded as
 * the core compares them ('+' is a space, %XX a byte). */
apr_array_header_t *sm_url_query_names(apr_pool_t *p, const char *target)
{
    apr_array_header_t *names = apr_array_make(p, 4, sizeof(char *));
    const char *q = strchr(target, '?'), *end;

    if (!q)
        return names;
    q++;
    end = q + strcspn(q, "#");
    while (q < end) {
        apr_size_t flen = strcspn(q, "&#");
        apr_size_t nlen = strcspn(q, "=&#");
        char *name = apr_palloc(p, nlen + 1), *w = name;
        apr_size_t i;

        for (i = 0; i < nlen; i++) {
            if (q[i] == '+')
                *w++ = ' ';
            else if (q[i] == '%' && i + 2 < nlen && apr_isxdigit(q[i + 1])
                     && apr_isxdigit(q[i + 2])) {
                char hex[3] = { q[i + 1], q[i + 2], 0 };
                *w++ = (char)strtol(hex, NULL, 16);
                i += 2;
            }
            else
                *w++ = q[i];
        }
        *w = '\0';
        /* An empty name ("=x") is a name the URL holds too. */
        if (flen)
            APR_ARRAY_PUSH(names, const char *) = name;
        q += flen;
        if (*q == '&')
            q++;
        else
            break;
    }
    return names;
}
