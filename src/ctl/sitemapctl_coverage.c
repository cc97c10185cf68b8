/* SPDX-License-Identifier: Apache-2.0 */
/* sitemapctl_coverage.c: sitemapctl coverage, crawl coverage by URL: what
 * a crawler (SitemapCrawler's NAME) fetched of a site's listed URLs, which
 * it never fetched, which changed since, and what it fetched that is not
 * listed (sm_store_coverage_urls). */
#include "ctl/sitemapctl.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

typedef struct {
    ctl *c;
    const char *base;
} coverage_ctx;

static apr_status_t coverage_one(void *baton, const char *url,
                                 apr_time_t lastmod, apr_time_t fetched,
                                 int status)
{
    coverage_ctx *x = baton;
    (void)status;

    if (printf("%s%s\t%s\t%s\n", x->base, url, w3c(x->c->pool, lastmod),
               w3c(x->c->pool, fetched)) < 0)
        return APR_EGENERAL;
    return APR_SUCCESS;
}

int cmd_coverage(ctl *c)
{
    coverage_ctx x = { c, c->site };
    sm_site_row row;
    sm_store *st;
    apr_status_t rv;
    int rc;

    if (!c->crawler)
        return usage_error(find_command("coverage"), "coverage needs "
                           "--crawler NAME (SitemapCrawler's NAME)");
    if ((rc = open_site_read(c, &st, &row)) != EX_OK)
        return rc;
    rv = sm_store_coverage_urls(st, c->site, c->crawler,
                                (sm_coverage_which)c->coverage, coverage_one,
                                &x);
    sm_store_read_end(st);
    if (fflush(stdout) != 0 || (rv != APR_SUCCESS && ferror(stdout))) {
        say("cannot write the list: %s", strerror(errno));
        return EX_WRITE;
    }
    if (rv != APR_SUCCESS) {
        say("%s: %s", c->db, rv == APR_ENOTIMPL
            ? "this store keeps no crawl coverage (a schema before 8)"
            : sm_store_error(st));
        return EX_STORE;
    }
    return EX_OK;
}
