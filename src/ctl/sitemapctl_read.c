/* SPDX-License-Identifier: Apache-2.0 */
/* sitemapctl_read.c: the commands that read a store: stats, list,
 * indexnow (the pending list), export and check. */
#include "config.h"

#include <apr_strings.h>
#include <apr_time.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ctl/sitemapctl.h"
#include "ctl/sm_ctl.h"
#include "head/sm_alternates.h"
#include "serve/sm_document.h"
#include "record/sm_rules.h"
#include "serve/sm_sitemap.h"
#include "store/sm_store.h"
#include "util/sm_url.h"
#include "serve/sm_xml.h"

/* ---- stats ------------------------------------------------------------------- */

static apr_int64_t file_size(apr_pool_t *p, const char *path,
                             const char *suffix)
{
    struct stat sb;
    return stat(apr_pstrcat(p, path, suffix, NULL), &sb) == 0
        ? (apr_int64_t)sb.st_size : -1;
}

/* The site's IndexNow numbers, when it has any. */
static void print_indexnow(ctl *c, const apr_array_header_t *all,
                           const char *base)
{
    int i;

    for (i = 0; i < all->nelts; i++) {
        const sm_indexnow_stats *x = &APR_ARRAY_IDX(all, i,
                                                    sm_indexnow_stats);
        if (strcmp(x->base, base) != 0)
            continue;
        printf("indexnow:       %" APR_INT64_T_FMT " pending, %"
               APR_INT64_T_FMT " sent, %" APR_INT64_T_FMT " dropped, %"
               APR_INT64_T_FMT " not queued (backlog full)\n", x->pending,
               x->sent, x->dropped, x->overflow);
        if (x->last_sent)
            printf("last answer:    %d at %s%s%s\n", x->last_status,
                   w3c(c->pool, x->last_sent), *x->last_reason ? ": " : "",
                   x->last_reason);
        else if (*x->last_reason)
            printf("last answer:    none (%s)\n", x->last_reason);
        if (x->next_try > apr_time_now())
            printf("next send:      not before %s\n",
                   w3c(c->pool, x->next_try));
    }
}

int cmd_stats(ctl *c)
{
    apr_array_header_t *sites, *indexnow;
    sm_store_about about;
    sm_store *st;
    apr_int64_t size, wal;
    apr_status_t rv;
    int rc, i;

    if ((rc = open_store(c, OPEN_READ, &st)) != EX_OK)
        return rc;
    if (sm_store_read_begin(st) != APR_SUCCESS
        || sm_store_about_file(st, c->pool, &about) != APR_SUCCESS
        || sm_store_site_stats(st, c->pool, c->site, &sites)
           != APR_SUCCESS) {
        say("%s: %s", c->db, sm_store_error(st));
        sm_store_read_end(st);
        return EX_STORE;
    }
    /* A backend without IndexNow (PostgreSQL so far) has no such lines. */
    rv = sm_store_indexnow_stats(st, c->pool, c->site, &indexnow);
    if (APR_STATUS_IS_ENOTIMPL(rv))
        indexnow = apr_array_make(c->pool, 1, sizeof(sm_indexnow_stats));
    else if (rv != APR_SUCCESS) {
        say("%s: %s", c->db, sm_store_error(st));
        sm_store_read_end(st);
        return EX_STORE;
    }
    sm_store_read_end(st);
    if (c->site && sites->nelts == 0) {
        say("the store %s has no site %s", c->db, c->site);
        return EX_UNKNOWN_SITE;
    }
    size = !sm_store_is_file(c->uri) ? about.db_bytes
                                  : file_size(c->pool, c->db, "");
    wal = !sm_store_is_file(c->uri) ? -1 : file_size(c->pool, c->db, "-wal");
    printf("store:          %s\n", c->db);
    printf("size:           %" APR_INT64_T_FMT " bytes", size);
    if (wal >= 0)
        printf(" (and %" APR_INT64_T_FMT " bytes of WAL)", wal);
    printf("\nfree:           %" APR_INT64_T_FMT " bytes\n", about.free_bytes);
    printf("schema version: %d\n", about.schema_version);
    printf("store id:       %s\n", about.store_id ? about.store_id : "-");
    printf("created:        %s\n", w3c(c->pool, about.created));
    if (!c->site)
        printf("sites:          %d\n", sites->nelts);
    for (i = 0; i < sites->nelts; i++) {
        const sm_site_stats *s = &APR_ARRAY_IDX(sites, i, sm_site_stats);
        printf("\nsite:           %s\n", s->base);
        printf("urls:           %" APR_INT64_T_FMT "\n", s->url_count);
        printf("pages:          %" APR_INT64_T_FMT " (%d URLs a page; new "
               "URLs go on page %" APR_INT64_T_FMT ")\n", s->pages,
               s->page_size, s->last_page);
        printf("newest lastmod: %s\n", w3c(c->pool, s->lastmod_newest));
        printf("oldest lastmod: %s\n", w3c(c->pool, s->lastmod_oldest));
        printf("newest seen:    %s\n", w3c(c->pool, s->seen_newest));
        printf("oldest seen:    %s\n", w3c(c->pool, s->seen_oldest));
        printf("alternates:     %" APR_INT64_T_FMT " hreflang alternates of "
               "%" APR_INT64_T_FMT " URLs\n", s->alternates,
               s->urls_with_alternates);
        print_indexnow(c, indexnow, s->base);
    }
    return EX_OK;
}

/* ---- list -------------------------------------------------------------------- */

typedef struct {
    const char *base;
    apr_int64_t n;
    apr_pool_t *scratch;
} list_ctx;

/* A URL's line, then one line per hreflang alternate (as the documents
 * write them: the valid ones), indented by a tab: "\threflang\thref". */
static apr_status_t list_one(void *baton, const char *url, apr_int64_t page,
                             apr_time_t lastmod, apr_time_t last_seen,
                             const char *alternates)
{
    list_ctx *l = baton;
    char date[SM_W3C_DATETIME_LEN];
    apr_array_header_t *alts;
    int i;
    (void)last_seen;

    sm_w3c_datetime(date, lastmod);
    l->n++;
    if (printf("%s%s\t%s\t%" APR_INT64_T_FMT "\n", l->base, url, date,
               page) < 0)
        return APR_EGENERAL;
    sm_alternates_parse(l->scratch, alternates, &alts);
    for (i = 0; i < alts->nelts; i++) {
        const sm_alternate *a = &APR_ARRAY_IDX(alts, i, sm_alternate);
        if (printf("\t%s\t%s\n", a->hreflang, a->href) < 0)
            return APR_EGENERAL;
    }
    apr_pool_clear(l->scratch);
    return APR_SUCCESS;
}

int cmd_list(ctl *c)
{
    sm_site_row row;
    list_ctx l = { c->site, 0, NULL };
    sm_store *st;
    apr_status_t rv;
    int rc;

    apr_pool_create(&l.scratch, c->pool);
    if ((rc = open_site_read(c, &st, &row)) != EX_OK)
        return rc;
    rv = sm_store_url_rows(st, c->site, c->page, list_one, &l);
    sm_store_read_end(st);
    if (fflush(stdout) != 0 || (rv != APR_SUCCESS && ferror(stdout))) {
        say("cannot write the list: %s", strerror(errno));
        return EX_WRITE;
    }
    if (rv != APR_SUCCESS) {
        say("%s: %s", c->db, sm_store_error(st));
        return EX_STORE;
    }
    if (c->page && l.n == 0)
        say("page %" APR_INT64_T_FMT " of %s is empty", c->page, c->site);
    return EX_OK;
}

/* ---- indexnow ---------------------------------------------------------------- */

static apr_status_t collect_url(void *baton, const char *url,
                                apr_int64_t page, apr_time_t lastmod,
                                apr_time_t last_seen, const char *alternates)
{
    apr_array_header_t *urls = baton;
    (void)page; (void)lastmod; (void)last_seen; (void)alternates;
    APR_ARRAY_PUSH(urls, const char *) = apr_pstrdup(urls->pool, url);
    return APR_SUCCESS;
}

int cmd_indexnow(ctl *c)
{
    const command *cmd = find_command("indexnow");
    apr_array_header_t *all = apr_array_make(c->pool, 64, sizeof(char *));
    const char **urls;
    sm_site_row row;
    sm_store *st;
    int rc, n, off, queued = 0;

    if (c->all == (c->args->nelts > 0))
        return usage_error(cmd, "indexnow needs URLs or --all (not both)");
    if (!c->all && (rc = arg_urls(c, cmd, &urls)) != EX_OK)
        return rc;
    if ((rc = open_store(c, OPEN_WRITE, &st)) != EX_OK)
        return rc;
    if ((rc = site_row(c, st, &row, 1)) != EX_OK)
        return rc;
    if (c->all) {
        if (sm_store_url_rows(st, c->site, 0, collect_url, all)
            != APR_SUCCESS) {
            say("%s: %s", c->db, sm_store_error(st));
            return EX_STORE;
        }
        urls = (const char **)all->elts;
        n = all->nelts;
    }
    else
        n = c->args->nelts;
    /* One transaction per batch, as apply_all does. */
    for (off = 0; off < n; off += BATCH) {
        int k = n - off < BATCH ? n - off : BATCH, q;
        if (sm_store_indexnow_queue(st, c->site, urls + off, k, &q)
            != APR_SUCCESS) {
            say("writing to %s failed after %d of %d URLs: %s", c->db,
                queued, n, sm_store_error(st));
            return EX_STORE;
        }
        queued += q;
        if (q < k)
            break;
    }
    printf("%d URL%s queued for IndexNow", queued, queued == 1 ? "" : "s");
    if (queued < n)
        printf("; %d left out: the pending list holds at most %d URLs",
               n - queued, SM_INDEXNOW_BACKLOG_MAX);
    printf("\n");
    return EX_OK;
}

/* ---- export ------------------------------------------------------------------ */

/* export run as root with a store file: a child does the work (it becomes
 * the store's owner for good when the store is another user's, see
 * sitemapctl_store.c, prints what it did and exits with the command's
 * status) and this root parent writes the files it makes, in DIR.  So a
 * store of another user's is never parsed as root, and files are still
 * written as root where the administrator names (a document root of
 * root's).  Returns -1 in the child (go on with the export), else the
 * command's status. */
static int export_split(ctl *c, const char *dir)
{
    char err[512];
    sm_export_status es;
    int sv[2], status;
    pid_t pid;

    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
        say("cannot export: %s", strerror(errno));
        return EX_WRITE;
    }
    fflush(NULL);
    if ((pid = fork()) < 0) {
        say("cannot export: %s", strerror(errno));
        close(sv[0]);
        close(sv[1]);
        return EX_WRITE;
    }
    if (pid == 0) {
        close(sv[0]);
        sm_ctl_export_remote(sv[1]);
        return -1;
    }
    close(sv[1]);
    es = sm_ctl_export_serve(c->pool, sv[0], dir, err, sizeof(err));
    close(sv[0]);
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) {
            say("cannot export: %s", strerror(errno));
            return EX_WRITE;
        }
    if (es != SM_EXPORT_OK) {
        say("%s", err);
        return EX_WRITE;
    }
    if (WIFSIGNALED(status)) {
        say("the export's reading process died (signal %d)",
            WTERMSIG(status));
        return EX_WRITE;
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : EX_WRITE;
}

int cmd_export(ctl *c)
{
    const char *dir = APR_ARRAY_IDX(c->args, 0, const char *), *err;
    sm_export_result res;
    sm_export_status es;
    sm_settings set;
    sm_site_row row;
    sm_store *st;
    char msg[512];
    int rc, i;

    if (geteuid() == 0 && sm_store_is_file(c->uri)
        && (rc = export_split(c, dir)) >= 0)
        return rc;
    if ((rc = open_store(c, OPEN_READ, &st)) != EX_OK)
        return rc;
    if ((rc = site_row(c, st, &row, 1)) != EX_OK)
        return rc;
    if ((err = sm_settings_parse(c->pool, row.settings, &set)) != NULL) {
        say("the settings stored with %s cannot be read (%s)", c->site, err);
        return EX_STORE;
    }
    if (!*row.settings)
        say("warning: the module has not stored the settings of %s yet "
            "(it does with its next write): using the defaults (%s, no "
            "changefreq or priority)", c->site, set.path);
    sm_ctl_export_images(c->images);
    es = sm_ctl_export(c->pool, st, c->site, &set, dir, &res, msg,
                       sizeof(msg));
    if (es == SM_EXPORT_OK)
        es = sm_ctl_export_news(c->pool, st, c->site, &c->news, dir, &res,
                                msg, sizeof(msg));
    switch (es) {
    case SM_EXPORT_OK:
        break;
    case SM_EXPORT_UNKNOWN_SITE:
        say("the store %s has no site %s", c->db, c->site);
        return EX_UNKNOWN_SITE;
    case SM_EXPORT_STORE:
        say("%s: %s", c->db, msg);
        return EX_STORE;
    default:
        say("%s", msg);
        return EX_WRITE;
    }
    for (i = 0; i < res.paths->nelts; i++)
        printf("%s\n", APR_ARRAY_IDX(res.paths, i, const char *));
    for (i = 0; i < res.removed->nelts; i++)
        say("removed %s: the module no longer serves that page",
            APR_ARRAY_IDX(res.removed, i, const char *));
    if (res.index_entries_left_out)
        say("warning: %d non-empty pages are past the %d an index may list: "
            "their files are written (the module serves them) but the index "
            "leaves them out, as the module's does (raise SitemapPageSize)",
            res.index_entries_left_out, SM_INDEX_MAX_ENTRIES);
    if (res.rows_skipped)
        say("warning: %" APR_INT64_T_FMT " row%s of the store left out, not "
            "being a URL as the module stores them (first: \"%s\"); run "
            "sitemapctl check", res.rows_skipped,
            res.rows_skipped == 1 ? "" : "s", res.first_skipped);
    if (res.alternates_skipped)
        say("warning: %" APR_INT64_T_FMT " hreflang alternate%s of the store "
            "left out, not being one as the module stores them; run "
            "sitemapctl check", res.alternates_skipped,
            res.alternates_skipped == 1 ? "" : "s");
    if (res.urls_dropped)
        say("warning: %" APR_INT64_T_FMT " URL%s written without their %"
            APR_INT64_T_FMT " hreflang alternates, which would take a "
            "document past %d bytes (as the module does; lower "
            "SitemapPageSize)", res.urls_dropped,
            res.urls_dropped == 1 ? "" : "s", res.alternates_dropped,
            SM_PAGE_MAX_BYTES);
    fprintf(stderr, "%s: %d file%s (%s, %" APR_INT64_T_FMT " page%s, %"
            APR_INT64_T_FMT " URLs)\n", progname, res.files,
            res.files == 1 ? "" : "s",
            strcmp(res.index_kind, "index") == 0 ? "a sitemap index"
            : strcmp(res.index_kind, "urlset") == 0 ? "one page"
            : "no URL yet: no sitemap written", res.pages,
            res.pages == 1 ? "" : "s", res.urls);
    return EX_OK;
}

/* ---- check ------------------------------------------------------------------- */

int cmd_check(ctl *c)
{
    apr_array_header_t *problems = apr_array_make(c->pool, 4, sizeof(char *));
    sm_store_about about;
    char err[512];
    apr_status_t rv;
    int i;

    if (sm_store_is_file(c->uri) && (i = guard_store(c, 1, 0)) != EX_OK)
        return i;
    rv = sm_store_check(c->pool, c->uri, BUSY_TIMEOUT_MS, problems, &about,
                        err, sizeof(err));
    if (rv != APR_SUCCESS) {
        say("cannot open %s: %s", c->db, err);
        return EX_NO_STORE;
    }
    for (i = 0; i < problems->nelts; i++)
        printf("%s: %s\n", c->db, APR_ARRAY_IDX(problems, i, const char *));
    if (problems->nelts) {
        say("%s is not sound (%d problem%s)", c->db, problems->nelts,
            problems->nelts == 1 ? "" : "s");
        return EX_CHECK;
    }
    printf("%s: ok (mod_sitemap store, schema version %d, store id %s)\n",
           c->db, about.schema_version,
           about.store_id ? about.store_id : "-");
    return EX_OK;
}
