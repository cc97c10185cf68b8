/* SPDX-License-Identifier: Apache-2.0 */
/* sm_fingerprint.c: the content fingerprint of a page (see
 * sm_fingerprint.h).
 *
 * Written by hand, as sm_head.c is: no library at hand tokenises HTML
 * incrementally in bounded memory (libxml2's HTML parser builds a tree).
 * The document is rewritten into a normal form (whitespace runs as one
 * space, tags as '<name attr="value">' with names lowercased, what changes
 * per request left out), and the normal form is hashed in fixed blocks, so
 * the fingerprint does not depend on how the body was split into chunks. */
#include "head/sm_fingerprint.h"
#include "util/sm_hash.h"

#include <apr_strings.h>

#include <stddef.h>
#include <string.h>

#define BLOCK 4096

typedef enum {
    S_TEXT = 0,
    S_LT,           /* after '<': a tag, or text */
    S_TAG,          /* in a tag, buffered */
    S_COMMENT,      /* in <!-- ... --> */
    S_RAW           /* in <script> or <style>: up to the end tag */
} fp_state;

struct sm_fingerprint {
    apr_uint64_t h;
    apr_size_t total;           /* body bytes read */
    int done;
    fp_state state;
    int space;                  /* blanks since the last text byte */
    int at_tag;                 /* no text since the last tag */
    /* the tag in progress (its bytes: tag, below) */
    apr_size_t tlen;
    char quote;                 /* in a quoted attribute value */
    int after_eq;               /* an '=' (and blanks) just seen */
    int dashes;                 /* S_COMMENT: '-'s just seen */
    const char *raw_end;        /* S_RAW: "</script" or "</style" */
    apr_size_t raw_len, raw_match;
    /* the normal form, hashed a block at a time (its bytes: out) */
    apr_size_t olen;
    /* the buffers last: sm_fingerprint_create clears what is above */
    char tag[SM_FP_TAG_MAX];
    unsigned char out[BLOCK];
};

static int is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f';
}

static char lower(char c)
{
    return c >= 'A' && c <= 'Z' ? (char)(c + ('a' - 'A')) : c;
}

static int is_alpha(char c)
{
    c = lower(c);
    return c >= 'a' && c <= 'z';
}

static void put(sm_fingerprint *fp, const char *s, apr_size_t n)
{
    while (n) {
        apr_size_t k = BLOCK - fp->olen;

        if (k > n)
            k = n;
        memcpy(fp->out + fp->olen, s, k);
        fp->olen += k;
        s += k;
        n -= k;
        if (fp->olen == BLOCK) {
            fp->h = sm_hash_bytes(fp->h, fp->out, BLOCK);
            fp->olen = 0;
        }
    }
}

/* Text: a run of blanks between two words is one space; blanks next to a
 * tag are none (templates indent and add blank lines at will). */
static APR_INLINE void out_byte(sm_fingerprint *fp, char c)
{
    fp->out[fp->olen++] = (unsigned char)c;
    if (fp->olen == BLOCK) {
        fp->h = sm_hash_bytes(fp->h, fp->out, BLOCK);
        fp->olen = 0;
    }
}

static APR_INLINE void put_text_byte(sm_fingerprint *fp, char c)
{
    if (is_space(c)) {
        fp->space = 1;
        return;
    }
    if (fp->space && !fp->at_tag)
        out_byte(fp, ' ');
    fp->space = 0;
    fp->at_tag = 0;
    out_byte(fp, c);
}

/* A tag is written: blanks before it are dropped. */
static void put_tag(sm_fingerprint *fp, const char *s, apr_size_t n)
{
    fp->space = 0;
    fp->at_tag = 1;
    put(fp, s, n);
}

sm_fingerprint *sm_fingerprint_create(apr_pool_t *p)
{
    sm_fingerprint *fp = apr_palloc(p, sizeof(*fp));

    /* the state, not the two buffers (written before they are read) */
    memset(fp, 0, offsetof(sm_fingerprint, tag));
    fp->h = SM_HASH_SEED;
    return fp;
}

/* ---- one buffered tag ---------------------------------------------------- */

typedef struct {
    const char *name, *value;   /* value NULL: none */
    apr_size_t nlen, vlen;
} attr;

/* The next attribute of the tag from *pos, or 0 at its end.  Names are
 * lowercased in place. */
static int next_attr(char *t, apr_size_t len, apr_size_t *pos, attr *a)
{
    apr_size_t i = *pos;

    while (i < len && (is_space(t[i]) || t[i] == '/'))
        i++;
    if (i >= len)
        return 0;
    a->name = t + i;
    while (i < len && !is_space(t[i]) && t[i] != '=' && t[i] != '/') {
        t[i] = lower(t[i]);
        i++;
    }
    a->nlen = (apr_size_t)(t + i - a->name);
    if (!a->nlen) {             /* a stray '=': skip it */
        *pos = i + 1;
        a->value = NULL;
        return 1;
    }
    while (i < len && is_space(t[i]))
        i++;
    a->value = NULL;
    a->vlen = 0;
    if (i < len && t[i] == '=') {
        i++;
        while (i < len && is_space(t[i]))
            i++;
        if (i < len && (t[i] == '"' || t[i] == '\'')) {
            char q = t[i++];
            a->value = t + i;
            while (i < len && t[i] != q)
                i++;
            a->vlen = (apr_size_t)(t + i - a->value);
            if (i < len)
                i++;
        }
        else {
            a->value = t + i;
            while (i < len && !is_space(t[i]))
                i++;
            a->vlen = (apr_size_t)(t + i - a->value);
        }
    }
    *pos = i;
    return 1;
}

static int attr_is(const attr *a, const char *name)
{
    return a->nlen == strlen(name) && memcmp(a->name, name, a->nlen) == 0;
}

static int value_is(const attr *a, const char *v)
{
    apr_size_t n = strlen(v), i;

    if (!a->value || a->vlen != n)
        return 0;
    for (i = 0; i < n; i++)
        if (lower(a->value[i]) != v[i])
            return 0;
    return 1;
}

static int ends_in_nonce(const attr *a)
{
    return a->nlen >= 5 && memcmp(a->name + a->nlen - 5, "nonce", 5) == 0;
}

/* A start tag left out whole: a hidden input, a CSRF token's meta. */
static int left_out(char *t, apr_size_t len, apr_size_t pos,
                    const char *name, apr_size_t nlen)
{
    int input = nlen == 5 && !memcmp(name, "input", 5);
    int meta = nlen == 4 && !memcmp(name, "meta", 4);
    attr a;

    if (!input && !meta)
        return 0;
    while (next_attr(t, len, &pos, &a)) {
        if (input && attr_is(&a, "type") && value_is(&a, "hidden"))
            return 1;
        if (meta && attr_is(&a, "name")
            && (value_is(&a, "csrf-token") || value_is(&a, "csrf-param")
                || value_is(&a, "_token")))
            return 1;
    }
    return 0;
}

static void tag_done(sm_fingerprint *fp)
{
    char *t = fp->tag;
    apr_size_t len = fp->tlen, pos, nlen;
    const char *name;
    int end;
    attr a;

    fp->state = S_TEXT;
    if (t[1] == '!' || t[1] == '?') {     /* <!DOCTYPE>, <?xml?> */
        put_tag(fp, t, len);
        put(fp, ">", 1);
        return;
    }
    end = t[1] == '/';
    pos = end ? 2 : 1;
    name = t + pos;
    while (pos < len && !is_space(t[pos]) && t[pos] != '/') {
        t[pos] = lower(t[pos]);
        pos++;
    }
    nlen = (apr_size_t)(t + pos - name);
    if (end) {
        put_tag(fp, "</", 2);
        put(fp, name, nlen);
        put(fp, ">", 1);
        return;
    }
    if (left_out(t, len, pos, name, nlen)) {
        put_tag(fp, "", 0);
        return;
    }
    put_tag(fp, "<", 1);
    put(fp, name, nlen);
    while (next_attr(t, len, &pos, &a)) {
        if (!a.nlen || ends_in_nonce(&a))
            continue;
        put(fp, " ", 1);
        put(fp, a.name, a.nlen);
        if (a.value) {
            put(fp, "=\"", 2);
            put(fp, a.value, a.vlen);
            put(fp, "\"", 1);
        }
    }
    put(fp, ">", 1);
    if (nlen == 6 && !memcmp(name, "script", 6))
        fp->raw_end = "</script";
    else if (nlen == 5 && !memcmp(name, "style", 5))
        fp->raw_end = "</style";
    else
        return;
    fp->raw_len = strlen(fp->raw_end);
    fp->raw_match = 0;
    fp->state = S_RAW;
}

static void tag_begin(sm_fingerprint *fp, const char *start, apr_size_t n)
{
    memcpy(fp->tag, start, n);
    fp->tlen = n;
    fp->quote = 0;
    fp->after_eq = 0;
    fp->state = S_TAG;
}

/* ---- the byte stream ------------------------------------------------------ */

static void feed_byte(sm_fingerprint *fp, char c)
{
    switch (fp->state) {
    case S_TEXT:
        if (c == '<') {
            fp->state = S_LT;
            return;
        }
        put_text_byte(fp, c);
        return;
    case S_LT:
        if (is_alpha(c) || c == '/' || c == '!' || c == '?') {
            char two[2];
            two[0] = '<';
            two[1] = c;
            tag_begin(fp, two, 2);
            return;
        }
        fp->state = S_TEXT;
        put_text_byte(fp, '<');
        feed_byte(fp, c);
        return;
    case S_RAW:
        if (lower(c) == fp->raw_end[fp->raw_match]) {
            if (++fp->raw_match == fp->raw_len)
                tag_begin(fp, fp->raw_end, fp->raw_len);
        }
        else
            fp->raw_match = lower(c) == '<' ? 1 : 0;
        return;
    case S_TAG:
    case S_COMMENT:
        return;         /* taken a run at a time: tag_run, comment_run */
    }
}

/* The hot paths, a run of bytes at a time (the byte machine above does
 * the rest): text, written straight into the block; the content of
 * <script> and <style> and comments, skipped with memchr.  Each consumes
 * what it can of data[0..len) and returns how much. */
static apr_size_t text_run(sm_fingerprint *fp, const char *d, apr_size_t len)
{
    apr_size_t i;

    for (i = 0; i < len && d[i] != '<'; i++)
        put_text_byte(fp, d[i]);
    return i;
}

/* Append d[0..n) to the tag in progress, as far as it fits. */
static void tag_append(sm_fingerprint *fp, const char *d, apr_size_t n)
{
    if (n > SM_FP_TAG_MAX - fp->tlen)
        n = SM_FP_TAG_MAX - fp->tlen;
    memcpy(fp->tag + fp->tlen, d, n);
    fp->tlen += n;
}

static apr_size_t tag_run(sm_fingerprint *fp, const char *d, apr_size_t len)
{
    apr_size_t i = 0;

    while (i < len) {
        char c = d[i];

        if (fp->quote) {                /* a quoted value: to its end */
            const char *q = memchr(d + i, fp->quote, len - i);
            apr_size_t n = q ? (apr_size_t)(q - (d + i)) + 1 : len - i;

            tag_append(fp, d + i, n);
            i += n;
            if (q)
                fp->quote = 0;
            continue;
        }
        if (c == '>') {
            tag_done(fp);
            return i + 1;
        }
        if (c == '=')
            fp->after_eq = 1;
        else if (fp->after_eq && (c == '"' || c == '\'')) {
            fp->quote = c;
            fp->after_eq = 0;
        }
        else if (!is_space(c))
            fp->after_eq = 0;
        if (fp->tlen < SM_FP_TAG_MAX)
            fp->tag[fp->tlen++] = c;
        i++;
        if (fp->tlen == 4 && !memcmp(fp->tag, "<!--", 4)) {
            fp->state = S_COMMENT;
            fp->dashes = 0;
            return i;
        }
    }
    return len;
}

static apr_size_t raw_skip(sm_fingerprint *fp, const char *d, apr_size_t len)
{
    const char *lt;

    if (fp->raw_match)
        return 0;
    lt = memchr(d, '<', len);
    return lt ? (apr_size_t)(lt - d) : len;
}

static apr_size_t comment_run(sm_fingerprint *fp, const char *d,
                              apr_size_t len)
{
    const char *gt = memchr(d, '>', len);
    apr_size_t n = gt ? (apr_size_t)(gt - d) : len, k = 0;

    /* the dashes just before the '>' (or the end), counted on from the
     * previous piece when this one has only dashes before it */
    while (k < n && k < 2 && d[n - 1 - k] == '-')
        k++;
    if (k == n)
        fp->dashes += (int)k;
    else
        fp->dashes = (int)k;
    if (!gt)
        return len;
    if (fp->dashes >= 2) {
        fp->state = S_TEXT;
        put_tag(fp, "", 0);
    }
    fp->dashes = 0;
    return n + 1;
}

int sm_fingerprint_feed(sm_fingerprint *fp, const char *data,
                        apr_size_t len)
{
    apr_size_t i = 0;

    if (fp->done)
        return 1;
    if (len > SM_FP_LIMIT - fp->total) {
        len = SM_FP_LIMIT - fp->total;
        fp->done = 1;
    }
    fp->total += len;
    while (i < len) {
        if (fp->state == S_TEXT)
            i += text_run(fp, data + i, len - i);
        else if (fp->state == S_TAG) {
            i += tag_run(fp, data + i, len - i);
            continue;
        }
        else if (fp->state == S_RAW)
            i += raw_skip(fp, data + i, len - i);
        else if (fp->state == S_COMMENT) {
            i += comment_run(fp, data + i, len - i);
            continue;
        }
        if (i < len)
            feed_byte(fp, data[i++]);
    }
    return fp->done;
}

apr_uint64_t sm_fingerprint_end(sm_fingerprint *fp)
{
    apr_uint64_t h;

    /* A tag still open at the end is hashed as far as it went. */
    if (fp->state == S_TAG)
        put(fp, fp->tag, fp->tlen);
    else if (fp->state == S_LT)
        put_text_byte(fp, '<');
    fp->state = S_TEXT;
    h = sm_hash_bytes(fp->h, fp->out, fp->olen);
    fp->olen = 0;
    fp->h = h;
    return h ? h : 1;
}

const char *sm_fingerprint_tag(apr_pool_t *p, apr_uint64_t fp)
{
    return apr_psprintf(p, "fp:%016" APR_UINT64_T_HEX_FMT, fp);
}

int sm_fingerprint_is_tag(const char *etag)
{
    return etag && etag[0] == 'f' && etag[1] == 'p' && etag[2] == ':';
}
