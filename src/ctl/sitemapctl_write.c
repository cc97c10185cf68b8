/* SPDX-License-Identifier: Apache-2.0 */
/* sitemapctl_write.c: the commands that change a store's URLs: import
 * (from access logs), add, remove and prune. */
#include "config.h"

#include <apr_strings.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ctl/sitemapctl.h"
#include "ctl/sm_ctl.h"
#include "ctl/sm_import.h"
#include "record/sm_rules.h"
#include "serve/sm_sitemap.h"
#include "util/sm_url.h"

/* ---- import ------------------------------------------------------------------ */

/* Progress of an import, drawn on standard error when it is a terminal. */
typedef struct {
    sm_progress meter;
    apr_off_t before;           /* bytes of the logs already read */
} import_progress;

static void import_progress_cb(void *baton, apr_off_t bytes,
                               apr_uint64_t lines)
{
    import_progress *ip = baton;
    sm_progress_update(&ip->meter, ip->before + bytes, lines,
                       apr_time_now());
}

/* A log's size in bytes; -1 when it has none to tell (standard input, a
 * pipe). */
static apr_off_t log_size(const char *path)
{
    struct stat sb;
    if (strcmp(path, "-") == 0 || stat(path, &sb) != 0
        || !S_ISREG(sb.st_mode))
        return -1;
    return (apr_off_t)sb.st_size;
}

int cmd_import(ctl *c)
{
    sm_rules rules;
    apr_array_header_t *types = apr_array_make(c->pool, 1, sizeof(char *));
    apr_array_header_t *changes;
    const sm_import_stats *is;
    sm_apply_stats as;
    sm_site_row row;
    sm_site_conf *site;
    sm_import *im;
    sm_store *st;
    apr_time_t t0, t1, t2;
    import_progress ip;
    apr_off_t total = 0;
    char err[512];
    int rc, i, tty, status = EX_OK;
    double secs;

    /* Every log must open before anything is changed. */
    for (i = 0; i < c->args->nelts; i++) {
        const char *log = APR_ARRAY_IDX(c->args, i, const char *);
        if (sm_import_check_file(log, err, sizeof(err)) != APR_SUCCESS) {
            say("%s", err);
            return EX_LOG;
        }
    }

    APR_ARRAY_PUSH(types, const char *) = "text/html";
    rules.content_types = types;
    rules.excludes = c->excludes;
    rules.allow_query = c->allow_query;
    im = sm_import_create(c->pool, &rules, c->site, !c->all_types);

    /* Progress only on a terminal: a log or a pipe gets nothing. */
    tty = isatty(STDERR_FILENO) ? STDERR_FILENO : -1;
    for (i = 0; i < c->args->nelts && total >= 0; i++) {
        apr_off_t size = log_size(APR_ARRAY_IDX(c->args, i, const char *));
        total = size < 0 ? -1 : total + size;
    }
    t0 = apr_time_now();
    /* The logs are read before the store is opened, with the identity
     * they were checked with: root may read logs the store's owner may
     * not, and opening a store of another user's makes root that user for
     * good (sitemapctl_store.c). */
    sm_progress_start(&ip.meter, tty, "reading logs", total, 1, t0);
    ip.before = 0;
    sm_import_set_progress(im, import_progress_cb, &ip);
    for (i = 0; i < c->args->nelts; i++) {
        const char *log = APR_ARRAY_IDX(c->args, i, const char *);
        apr_off_t size = log_size(log);
        if (sm_import_file(im, log, err, sizeof(err)) != APR_SUCCESS) {
            sm_progress_end(&ip.meter);
            say("%s (the lines before it are imported)", err);
            status = EX_LOG;
        }
        ip.before += size > 0 ? size : 0;
    }
    sm_progress_end(&ip.meter);
    if ((rc = open_store(c, OPEN_CREATE, &st)) != EX_OK)
        return rc;
    if ((rc = site_row(c, st, &row, 0)) != EX_OK)
        return rc;
    if (!row.known)
        say("the site %s is new to the store %s", c->site, c->db);
    site = site_conf(c, &row);
    t1 = apr_time_now();
    changes = sm_import_changes(im, c->pool, site);
    sm_progress_start(&ip.meter, tty, "writing URLs", changes->nelts, 0, t1);
    rc = apply_all(c, st, (const sm_change *)changes->elts, changes->nelts,
                   &as, &ip.meter);
    sm_progress_end(&ip.meter);
    if (rc != EX_OK)
        return rc;
    t2 = apr_time_now();

    is = sm_import_get_stats(im);
    secs = (double)(t2 - t0) / APR_USEC_PER_SEC;
    printf("read %" APR_UINT64_T_FMT " lines from %d file%s in %.2f s "
           "(%.0f lines/s; reading %.2f s, writing %.2f s)\n", is->lines,
           c->args->nelts, c->args->nelts == 1 ? "" : "s", secs,
           secs > 0 ? (double)is->lines / secs : 0.0,
           (double)(t1 - t0) / APR_USEC_PER_SEC,
           (double)(t2 - t1) / APR_USEC_PER_SEC);
    printf("  recording lines: %" APR_UINT64_T_FMT "\n", is->record_lines);
    printf("  forgetting lines: %" APR_UINT64_T_FMT "\n", is->forget_lines);
    printf("  ignored lines: %" APR_UINT64_T_FMT, is->ignored);
    for (i = 0; i < is->nreasons; i++)
        printf("%s%s %" APR_UINT64_T_FMT, i ? ", " : " (",
               is->reasons[i].why, is->reasons[i].count);
    printf("%s\n", is->nreasons ? ")" : "");
    printf("  malformed lines: %" APR_UINT64_T_FMT "\n", is->malformed);
    for (i = 0; i < is->nsamples; i++)
        printf("    %s\n", is->samples[i]);
    if (is->malformed > (apr_uint64_t)is->nsamples)
        printf("    ...\n");
    printf("urls: %" APR_UINT64_T_FMT " distinct: %d added, %d already "
           "stored, %d removed\n", is->urls, as.added,
           as.touched + as.updated, as.removed);
    if (fflush(stdout) != 0)
        return EX_WRITE;
    return status;
}

/* ---- add, remove ----------------------------------------------------------- */

int cmd_add(ctl *c)
{
    const char **urls;
    sm_change *changes;
    sm_apply_stats as;
    sm_site_row row;
    sm_site_conf *site;
    sm_store *st;
    apr_time_t now = apr_time_now();
    int rc, i;

    if ((rc = arg_urls(c, find_command("add"), &urls)) != EX_OK)
        return rc;
    if ((rc = open_store(c, OPEN_CREATE, &st)) != EX_OK)
        return rc;
    if ((rc = site_row(c, st, &row, 0)) != EX_OK)
        return rc;
    if (!row.known)
        say("the site %s is new to the store %s", c->site, c->db);
    site = site_conf(c, &row);
    changes = apr_pcalloc(c->pool, sizeof(*changes)
                                   * (apr_size_t)c->args->nelts);
    for (i = 0; i < c->args->nelts; i++) {
        changes[i].op = c->lastmod ? SM_CHANGE_RECORD : SM_CHANGE_SEED;
        changes[i].site = site;
        changes[i].url = urls[i];
        changes[i].last_modified = c->lastmod;
        changes[i].seen = now;
    }
    if ((rc = apply_all(c, st, changes, c->args->nelts, &as, NULL)) != EX_OK)
        return rc;
    printf("%d added, %d already stored%s\n", as.added,
           as.touched + as.updated,
           c->lastmod ? " (lastmod set)" : "");
    return EX_OK;
}

int cmd_remove(ctl *c)
{
    const char **urls;
    sm_change *changes;
    sm_apply_stats as;
    sm_site_row row;
    sm_site_conf *site;
    sm_store *st;
    apr_time_t now = apr_time_now();
    int rc, i;

    if ((rc = arg_urls(c, find_command("remove"), &urls)) != EX_OK)
        return rc;
    if ((rc = open_store(c, OPEN_WRITE, &st)) != EX_OK)
        return rc;
    if ((rc = site_row(c, st, &row, 1)) != EX_OK)
        return rc;
    site = site_conf(c, &row);
    changes = apr_pcalloc(c->pool, sizeof(*changes)
                                   * (apr_size_t)c->args->nelts);
    for (i = 0; i < c->args->nelts; i++) {
        changes[i].op = SM_CHANGE_FORGET;
        changes[i].site = site;
        changes[i].url = urls[i];
        changes[i].seen = now;
    }
    if ((rc = apply_all(c, st, changes, c->args->nelts, &as, NULL)) != EX_OK)
        return rc;
    printf("%d removed, %d not stored\n", as.removed,
           c->args->nelts - as.removed);
    return EX_OK;
}
/* ---- prune ------------------------------------------------------------------- */

int cmd_prune(ctl *c)
{
    sm_site_conf site;
    sm_site_row row;
    sm_store *st;
    int rc, removed = 0;

    if ((rc = open_store(c, OPEN_WRITE, &st)) != EX_OK)
        return rc;
    if ((rc = site_row(c, st, &row, 1)) != EX_OK)
        return rc;
    memset(&site, 0, sizeof(site));
    site.base = c->site;
    site.page_size = row.page_size;
    site.expire = c->older_than;
    /* The module's expiry: transactions of at most 10,000 URLs. */
    if (sm_store_expire(st, &site, apr_time_now(), 0, &removed)
        != APR_SUCCESS) {
        say("%s: %s (%d removed before)", c->db, sm_store_error(st),
            removed);
        return EX_STORE;
    }
    printf("%d removed\n", removed);
    return EX_OK;
}
