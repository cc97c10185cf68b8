/* SPDX-License-Identifier: Apache-2.0 */
/* sm_spill.c: see sm_spill.h.  Written by hand: the format is ours, and
 * APR has no claim-by-rename or exclusive-link helper. */
#include "record/sm_spill.h"
#include "head/sm_alternates.h"

#include <apr_file_io.h>
#include <apr_strings.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define HEADER "mod_sitemap spill 1\n"
/* A spill holds at most a queue (20,000 changes of at most a few KB). */
#define SPILL_MAX_BYTES (256 * 1024 * 1024)

static const char hex[] = "0123456789ABCDEF";

/* Control bytes, blanks, DEL and '%' as %XX: a field is one word. */
static void put_field(apr_file_t *f, const char *s)
{
    char buf[512];
    apr_size_t n = 0;

    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (n + 3 > sizeof(buf)) {
            apr_file_write_full(f, buf, n, NULL);
            n = 0;
        }
        if (c <= 0x20 || c == 0x7f || c == '%') {
            buf[n++] = '%';
            buf[n++] = hex[c >> 4];
            buf[n++] = hex[c & 15];
        }
        else
            buf[n++] = (char)c;
    }
    apr_file_write_full(f, buf, n, NULL);
}

static int unhex(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* Undo put_field in place; 0 when s is not one of its words. */
static int get_field(char *s)
{
    char *out = s;

    for (; *s; s++) {
        if (*s == '%') {
            int hi = unhex(s[1]), lo = hi < 0 ? -1 : unhex(s[2]);
            if (lo < 0)
                return 0;
            *out++ = (char)(hi * 16 + lo);
            s += 2;
        }
        else if ((unsigned char)*s <= 0x20 || *s == 0x7f)
            return 0;
        else
            *out++ = *s;
    }
    *out = '\0';
    return 1;
}

static const char op_letter[] = "?RFS";   /* by sm_change_op */

static apr_status_t write_changes(apr_file_t *f, const sm_change *changes,
                                  int n)
{
    int i;

    apr_file_puts(HEADER, f);
    for (i = 0; i < n; i++) {
        const sm_change *c = &changes[i];
        char *head = apr_psprintf(apr_file_pool_get(f), "%c\t%" APR_TIME_T_FMT
                                  "\t%" APR_TIME_T_FMT "\t",
                                  op_letter[c->op <= SM_CHANGE_SEED ? c->op
                                                                    : 0],
                                  c->seen, c->last_modified);
        apr_file_puts(head, f);
        put_field(f, c->site->base);
        apr_file_putc('\t', f);
        put_field(f, c->url);
        apr_file_putc('\t', f);
        if (c->etag) {
            apr_file_putc('=', f);
            put_field(f, c->etag);
        }
        else
            apr_file_putc('-', f);
        /* The title: a seventh field when there is one (NULL: none). */
        if (c->title) {
            apr_file_puts("\tT", f);
            put_field(f, c->title);
        }
        /* The alternates after it, likewise ("A" alone: none). */
        if (c->alternates) {
            apr_file_puts("\tA", f);
            put_field(f, c->alternates);
        }
        /* The client's tag (sm_client_tag; absent: not known). */
        if (c->client)
            apr_file_printf(f, "\tC%u", c->client);
        apr_file_putc('\n', f);
    }
    apr_file_printf(f, "end %d\n", n);
    return apr_file_flush(f);
}

apr_status_t sm_spill_write(apr_pool_t *parent, const char *db_path,
                            const sm_change *changes, int n,
                            char *errmsg, apr_size_t errlen)
{
    apr_pool_t *p;
    apr_file_t *f;
    char *tmp, *final;
    apr_status_t rv;
    int tries;

    if ((rv = apr_pool_create(&p, parent)) != APR_SUCCESS)
        return rv;
    /* mkstemp: O_CREAT | O_EXCL, mode 0600, an unpredictable name. */
    tmp = apr_pstrcat(p, db_path, ".spilling-XXXXXX", NULL);
    rv = apr_file_mktemp(&f, tmp, APR_FOPEN_CREATE | APR_FOPEN_READ
                                  | APR_FOPEN_WRITE | APR_FOPEN_EXCL
                                  | APR_FOPEN_BUFFERED, p);
    if (rv != APR_SUCCESS) {
        apr_snprintf(errmsg, errlen, "cannot create %s: %pm", tmp, &rv);
        apr_pool_destroy(p);
        return rv;
    }
    rv = write_changes(f, changes, n);
    if (rv == APR_SUCCESS)
        rv = apr_file_sync(f);
    if (apr_file_close(f) != APR_SUCCESS && rv == APR_SUCCESS)
        rv = APR_EGENERAL;
    if (rv != APR_SUCCESS) {
        apr_snprintf(errmsg, errlen, "cannot write %s: %pm", tmp, &rv);
        unlink(tmp);
        apr_pool_destroy(p);
        return rv;
    }
    /* Into place under a name no reader has seen: link() never replaces
     * an existing file (rename() would). */
    final = apr_pstrcat(p, db_path, ".spill-",
                        tmp + strlen(db_path) + strlen(".spilling-"), NULL);
    for (tries = 0; link(tmp, final) != 0; tries++) {
        rv = errno;
        if (rv != EEXIST || tries == 5) {
            apr_snprintf(errmsg, errlen, "cannot link %s to %s: %pm", tmp,
                         final, &rv);
            unlink(tmp);
            apr_pool_destroy(p);
            return rv;
        }
        final = apr_psprintf(p, "%s.spill-%s%d", db_path,
                             tmp + strlen(db_path) + strlen(".spilling-"),
                             tries);
    }
    unlink(tmp);
    apr_pool_destroy(p);
    return APR_SUCCESS;
}

/* ---- reading back -------------------------------------------------------- */

/* The whole file, NUL-terminated; NULL (and *why) when it is not ours. */
static char *read_own_file(apr_pool_t *p, const char *path, const char **why)
{
    struct stat sb;
    char *buf = NULL;
    apr_size_t got = 0;
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);

    if (fd < 0) {
        *why = apr_psprintf(p, "cannot open it: %s", strerror(errno));
        return NULL;
    }
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)
        || sb.st_uid != geteuid() || sb.st_size > SPILL_MAX_BYTES) {
        *why = "not a regular file of ours of a sensible size";
        close(fd);
        return NULL;
    }
    buf = apr_palloc(p, (apr_size_t)sb.st_size + 1);
    while (got < (apr_size_t)sb.st_size) {
        ssize_t r = read(fd, buf + got, (apr_size_t)sb.st_size - got);
        if (r <= 0) {
            *why = r < 0 ? apr_psprintf(p, "cannot read it: %s",
                                        strerror(errno))
                         : "it shrank while read";
            close(fd);
            return NULL;
        }
        got += (apr_size_t)r;
    }
    close(fd);
    buf[got] = '\0';
    return buf;
}

/* Parse one line into c (base into *base); 0 when it is not a change.
 * Six fields, then optional ones named by their first letter, in order:
 * T (the title), A (the alternates; spills of older modules have none),
 * C (the client's tag, sm_client_tag; likewise). */
static int parse_line(apr_pool_t *p, char *line, sm_change *c,
                      const char **base)
{
    static const char optional[] = "TAC";
    char *f[6], *opt[sizeof(optional) - 1] = { NULL }, *o, *last;
    char *end;
    int i, next = 0;

    for (i = 0; i < 6; i++) {
        f[i] = apr_strtok(i ? NULL : line, "\t", &last);
        if (!f[i])
            return 0;
    }
    while ((o = apr_strtok(NULL, "\t", &last)) != NULL) {
        const char *at = strchr(optional + next, o[0]);
        if (!o[0] || !at)
            return 0;
        next = (int)(at - optional);
        opt[next++] = o + 1;
    }
    memset(c, 0, sizeof(*c));
    if (strlen(f[0]) != 1 || !strchr(op_letter + 1, f[0][0]))
        return 0;
    c->op = (sm_change_op)(strchr(op_letter, f[0][0]) - op_letter);
    errno = 0;
    c->seen = apr_strtoi64(f[1], &end, 10);
    if (errno || *end || c->seen <= 0)
        return 0;
    c->last_modified = apr_strtoi64(f[2], &end, 10);
    if (errno || *end || c->last_modified < 0
        || !get_field(f[3]) || !get_field(f[4]))
        return 0;
    *base = f[3];
    c->url = f[4];
    if (f[5][0] == '=') {
        if (!get_field(f[5] + 1))
            return 0;
        c->etag = f[5] + 1;
    }
    else if (strcmp(f[5], "-") != 0)
        return 0;
    if (opt[0]) {
        if (!get_field(opt[0]))
            return 0;
        c->title = opt[0];
    }
    if (opt[1]) {
        if (!get_field(opt[1]) || !sm_alternates_valid(p, opt[1]))
            return 0;
        c->alternates = opt[1];
    }
    if (opt[2]) {
        apr_int64_t tag;
        errno = 0;
        tag = apr_strtoi64(opt[2], &end, 10);
        if (errno || *end || tag < 1 || tag > 0xffff)
            return 0;
        c->client = (unsigned)tag;
    }
    return 1;
}

/* Every line of buf, checked before any is handed over: n changes. */
static int parse_file(apr_pool_t *p, char *buf, apr_array_header_t *changes,
                      apr_array_header_t *bases)
{
    char *line, *next;
    int declared;

    if (strncmp(buf, HEADER, strlen(HEADER)) != 0)
        return 0;
    for (line = buf + strlen(HEADER); *line; line = next) {
        char *nl = strchr(line, '\n');
        if (!nl)
            return 0;               /* a cut line: not complete */
        *nl = '\0';
        next = nl + 1;
        if (strncmp(line, "end ", 4) == 0) {
            char *end;
            declared = (int)strtol(line + 4, &end, 10);
            return !*end && !*next && declared == changes->nelts;
        }
        if (!parse_line(p, line, apr_array_push(changes),
                        apr_array_push(bases)))
            return 0;
    }
    (void)p;
    return 0;                       /* no closing line */
}

apr_status_t sm_spill_take(apr_pool_t *parent, const char *db_path,
                           int max_changes, sm_spill_fn *fn, void *baton,
                           const sm_logger *log, int *files, int *taken)
{
    apr_pool_t *p, *fp;
    const char *slash = strrchr(db_path, '/');
    const char *dir = slash ? apr_pstrndup(parent, db_path,
                                           slash == db_path ? 1
                                           : (apr_size_t)(slash - db_path))
                            : ".";
    const char *name = slash ? slash + 1 : db_path;
    const char *prefix = apr_pstrcat(parent, name, ".spill-", NULL);
    const char *bad = apr_pstrcat(parent, name, ".spill-bad-", NULL);
    apr_dir_t *d;
    apr_finfo_t fi;
    apr_status_t rv;

    *files = *taken = 0;
    if ((rv = apr_pool_create(&p, parent)) != APR_SUCCESS)
        return rv;
    if ((rv = apr_dir_open(&d, dir, p)) != APR_SUCCESS) {
        apr_pool_destroy(p);
        return rv;
    }
    apr_pool_create(&fp, p);
    while (*taken < max_changes
           && apr_dir_read(&fi, APR_FINFO_NAME | APR_FINFO_TYPE, d)
              == APR_SUCCESS) {
        const char *src, *claimed, *why = NULL;
        apr_array_header_t *changes, *bases;
        char *buf;
        int i;

        if (strncmp(fi.name, prefix, strlen(prefix)) != 0
            || strncmp(fi.name, bad, strlen(bad)) == 0)
            continue;
        apr_pool_clear(fp);
        src = apr_pstrcat(fp, dir, "/", fi.name, NULL);
        /* Claimed by renaming: of several processes, one gets it. */
        claimed = apr_psprintf(fp, "%s/%s.replaying-%s-%ld", dir, name,
                               fi.name + strlen(prefix), (long)getpid());
        if (rename(src, claimed) != 0)
            continue;
        changes = apr_array_make(fp, 256, sizeof(sm_change));
        bases = apr_array_make(fp, 256, sizeof(const char *));
        buf = read_own_file(fp, claimed, &why);
        if (buf && !parse_file(fp, buf, changes, bases))
            why = "it is not a complete spill file";
        if (!buf || why) {
            const char *kept = apr_pstrcat(fp, dir, "/", bad,
                                           fi.name + strlen(prefix), NULL);
            sm_log(log, SM_LOG_ERR, 0, "store %s: %s: %s; left as %s",
                   db_path, src, why, rename(claimed, kept) == 0 ? kept
                                                                : claimed);
            continue;
        }
        for (i = 0; i < changes->nelts; i++)
            fn(baton, APR_ARRAY_IDX(bases, i, const char *),
               &APR_ARRAY_IDX(changes, i, sm_change));
        unlink(claimed);
        (*files)++;
        *taken += changes->nelts;
    }
    apr_dir_close(d);
    apr_pool_destroy(p);
    return APR_SUCCESS;
}
