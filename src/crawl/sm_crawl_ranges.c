/* SPDX-License-Identifier: Apache-2.0 */
/* sm_crawl_ranges.c: the address ranges a search engine publishes, parsed
 * from its JSON file, matched against a client's address, and re-read when
 * the file changes.
 *
 * The installed APR (apr-util 1.6, Debian 12) has no JSON parser (apr_json
 * came with APR-util 1.7), so a small one is here: strict RFC 8259 (UTF-8
 * checked, no trailing commas, no comments), bounded in size, depth and
 * prefixes, one pass, no recursion deeper than SM_CRAWL_JSON_DEPTH.  It
 * only keeps the "ipv4Prefix"/"ipv6Prefix" strings of the objects in the
 * top-level "prefixes" array. */
#include "crawl/sm_crawl.h"

#include <apr_lib.h>
#include <apr_strings.h>
#include <apr_thread_mutex.h>

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct {
    unsigned char addr[16];     /* IPv4 in the first 4 bytes */
    unsigned char bits;
} range;

struct sm_crawl_ranges {
    apr_array_header_t *v4, *v6;    /* range */
};

/* ---- prefixes ------------------------------------------------------------ */

/* "a.b.c.d/n" or "x::y/n" (family 4 or 6) into *out; 0 when it is not
 * one, or has host bits set. */
static int parse_prefix(const char *s, int family, range *out)
{
    char buf[64];
    const char *slash = strchr(s, '/');
    apr_size_t alen;
    int bits = 0, maxbits = family == 4 ? 32 : 128, i, nd = 0;

    if (!slash || (alen = (apr_size_t)(slash - s)) == 0
        || alen >= sizeof(buf))
        return 0;
    for (i = 1; slash[i]; i++) {
        if (slash[i] < '0' || slash[i] > '9' || ++nd > 3)
            return 0;
        bits = bits * 10 + (slash[i] - '0');
    }
    if (nd == 0 || (nd > 1 && slash[1] == '0') || bits > maxbits)
        return 0;
    memcpy(buf, s, alen);
    buf[alen] = '\0';
    memset(out, 0, sizeof(*out));
    if (inet_pton(family == 4 ? AF_INET : AF_INET6, buf, out->addr) != 1)
        return 0;
    out->bits = (unsigned char)bits;
    /* Host bits set: a typo more likely than a range. */
    for (i = bits; i < maxbits; i++)
        if (out->addr[i / 8] & (0x80 >> (i % 8)))
            return 0;
    return 1;
}

static int in_range(const range *r, const unsigned char *a)
{
    int full = r->bits / 8, rest = r->bits % 8;

    if (memcmp(r->addr, a, (size_t)full) != 0)
        return 0;
    return !rest || ((r->addr[full] ^ a[full]) & (0xff00 >> rest) & 0xff) == 0;
}

static int has_addr(const apr_array_header_t *a, const unsigned char *addr)
{
    int i;

    for (i = 0; i < a->nelts; i++)
        if (in_range(&APR_ARRAY_IDX(a, i, range), addr))
            return 1;
    return 0;
}

static int has_bytes(const sm_crawl_ranges *r, int family,
                     const unsigned char *b)
{
    static const unsigned char mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                                             0xff, 0xff};

    if (family == 6 && memcmp(b, mapped, sizeof(mapped)) == 0)
        return has_addr(r->v4, b + 12);
    return has_addr(family == 4 ? r->v4 : r->v6, b);
}

int sm_crawl_ranges_has(const sm_crawl_ranges *r, const apr_sockaddr_t *sa)
{
    if (!r || !sa)
        return 0;
    if (sa->family == AF_INET)
        return has_bytes(r, 4, (const unsigned char *)
                         &sa->sa.sin.sin_addr.s_addr);
#if APR_HAVE_IPV6
    if (sa->family == AF_INET6)
        return has_bytes(r, 6, sa->sa.sin6.sin6_addr.s6_addr);
#endif
    return 0;
}

int sm_crawl_ranges_has_text(const sm_crawl_ranges *r, const char *addr)
{
    unsigned char b[16];

    if (!r || !addr)
        return 0;
    if (inet_pton(AF_INET, addr, b) == 1)
        return has_bytes(r, 4, b);
    if (inet_pton(AF_INET6, addr, b) == 1)
        return has_bytes(r, 6, b);
    return 0;
}

int sm_crawl_ranges_count(const sm_crawl_ranges *r)
{
    return r ? r->v4->nelts + r->v6->nelts : 0;
}

/* ---- JSON ------------------------------------------------------------------ */

typedef struct {
    const unsigned char *s, *end, *start;
    apr_pool_t *p;
    sm_crawl_ranges *out;
    const char *err;
} json;

static int fail(json *j, const char *what)
{
    if (!j->err)
        j->err = apr_psprintf(j->p, "%s at byte %" APR_SIZE_T_FMT, what,
                              (apr_size_t)(j->s - j->start));
    return 0;
}

static void ws(json *j)
{
    while (j->s < j->end && (*j->s == ' ' || *j->s == '\t' || *j->s == '\n'
                             || *j->s == '\r'))
        j->s++;
}

/* One UTF-8 sequence (RFC 3629: no overlongs, no surrogates, <= U+10FFFF). */
static int utf8(json *j)
{
    const unsigned char *s = j->s;
    unsigned c = *s, cp;
    int n, i;

    if (c < 0xc2 || c > 0xf4)
        return fail(j, "not UTF-8");
    n = c < 0xe0 ? 1 : c < 0xf0 ? 2 : 3;
    if (j->end - s <= n)
        return fail(j, "not UTF-8");
    cp = c & (0x3f >> n);
    for (i = 1; i <= n; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return fail(j, "not UTF-8");
        cp = (cp << 6) | (s[i] & 0x3f);
    }
    if ((n == 2 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff)))
        || (n == 3 && (cp < 0x10000 || cp > 0x10ffff)))
        return fail(j, "not UTF-8");
    j->s += n + 1;
    return 1;
}

/* A string; when keep is not NULL, its text if it is plain ASCII without
 * escapes and short (a prefix; anything else is kept as "" and refused by
 * its parse). */
static int string(json *j, const char **keep)
{
    const unsigned char *from;
    int plain = 1;

    if (j->s >= j->end || *j->s != '"')
        return fail(j, "a string expected");
    from = ++j->s;
    for (;;) {
        if (j->s >= j->end)
            return fail(j, "unterminated string");
        if (*j->s == '"')
            break;
        if (*j->s < 0x20)
            return fail(j, "a control character in a string");
        if (*j->s == '\\') {
            plain = 0;
            if (++j->s >= j->end)
                return fail(j, "unterminated string");
            if (*j->s == 'u') {
                int i;
                for (i = 1; i <= 4; i++)
                    if (j->s + i >= j->end || !apr_isxdigit(j->s[i]))
                        return fail(j, "a bad \\u escape");
                j->s += 5;
                continue;
            }
            if (!strchr("\"\\/bfnrt", *j->s) || !*j->s)
                return fail(j, "a bad escape");
            j->s++;
        }
        else if (*j->s >= 0x80) {
            plain = 0;
            if (!utf8(j))
                return 0;
        }
        else
            j->s++;
    }
    if (keep)
        *keep = plain && j->s - from < 64
              ? apr_pstrmemdup(j->p, (const char *)from,
                               (apr_size_t)(j->s - from))
              : "";
    j->s++;
    return 1;
}

static int number(json *j)
{
    const unsigned char *s = j->s;

    if (s < j->end && *s == '-')
        s++;
    if (s >= j->end || !apr_isdigit(*s))
        return fail(j, "a bad value");
    if (*s == '0')
        s++;
    else
        while (s < j->end && apr_isdigit(*s))
            s++;
    if (s < j->end && *s == '.') {
        if (++s >= j->end || !apr_isdigit(*s))
            return fail(j, "a bad number");
        while (s < j->end && apr_isdigit(*s))
            s++;
    }
    if (s < j->end && (*s == 'e' || *s == 'E')) {
        if (++s < j->end && (*s == '+' || *s == '-'))
            s++;
        if (s >= j->end || !apr_isdigit(*s))
            return fail(j, "a bad number");
        while (s < j->end && apr_isdigit(*s))
            s++;
    }
    j->s = s;
    return 1;
}

static int word(json *j, const char *w)
{
    apr_size_t n = strlen(w);

    if ((apr_size_t)(j->end - j->s) < n || memcmp(j->s, w, n) != 0)
        return fail(j, "a bad value");
    j->s += n;
    return 1;
}

/* Where in the document a value is: what it means to us. */
enum { AT_OTHER, AT_ROOT, AT_PREFIXES, AT_PREFIX };

static int value(json *j, int depth, int at);

static int add_prefix(json *j, const char *key, const char *text)
{
    int family = strcmp(key, "ipv4Prefix") == 0 ? 4 : 6;
    range r;

    if (!parse_prefix(text, family, &r))
        return fail(j, apr_psprintf(j->p, "\"%s\" is not an IPv%d prefix "
                                    "(address/length, no host bits)",
                                    text, family));
    if (sm_crawl_ranges_count(j->out) >= SM_CRAWL_PREFIXES_MAX)
        return fail(j, apr_psprintf(j->p, "more than %d prefixes",
                                    SM_CRAWL_PREFIXES_MAX));
    APR_ARRAY_PUSH(family == 4 ? j->out->v4 : j->out->v6, range) = r;
    return 1;
}

static int object(json *j, int depth, int at)
{
    j->s++;
    ws(j);
    if (j->s < j->end && *j->s == '}') {
        j->s++;
        return 1;
    }
    for (;;) {
        const char *key = NULL;
        int is_prefix;

        ws(j);
        if (!string(j, &key))
            return 0;
        ws(j);
        if (j->s >= j->end || *j->s != ':')
            return fail(j, "':' expected");
        j->s++;
        ws(j);
        is_prefix = at == AT_PREFIX && (strcmp(key, "ipv4Prefix") == 0
                                        || strcmp(key, "ipv6Prefix") == 0);
        if (is_prefix) {
            const char *text = NULL;
            if (!string(j, &text) || !add_prefix(j, key, text))
                return 0;
        }
        else if (!value(j, depth + 1, at == AT_ROOT
                        && strcmp(key, "prefixes") == 0 ? AT_PREFIXES
                                                        : AT_OTHER))
            return 0;
        ws(j);
        if (j->s < j->end && *j->s == ',') {
            j->s++;
            continue;
        }
        if (j->s < j->end && *j->s == '}') {
            j->s++;
            return 1;
        }
        return fail(j, "',' or '}' expected");
    }
}

static int array(json *j, int depth, int at)
{
    j->s++;
    ws(j);
    if (j->s < j->end && *j->s == ']') {
        j->s++;
        return 1;
    }
    for (;;) {
        ws(j);
        if (!value(j, depth + 1, at == AT_PREFIXES ? AT_PREFIX : AT_OTHER))
            return 0;
        ws(j);
        if (j->s < j->end && *j->s == ',') {
            j->s++;
            continue;
        }
        if (j->s < j->end && *j->s == ']') {
            j->s++;
            return 1;
        }
        return fail(j, "',' or ']' expected");
    }
}

static int value(json *j, int depth, int at)
{
    if (depth > SM_CRAWL_JSON_DEPTH)
        return fail(j, "nested too deeply");
    if (j->s >= j->end)
        return fail(j, "a value expected");
    switch (*j->s) {
    case '{':
        return object(j, depth, at);
    case '[':
        return array(j, depth, at);
    case '"':
        return string(j, NULL);
    case 't':
        return word(j, "true");
    case 'f':
        return word(j, "false");
    case 'n':
        return word(j, "null");
    default:
        return number(j);
    }
}

sm_crawl_ranges *sm_crawl_ranges_parse(apr_pool_t *p, const char *text,
                                       apr_size_t len, const char **err)
{
    json j;

    memset(&j, 0, sizeof(j));
    j.s = j.start = (const unsigned char *)text;
    j.end = j.s + len;
    j.p = p;
    j.out = apr_pcalloc(p, sizeof(*j.out));
    j.out->v4 = apr_array_make(p, 16, sizeof(range));
    j.out->v6 = apr_array_make(p, 16, sizeof(range));
    if (len > SM_CRAWL_FILE_MAX) {
        *err = apr_psprintf(p, "larger than %d bytes", SM_CRAWL_FILE_MAX);
        return NULL;
    }
    /* A byte order mark is not JSON (RFC 8259, 8.1), but is harmless. */
    if (len >= 3 && memcmp(text, "\xef\xbb\xbf", 3) == 0)
        j.s += 3;
    ws(&j);
    if (j.s >= j.end || *j.s != '{') {
        fail(&j, "not a JSON object");
        *err = j.err;
        return NULL;
    }
    if (!value(&j, 1, AT_ROOT)) {
        *err = j.err;
        return NULL;
    }
    ws(&j);
    if (j.s != j.end) {
        fail(&j, "text after the object");
        *err = j.err;
        return NULL;
    }
    return j.out;
}

/* ---- the file, re-read when it changes ------------------------------------- */

struct sm_crawl_file {
    const char *path;
    apr_thread_mutex_t *mutex;      /* guards what follows */
    apr_pool_t *pool;               /* the current ranges' */
    sm_crawl_ranges *ranges;
    apr_time_t checked;
    dev_t dev;
    ino_t ino;
    off_t size;
    struct timespec mtime;
    int reads;
};

/* Read and parse the file; the new ranges in a pool of their own, an
 * unmanaged one: the refresh runs in whichever thread calls it, and a
 * pool made under a shared parent would race with that parent's other
 * users.  (sm_crawl_file_open's pool destroys the last one.) */
static sm_crawl_ranges *read_file(const char *path, apr_pool_t *errp,
                                  apr_pool_t **rp,
                                  struct stat *st, const char **err)
{
    sm_crawl_ranges *r;
    char *buf;
    ssize_t n;
    off_t got = 0;
    int fd;

    fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        *err = apr_psprintf(errp, "cannot open %s: %s", path,
                            strerror(errno));
        return NULL;
    }
    if (fstat(fd, st) != 0 || !S_ISREG(st->st_mode)) {
        *err = apr_psprintf(errp, "%s is not a regular file", path);
        close(fd);
        return NULL;
    }
    if (st->st_size > SM_CRAWL_FILE_MAX) {
        *err = apr_psprintf(errp, "%s is larger than %d bytes", path,
                            SM_CRAWL_FILE_MAX);
        close(fd);
        return NULL;
    }
    if (apr_pool_create_unmanaged_ex(rp, NULL, NULL) != APR_SUCCESS) {
        *err = "out of memory";
        close(fd);
        return NULL;
    }
    buf = apr_palloc(*rp, (apr_size_t)st->st_size + 1);
    while (got < st->st_size
           && (n = read(fd, buf + got, (size_t)(st->st_size - got))) != 0) {
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            *err = apr_psprintf(errp, "cannot read %s: %s", path,
                                strerror(errno));
            close(fd);
            apr_pool_destroy(*rp);
            return NULL;
        }
        got += n;
    }
    close(fd);
    if (!(r = sm_crawl_ranges_parse(*rp, buf, (apr_size_t)got, err))) {
        *err = apr_psprintf(errp, "%s: %s", path, *err);
        apr_pool_destroy(*rp);
        return NULL;
    }
    return r;
}

static void keep_stat(sm_crawl_file *f, const struct stat *st)
{
    f->dev = st->st_dev;
    f->ino = st->st_ino;
    f->size = st->st_size;
    f->mtime = st->st_mtim;
}

static apr_status_t file_cleanup(void *data)
{
    sm_crawl_file *f = data;

    apr_pool_destroy(f->pool);
    return APR_SUCCESS;
}

sm_crawl_file *sm_crawl_file_open(apr_pool_t *p, const char *path,
                                  apr_time_t now, const char **err)
{
    sm_crawl_file *f = apr_pcalloc(p, sizeof(*f));
    struct stat st;

    f->path = apr_pstrdup(p, path);
    if (apr_thread_mutex_create(&f->mutex, APR_THREAD_MUTEX_DEFAULT, p)
        != APR_SUCCESS) {
        *err = "cannot create a mutex";
        return NULL;
    }
    if (!(f->ranges = read_file(path, p, &f->pool, &st, err)))
        return NULL;
    apr_pool_cleanup_register(p, f, file_cleanup, apr_pool_cleanup_null);
    keep_stat(f, &st);
    f->checked = now;
    f->reads = 1;
    return f;
}

int sm_crawl_file_refresh(sm_crawl_file *f, apr_pool_t *p, apr_time_t now,
                          const char **err)
{
    struct stat st;
    sm_crawl_ranges *r;
    apr_pool_t *rp, *old;

    apr_thread_mutex_lock(f->mutex);
    if (now >= f->checked && now - f->checked < SM_CRAWL_RECHECK) {
        apr_thread_mutex_unlock(f->mutex);
        return 0;
    }
    f->checked = now;
    apr_thread_mutex_unlock(f->mutex);

    if (lstat(f->path, &st) == 0 && st.st_dev == f->dev
        && st.st_ino == f->ino && st.st_size == f->size
        && st.st_mtim.tv_sec == f->mtime.tv_sec
        && st.st_mtim.tv_nsec == f->mtime.tv_nsec)
        return 0;
    /* Changed (or gone): read it afresh, outside the lock; a reader sees
     * the old ranges until the new ones are whole. */
    if (!(r = read_file(f->path, p, &rp, &st, err)))
        return 1;
    apr_thread_mutex_lock(f->mutex);
    old = f->pool;
    f->pool = rp;
    f->ranges = r;
    keep_stat(f, &st);
    f->reads++;
    apr_thread_mutex_unlock(f->mutex);
    apr_pool_destroy(old);
    return 0;
}

int sm_crawl_file_has(sm_crawl_file *f, const apr_sockaddr_t *sa)
{
    int has;

    apr_thread_mutex_lock(f->mutex);
    has = sm_crawl_ranges_has(f->ranges, sa);
    apr_thread_mutex_unlock(f->mutex);
    return has;
}

int sm_crawl_file_reads(sm_crawl_file *f)
{
    int n;

    apr_thread_mutex_lock(f->mutex);
    n = f->reads;
    apr_thread_mutex_unlock(f->mutex);
    return n;
}

int sm_crawl_file_prefixes(sm_crawl_file *f)
{
    int n;

    apr_thread_mutex_lock(f->mutex);
    n = sm_crawl_ranges_count(f->ranges);
    apr_thread_mutex_unlock(f->mutex);
    return n;
}

const char *sm_crawl_file_path(const sm_crawl_file *f)
{
    return f->path;
}
