/* SPDX-License-Identifier: Apache-2.0 */
/* sitemapctl_why.c: sitemapctl why, "why is my page not listed?": whether
 * a URL is listed (the urls table) and the latest verdict the module kept
 * of it (left out or removed, with the rule that did it). */
#include "ctl/sitemapctl.h"
#include "ctl/sm_ctl.h"
#include "util/sm_url.h"

#include <apr_strings.h>
#include <stdio.h>
#include <string.h>

/* The site of an absolute URL (its scheme and authority), or NULL. */
static const char *site_of(apr_pool_t *p, const char *in)
{
    const char *auth = strstr(in, "://"), *err;
    apr_size_t n;

    if (!auth || in[0] == '/')
        return NULL;
    n = (apr_size_t)(auth + 3 - in) + strcspn(auth + 3, "/?#");
    return sm_url_parse_base(p, apr_pstrmemdup(p, in, n), &err);
}

static void print_verdict(ctl *c, const sm_verdict_row *v)
{
    printf("verdict: %s\n", v->verdict);
    printf("reason: %s\n", v->reason);
    if (v->detail && *v->detail)
        printf("detail: %s\n", v->detail);
    printf("status: %d\n", v->status);
    printf("at: %s\n", w3c(c->pool, v->at));
}

int cmd_why(ctl *c)
{
    const command *cmd = find_command("why");
    const char *in = APR_ARRAY_IDX(c->args, 0, const char *), *url, *err;
    sm_site_row row;
    sm_why_info why;
    sm_store *st;
    apr_status_t rv;
    int rc;

    if (!c->site && !(c->site = site_of(c->pool, in)))
        return usage_error(cmd, "'%s' is a path: name its site with --site "
                           "BASE, or give the full URL", in);
    if ((err = sm_ctl_url(c->pool, c->site, in, NULL, &url)) != NULL)
        return usage_error(cmd, "%s", err);
    if ((rc = open_site_read(c, &st, &row)) != EX_OK)
        return rc;
    rv = sm_store_why(st, c->pool, c->site, url, &why);
    sm_store_read_end(st);
    if (rv != APR_SUCCESS) {
        say("%s: %s", c->db, rv == APR_ENOTIMPL
            ? "this store keeps no verdicts" : sm_store_error(st));
        return EX_STORE;
    }
    printf("url: %s%s\n", c->site, url);
    if (why.listed) {
        printf("listed: yes\n");
        printf("lastmod: %s\n", w3c(c->pool, why.lastmod));
        printf("last seen: %s\n", w3c(c->pool, why.last_seen));
        /* A response left out since it was last written (a visitor with
         * a session, say) leaves it listed: said, as the latest seen. */
        if (why.has_verdict && why.verdict.at >= why.last_seen) {
            print_verdict(c, &why.verdict);
            printf("note: a later response was left out; the URL stays "
                   "listed\n");
        }
        return EX_OK;
    }
    printf("listed: no\n");
    if (!why.has_verdict) {
        printf("verdict: none kept (not seen since mod_sitemap keeps "
               "verdicts, or its verdict was among the oldest dropped)\n");
        return EX_NOT_SEEN;
    }
    print_verdict(c, &why.verdict);
    return EX_OK;
}
