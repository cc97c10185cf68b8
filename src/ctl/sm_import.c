/* SPDX-License-Identifier: Apache-2.0 */
/* sm_import.c: see sm_import.h. */
#include "ctl/sm_import.h"
#include "util/sm_date.h"

#include <apr_hash.h>
#include <apr_strings.h>

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

/* ---- timestamps ----------------------------------------------------------- */

static int digits(const char *s, int n, int *out)
{
    int v = 0;
    for (; n; n--, s++) {
        if (*s < '0' || *s > '9')
            return 0;
        v = v * 10 + (*s - '0');
    }
    *out = v;
    return 1;
}

/* "10/Oct/2000:13:55:36 -0700" or epoch digits; 0 if neither. */
static apr_time_t parse_time(const char *s, apr_size_t len)
{
    int d, mon, y, hh, mm, ss, zh, zm;
    apr_int64_t sec;
    apr_size_t i;

    if (len && s[0] >= '0' && s[0] <= '9' && len <= 17) {
        apr_int64_t v = 0;
        for (i = 0; i < len; i++) {
            if (s[i] < '0' || s[i] > '9')
                goto clf;
            v = v * 10 + (s[i] - '0');
        }
        if (len <= 11)              /* %{%s}t, %{sec}t */
            return apr_time_from_sec(v);
        if (len <= 14)              /* %{msec}t */
            return (apr_time_t)v * 1000;
        return (apr_time_t)v;       /* %{usec}t */
    }
clf:
    if (len != 26 || s[2] != '/' || s[6] != '/' || s[11] != ':'
        || s[14] != ':' || s[17] != ':' || s[20] != ' '
        || (s[21] != '+' && s[21] != '-'))
        return 0;
    if (!digits(s, 2, &d) || !(mon = sm_month_of(s + 3))
        || !digits(s + 7, 4, &y) || !digits(s + 12, 2, &hh)
        || !digits(s + 15, 2, &mm) || !digits(s + 18, 2, &ss)
        || !digits(s + 22, 2, &zh) || !digits(s + 24, 2, &zm)
        || d < 1 || d > 31 || hh > 23 || mm > 59 || ss > 60 || zh > 14
        || zm > 59)
        return 0;
    sec = sm_days_from_civil(y, mon, d) * 86400 + hh * 3600 + mm * 60 + ss;
    sec -= (s[21] == '-' ? -1 : 1) * (zh * 3600 + zm * 60);
    if (sec <= 0)
        return 0;
    return apr_time_from_sec(sec);
}

/* ---- one line ---------------------------------------------------------- */

static int hexval(char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* Undo ap_escape_logitem in place over s[0..len); returns the new end. */
static char *unescape(char *s, char *end)
{
    char *w = s;

    for (; s < end; s++) {
        if (*s != '\\' || s + 1 >= end) {
            *w++ = *s;
            continue;
        }
        switch (s[1]) {
        case '"':  *w++ = '"';  s++; break;
        case '\\': *w++ = '\\'; s++; break;
        case 'n':  *w++ = '\n'; s++; break;
        case 'r':  *w++ = '\r'; s++; break;
        case 't':  *w++ = '\t'; s++; break;
        case 'b':  *w++ = '\b'; s++; break;
        case 'v':  *w++ = '\v'; s++; break;
        case 'f':  *w++ = '\f'; s++; break;
        case 'x':
            if (s + 3 < end && hexval(s[2]) >= 0 && hexval(s[3]) >= 0) {
                *w++ = (char)(hexval(s[2]) << 4 | hexval(s[3]));
                s += 3;
                break;
            }
            /* fall through */
        default:
            *w++ = *s;
        }
    }
    return w;
}

const char *sm_log_parse_line(char *line, apr_size_t len, sm_log_entry *out,
                              sm_log_time_cache *tc)
{
    char *end = line + len, *p, *t, *te, *rq, *re, *sp, *u;
    apr_time_t when;

    memset(out, 0, sizeof(*out));
    if (len && end[-1] == '\r')
        end--;
    /* %t: the first " [" (host, ident and user never hold one). */
    for (p = line; p + 1 < end && !(p[0] == ' ' && p[1] == '['); p++)
        ;
    if (p + 1 >= end || p == line)
        return "no [time]";
    t = p + 2;
    if (!(te = memchr(t, ']', (apr_size_t)(end - t))))
        return "no [time]";
    /* A fresh cache holds no text: never a match (an empty "[]" is no
     * time). */
    if (tc && tc->len && tc->len == (apr_size_t)(te - t)
        && memcmp(tc->text, t, tc->len) == 0) {
        when = tc->time;
    }
    else {
        if (!(when = parse_time(t, (apr_size_t)(te - t))))
            return "bad time";
        if (!sm_time_plausible(when, tc && tc->now ? tc->now
                                                   : apr_time_now()))
            return "implausible time (before 1990 or more than a day "
                   "ahead)";
        if (tc && (apr_size_t)(te - t) < sizeof(tc->text)) {
            tc->len = (apr_size_t)(te - t);
            memcpy(tc->text, t, tc->len);
            tc->time = when;
        }
    }
    out->time = when;

    /* %u: the word before " [". */
    for (u = p; u > line && u[-1] != ' '; u--)
        ;
    if (u == line)
        return "no user field";

    /* "%r": up to the first '"' not escaped by a backslash. */
    if (te + 2 >= end || te[1] != ' ' || te[2] != '"')
        return "no \"request\"";
    rq = te + 3;
    for (re = rq; re < end && *re != '"'; re++)
        if (*re == '\\' && re + 1 < end)
            re++;
    if (re >= end)
        return "no \"request\"";

    /* %>s: three digits, then a space or the end. */
    if (re + 5 > end || re[1] != ' ' || !digits(re + 2, 3, &out->status)
        || (re + 5 < end && re[5] != ' ') || out->status < 100)
        return "no status";

    /* The line is sound: from here on it is changed in place (a
     * malformed line is left as it was, for the report). */
    if (!(p - u == 1 && *u == '-')) {
        *p = '\0';
        out->user = u;
    }
    /* METHOD SP target [SP HTTP/x.y] */
    end = unescape(rq, re);
    *end = '\0';
    if (!(sp = memchr(rq, ' ', (apr_size_t)(end - rq))) || sp == rq)
        return NULL;                /* "-" or not a request line */
    *sp = '\0';
    out->method = rq;
    out->target = sp + 1;
    for (p = end; p > sp + 1 && p[-1] != ' '; p--)
        ;
    if (p > sp + 1 && end - p >= 5 && memcmp(p, "HTTP/", 5) == 0)
        p[-1] = '\0';
    if (!*out->target)
        out->method = out->target = NULL;
    return NULL;
}

/* ---- what a log cannot tell: is it a page? --------------------------------- */

static const char *const not_pages[] = {
    /* styles, scripts, data */
    "css", "js", "mjs", "map", "json", "xml", "txt", "csv", "rss", "atom",
    "wasm", "webmanifest",
    /* images */
    "png", "jpg", "jpeg", "gif", "webp", "avif", "svg", "svgz", "ico",
    "bmp", "tif", "tiff", "heic",
    /* fonts */
    "woff", "woff2", "ttf", "otf", "eot",
    /* audio, video */
    "mp3", "mp4", "m4a", "m4v", "ogg", "oga", "ogv", "opus", "wav", "flac",
    "webm", "avi", "mov", "mkv", "mpg", "mpeg", "swf", "flv",
    /* documents, archives, binaries */
    "pdf", "doc", "docx", "xls", "xlsx", "ppt", "pptx", "odt", "ods", "odp",
    "rtf", "epub", "zip", "gz", "tgz", "bz2", "xz", "zst", "7z", "rar",
    "tar", "iso", "dmg", "exe", "msi", "deb", "rpm", "apk", "bin", "jar",
    NULL
};

int sm_import_not_a_page(const char *target)
{
    const char *e = target + strcspn(target, "?#"), *dot = NULL, *s;
    char ext[16];
    apr_size_t n, i;

    for (s = e; s > target && s[-1] != '/'; s--)
        if (s[-1] == '.' && !dot)
            dot = s;
    if (!dot || (n = (apr_size_t)(e - dot)) == 0 || n >= sizeof(ext))
        return 0;
    for (i = 0; i < n; i++)
        ext[i] = (char)((dot[i] >= 'A' && dot[i] <= 'Z') ? dot[i] + 32
                                                          : dot[i]);
    ext[n] = '\0';
    for (i = 0; not_pages[i]; i++)
        if (strcmp(ext, not_pages[i]) == 0)
            return 1;
    return 0;
}

/* ---- aggregation ------------------------------------------------------------ */

typedef struct {
    const char *url;
    apr_time_t recorded;        /* newest recording line, 0: none */
    apr_time_t forgotten;       /* newest forgetting line, 0: none */
} url_entry;

struct sm_import {
    apr_pool_t *pool;           /* entries and URLs */
    apr_pool_t *scratch;        /* one line's allocations */
    sm_rules rules;
    const char *page_type;      /* the content type of a page line */
    apr_size_t base_len;
    int guess_types;
    apr_hash_t *index;          /* url -> 1 + position in entries */
    apr_array_header_t *entries;
    sm_log_time_cache tc;
    sm_import_stats stats;
    sm_import_progress_fn *progress;
    void *progress_baton;
};

sm_import *sm_import_create(apr_pool_t *p, const sm_rules *rules,
                            const char *base, int guess_types)
{
    sm_import *im = apr_pcalloc(p, sizeof(*im));

    im->pool = p;
    apr_pool_create(&im->scratch, p);
    im->tc.now = apr_time_now();
    im->rules = *rules;
    im->page_type = rules->content_types && rules->content_types->nelts
        ? APR_ARRAY_IDX(rules->content_types, 0, const char *) : "text/html";
    if (!rules->content_types || !rules->content_types->nelts) {
        apr_array_header_t *types = apr_array_make(p, 1, sizeof(char *));
        APR_ARRAY_PUSH(types, const char *) = im->page_type;
        im->rules.content_types = types;
    }
    im->base_len = strlen(base);
    im->guess_types = guess_types;
    im->index = apr_hash_make(p);
    im->entries = apr_array_make(p, 1024, sizeof(url_entry));
    return im;
}

void sm_import_set_progress(sm_import *im, sm_import_progress_fn *fn,
                            void *baton)
{
    im->progress = fn;
    im->progress_baton = baton;
}

static void count_reason(sm_import *im, const char *why)
{
    sm_import_stats *st = &im->stats;
    int i;

    st->ignored++;
    if (!why)
        why = "other";
    for (i = 0; i < st->nreasons; i++) {
        if (st->reasons[i].why == why || strcmp(st->reasons[i].why, why) == 0) {
            st->reasons[i].count++;
            return;
        }
    }
    if (st->nreasons < (int)(sizeof(st->reasons) / sizeof(st->reasons[0]))) {
        st->reasons[st->nreasons].why = why;
        st->reasons[st->nreasons++].count = 1;
    }
}

static void sample(sm_import *im, const char *where, const char *why,
                   const char *line, apr_size_t len)
{
    sm_import_stats *st = &im->stats;

    if (st->nsamples >= SM_IMPORT_MAX_SAMPLES)
        return;
    if (len > 120)
        len = 120;
    st->samples[st->nsamples++] =
        apr_psprintf(im->pool, "%s%s%s: %.*s", where ? where : "",
                     where ? ": " : "", why, (int)len, line);
}

void sm_import_line(sm_import *im, char *line, apr_size_t len,
                    const char *where)
{
    sm_log_entry e;
    sm_response resp;
    sm_verdict v;
    const char *why, *url, *bad;
    url_entry *ent;
    apr_size_t ulen;
    apr_uintptr_t pos;

    im->stats.lines++;
    if ((bad = sm_log_parse_line(line, len, &e, &im->tc)) != NULL) {
        im->stats.malformed++;
        sample(im, where, bad, line, len);
        goto done;
    }
    /* The cheap part of the rules first: most lines of a busy log are
     * assets and revalidations. */
    if (e.status != 200 && e.status != 404 && e.status != 410
        && e.status != 301) {
        count_reason(im, "status");
        goto done;
    }
    if (!e.method) {
        count_reason(im, "no request");
        goto done;
    }
    memset(&resp, 0, sizeof(resp));
    resp.method = e.method;
    resp.status = e.status;
    resp.target = e.target;
    resp.content_type = im->guess_types && e.status == 200
                        && sm_import_not_a_page(e.target)
                        ? NULL : im->page_type;
    resp.authenticated = e.user != NULL;
    resp.base_len = im->base_len;
    v = sm_rules_decide(im->scratch, &im->rules, &resp, &url, &why);
    if (v == SM_IGNORE) {
        count_reason(im, why);
        goto done;
    }

    ulen = strlen(url);
    pos = (apr_uintptr_t)apr_hash_get(im->index, url, (apr_ssize_t)ulen);
    if (pos) {
        ent = &APR_ARRAY_IDX(im->entries, pos - 1, url_entry);
    }
    else {
        ent = apr_array_push(im->entries);
        ent->url = apr_pstrmemdup(im->pool, url, ulen);
        ent->recorded = ent->forgotten = 0;
        apr_hash_set(im->index, ent->url, (apr_ssize_t)ulen,
                     (void *)(apr_uintptr_t)im->entries->nelts);
    }
    if (v == SM_RECORD) {
        im->stats.record_lines++;
        if (e.time >= ent->recorded)
            ent->recorded = e.time;
    }
    else {
        im->stats.forget_lines++;
        if (e.time >= ent->forgotten)
            ent->forgotten = e.time;
    }
done:
    apr_pool_clear(im->scratch);
}

const sm_import_stats *sm_import_get_stats(const sm_import *im)
{
    ((sm_import *)im)->stats.urls = (apr_uint64_t)im->entries->nelts;
    return &im->stats;
}

static int by_url(const void *a, const void *b)
{
    return strcmp((*(const url_entry *const *)a)->url,
                  (*(const url_entry *const *)b)->url);
}

apr_array_header_t *sm_import_changes(sm_import *im, apr_pool_t *p,
                                      const sm_site_conf *site)
{
    int i, n = im->entries->nelts;
    apr_array_header_t *out = apr_array_make(p, n + 1, sizeof(sm_change));
    const url_entry **order = apr_palloc(p, sizeof(*order) * (apr_size_t)(n + 1));

    /* In URL order: what is near in the path goes on the same page, and
     * SQLite's URL index is written in order, not at random. */
    for (i = 0; i < n; i++)
        order[i] = &APR_ARRAY_IDX(im->entries, i, url_entry);
    qsort(order, (size_t)n, sizeof(*order), by_url);

    for (i = 0; i < n; i++) {
        const url_entry *ent = order[i];
        sm_change *c = apr_array_push(out);

        memset(c, 0, sizeof(*c));
        c->site = site;
        c->url = ent->url;
        /* The newest line wins; a recording and a forgetting line of the
         * same second: the page is kept. */
        if (ent->forgotten > ent->recorded) {
            c->op = SM_CHANGE_FORGET;
            c->seen = ent->forgotten;
        }
        else {
            c->op = SM_CHANGE_SEED;
            c->last_modified = ent->recorded;
            c->seen = ent->recorded;
        }
    }
    return out;
}

/* ---- files ------------------------------------------------------------------ */

#define READ_CHUNK (1024 * 1024)
#define MAX_LINE   (64 * 1024)

static int open_log(const char *path, char *err, apr_size_t errlen)
{
    struct stat sb;
    int fd;

    if (strcmp(path, "-") == 0)
        return dup(0);
    if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0) {
        apr_snprintf(err, errlen, "%s: cannot open: %s", path,
                     strerror(errno));
        return -1;
    }
    if (fstat(fd, &sb) != 0 || S_ISDIR(sb.st_mode)) {
        apr_snprintf(err, errlen, "%s: cannot read: %s", path,
                     S_ISDIR(sb.st_mode) ? "it is a directory"
                                         : strerror(errno));
        close(fd);
        return -1;
    }
    return fd;
}

apr_status_t sm_import_check_file(const char *path, char *err,
                                  apr_size_t errlen)
{
    int fd = open_log(path, err, errlen);
    if (fd < 0)
        return APR_EGENERAL;
    close(fd);
    return APR_SUCCESS;
}

apr_status_t sm_import_file(sm_import *im, const char *path, char *err,
                            apr_size_t errlen)
{
    char *buf, *where;
    apr_size_t have = 0, lineno = 0;
    int fd, n, skipping = 0, zerr;
    apr_status_t rv = APR_SUCCESS;
    const char *name = strcmp(path, "-") == 0 ? "(stdin)" : path;
    gzFile gz;

    if ((fd = open_log(path, err, errlen)) < 0)
        return APR_EGENERAL;
    /* gzread reads a file that is not gzip as it is. */
    if (!(gz = gzdopen(fd, "rb"))) {
        apr_snprintf(err, errlen, "%s: cannot read: out of memory", name);
        close(fd);
        return APR_ENOMEM;
    }
    gzbuffer(gz, 256 * 1024);
    buf = malloc(READ_CHUNK + MAX_LINE + 1);
    where = malloc(strlen(name) + 32);
    if (!buf || !where) {
        free(buf);
        free(where);
        gzclose(gz);
        apr_snprintf(err, errlen, "%s: out of memory", name);
        return APR_ENOMEM;
    }
    for (;;) {
        char *s, *nl, *end;

        n = gzread(gz, buf + have, READ_CHUNK);
        if (n < 0) {
            const char *msg = gzerror(gz, &zerr);
            apr_snprintf(err, errlen, "%s: cannot read after line %"
                         APR_SIZE_T_FMT ": %s", name, lineno,
                         zerr == Z_ERRNO ? strerror(errno) : msg);
            rv = APR_EGENERAL;
            n = 0;
        }
        end = buf + have + n;
        s = buf;
        while ((nl = memchr(s, '\n', (apr_size_t)(end - s))) != NULL) {
            lineno++;
            if (!skipping) {
                if (im->stats.nsamples < SM_IMPORT_MAX_SAMPLES)
                    apr_snprintf(where, strlen(name) + 32, "%s:%"
                                 APR_SIZE_T_FMT, name, lineno);
                sm_import_line(im, s, (apr_size_t)(nl - s), where);
            }
            skipping = 0;
            s = nl + 1;
        }
        have = (apr_size_t)(end - s);
        if (im->progress)
            im->progress(im->progress_baton, (apr_off_t)gzoffset(gz),
                         im->stats.lines);
        if (n == 0 || rv != APR_SUCCESS) {
            /* The end: a last line without its line end counts too. */
            if (have && !skipping) {
                lineno++;
                apr_snprintf(where, strlen(name) + 32, "%s:%" APR_SIZE_T_FMT,
                             name, lineno);
                sm_import_line(im, s, have, where);
            }
            break;
        }
        if (have >= MAX_LINE) {
            /* A line this long is no access log line: count it, skip the
             * rest of it. */
            if (!skipping) {
                im->stats.lines++;
                im->stats.malformed++;
                apr_snprintf(where, strlen(name) + 32, "%s:%" APR_SIZE_T_FMT,
                             name, lineno + 1);
                sample(im, where, "line too long", s, have);
            }
            skipping = 1;
            have = 0;
        }
        else {
            memmove(buf, s, have);
        }
    }
    if (rv == APR_SUCCESS) {
        /* A truncated gzip file reads to its end without error, but
         * gzerror says so. */
        const char *msg = gzerror(gz, &zerr);
        if (zerr != Z_OK && zerr != Z_STREAM_END) {
            apr_snprintf(err, errlen, "%s: cannot read after line %"
                         APR_SIZE_T_FMT ": %s", name, lineno, msg);
            rv = APR_EGENERAL;
        }
    }
    free(buf);
    free(where);
    gzclose(gz);
    return rv;
}
