/* SPDX-License-Identifier: Apache-2.0 */
/* sm_indexnow_none.c: the sender of a build without IndexNow (configure
 * --without-indexnow, no libcurl): an endpoint is refused with the
 * reason, so SitemapIndexNowEndpoint and SitemapIndexNow On stop start-up
 * saying so, and nothing is ever sent.  What IndexNow's pending list holds
 * is the store's and stays as it is. */
#include "indexnow/sm_indexnow.h"

const char *sm_indexnow_endpoint_problem(apr_pool_t *p, const char *url)
{
    (void)p;
    (void)url;
    return SM_INDEXNOW_MISSING;
}

apr_status_t sm_indexnow_global_init(void)
{
    return APR_SUCCESS;
}

apr_status_t sm_indexnow_create(sm_indexnow **out, apr_pool_t *p,
                                const char *db_path, int busy_timeout_ms,
                                const sm_logger *log)
{
    (void)p; (void)db_path; (void)busy_timeout_ms; (void)log;
    *out = NULL;
    return APR_ENOTIMPL;
}

void sm_indexnow_add_site(sm_indexnow *in, const sm_indexnow_site *site)
{
    (void)in;
    (void)site;
}

apr_status_t sm_indexnow_start(sm_indexnow *in)
{
    (void)in;
    return APR_ENOTIMPL;
}

int sm_indexnow_run_once(sm_indexnow *in)
{
    (void)in;
    return 0;
}

void sm_indexnow_stop(sm_indexnow *in)
{
    (void)in;
}
