/* SPDX-License-Identifier: Apache-2.0 */
/* sitemapctl.h: what the parts of sitemapctl share.  Private to the
 * program:
 *   sitemapctl.c        commands, their options and --help; main
 *   sitemapctl_store.c  opening the store (as root: as its owner)
 *   sitemapctl_write.c  import, add, remove, prune
 *   sitemapctl_why.c    why
 *   sitemapctl_coverage.c coverage
 * The exit statuses are listed in sitemapctl.c. */
#ifndef SITEMAPCTL_H
#define SITEMAPCTL_H

#include <apr_pools.h>
#include <apr_tables.h>
#include <apr_time.h>

#include <sys/types.h>

#include "util/sm_log.h"
#include "ctl/sm_progress.h"
#include "ctl/sm_ctl.h"
#include "store/sm_store.h"

#define EX_OK           0
#define EX_CHECK        1
#define EX_USAGE        2
#define EX_NO_STORE     3
#define EX_UNKNOWN_SITE 4
#define EX_LOG          5
#define EX_STORE        6
#define EX_WRITE        7
#define EX_NOT_SEEN     8

#define BUSY_TIMEOUT_MS 5000
/* Changes per write transaction; between two, the module gets its turn. */
#define BATCH           50000
#define PAUSE           apr_time_from_msec(110)


typedef struct {
    apr_pool_t *pool;
    const char *command;
    const char *db;                     /* as shown: a URI's password
                                           masked (sm_uri_mask) */
    const char *uri;                    /* DB as given: what is opened */
    const char *site;                   /* canonical */
    apr_int64_t page;                   /* --page, 0: every page */
    apr_array_header_t *excludes;       /* sm_regex * */
    apr_array_header_t *allow_query;    /* const char * */
    apr_interval_time_t older_than;
    apr_time_t lastmod;                 /* --lastmod, 0: none */
    int page_size;                      /* --page-size, 0: not given */
    int all_types;
    int all;                            /* --all */
    const char *crawler;                /* --crawler */
    int coverage;                       /* sm_coverage_which: --never,
                                           --stale, --unlisted */
    apr_array_header_t *args;           /* positional, after DB */
    int as_owner;                       /* root acting as the store's owner */
    uid_t owner_uid;
    gid_t owner_gid;
    int images;                         /* export --images */
    sm_export_news news;                /* export --news-*, --llms-* */
} ctl;

#define O_SITE        0x001
#define O_PAGE        0x002
#define O_EXCLUDE     0x004
#define O_ALLOW_QUERY 0x008
#define O_OLDER_THAN  0x010
#define O_LASTMOD     0x020
#define O_PAGE_SIZE   0x040
#define O_ALL_TYPES   0x080
#define O_ALL         0x100
#define O_CRAWLER     0x200
#define O_COVERAGE    0x400     /* --never, --stale, --unlisted */
#define O_IMAGES      0x800
#define O_NEWS_PATH   0x1000
#define O_NEWS_PUB    0x2000
#define O_LLMS_PATH   0x4000
#define O_LLMS_TITLE  0x8000
#define O_LLMS_SUMMARY 0x10000
#define O_LLMS_MAX    0x20000
#define O_EXPORT_DOCS (O_IMAGES | O_NEWS_PATH | O_NEWS_PUB | O_LLMS_PATH \
                       | O_LLMS_TITLE | O_LLMS_SUMMARY | O_LLMS_MAX)

typedef struct {
    const char *name;
    int opts;           /* allowed options */
    int site_required;
    int min_args, max_args;     /* positional arguments after DB */
    int (*run)(ctl *c);
    const char *usage;
    const char *help;
} command;

/* ---- messages (sitemapctl.c) ---- */

extern const char *progname;
extern const sm_logger logger;          /* the core's warnings, via say */

/* "sitemapctl: " and the message on standard error. */
void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* A time as W3C datetime (UTC), "-" for 0. */
const char *w3c(apr_pool_t *p, apr_time_t t);
/* Says what is wrong and the command's usage; returns EX_USAGE. */
int usage_error(const command *cmd, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
const command *find_command(const char *name);

/* ---- the store (sitemapctl_store.c) ---- */

enum { OPEN_READ, OPEN_WRITE, OPEN_CREATE };

/* Switch to the store's owner (owner) or back to root; 0 (said) if not. */
int drop_to_owner(ctl *c);
/* EX_OK, or EX_NO_STORE (said) when the store file is not safe to open
 * as root (see sitemapctl_store.c). */
int guard_store(ctl *c, int become_owner, int writing);
/* EX_OK with *st open, or an exit status (said). */
int open_store(ctl *c, int mode, sm_store **st);
/* open_store for reading, a read begun, the site's row (it must exist):
 * EX_OK, or an exit status (said) with no read left open. */
int open_site_read(ctl *c, sm_store **st, sm_site_row *row);
/* The site's row; EX_UNKNOWN_SITE (said) when it has none and must_exist. */
int site_row(ctl *c, sm_store *st, sm_site_row *row, int must_exist);
/* The site as sitemapctl writes to it. */
sm_site_conf *site_conf(ctl *c, const sm_site_row *row);
/* Apply changes in transactions of BATCH with a PAUSE between them;
 * pg: a meter to move after each, or NULL. */
int apply_all(ctl *c, sm_store *st, const sm_change *changes, int n,
              sm_apply_stats *total, sm_progress *pg);
/* The URL arguments, normalised; EX_USAGE (said) if one is not valid. */
int arg_urls(ctl *c, const command *cmd, const char ***urls);

/* ---- the commands ---- */

int cmd_stats(ctl *c);          /* sitemapctl_read.c */
int cmd_list(ctl *c);
int cmd_export(ctl *c);
int cmd_check(ctl *c);
int cmd_why(ctl *c);            /* sitemapctl_why.c */
int cmd_coverage(ctl *c);       /* sitemapctl_coverage.c */
int cmd_indexnow(ctl *c);
int cmd_import(ctl *c);         /* sitemapctl_write.c */
int cmd_add(ctl *c);
int cmd_remove(ctl *c);
int cmd_prune(ctl *c);

#endif
