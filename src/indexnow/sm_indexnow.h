/* SPDX-License-Identifier: Apache-2.0 */
/* sm_indexnow.h: IndexNow (indexnow.org): tell search engines which URLs
 * were added, changed or removed, within seconds.
 *
 * The store keeps each site's pending URLs (see sm_store.h); a sender is a
 * thread that, for each site of one store file, claims a batch (at most
 * SM_INDEXNOW_BATCH_MAX URLs, at most once per the site's interval), POSTs
 * it as JSON to the site's endpoint with libcurl, and records the answer.
 * Every process may run one: the claim lets exactly one of them send each
 * batch.  Never run from a request thread. */
#ifndef SM_INDEXNOW_H
#define SM_INDEXNOW_H

#include <apr_pools.h>
#include <apr_tables.h>
#include <apr_time.h>

#include "util/sm_log.h"
#include "store/sm_store.h"

#define SM_INDEXNOW_DEFAULT_ENDPOINT "https://api.indexnow.org/indexnow"
#define SM_INDEXNOW_KEY_MIN 8
#define SM_INDEXNOW_KEY_MAX 128
/* What a build without IndexNow says of it (configure --without-indexnow). */
#define SM_INDEXNOW_MISSING "this mod_sitemap was built without IndexNow " \
    "(configure --without-indexnow)"

typedef struct {
    const char *base;               /* the site (scheme://host[:port]) */
    const char *key;
    const char *endpoint;           /* http(s) URL */
    apr_interval_time_t interval;   /* the least time between two POSTs */
    const sm_logger *log;
} sm_indexnow_site;

/* NULL when key is one the protocol allows (8 to 128 of a-z A-Z 0-9 '-'),
 * otherwise what is wrong with it. */
const char *sm_indexnow_key_problem(const char *key);
/* NULL when url is an http:// or https:// URL with a host, otherwise what
 * is wrong with it (SM_INDEXNOW_MISSING in a build without IndexNow). */
const char *sm_indexnow_endpoint_problem(apr_pool_t *p, const char *url);

/* The submission's JSON body: host, key, keyLocation and urlList (the
 * items' URLs, made absolute with the site's base). */
const char *sm_indexnow_json(apr_pool_t *p, const sm_indexnow_site *site,
                             const apr_array_header_t *items);

/* Once per process, before any thread (curl_global_init). */
apr_status_t sm_indexnow_global_init(void);

typedef struct sm_indexnow sm_indexnow;

/* A sender for the store at db_path, living in (and stopped with) pool p:
 * a stop aborts a POST under way within a second. */
apr_status_t sm_indexnow_create(sm_indexnow **out, apr_pool_t *p,
                                const char *db_path, int busy_timeout_ms,
                                const sm_logger *log);
/* site is copied. */
void sm_indexnow_add_site(sm_indexnow *in, const sm_indexnow_site *site);
apr_status_t sm_indexnow_start(sm_indexnow *in);
/* One round over the sites: what the thread does every poll.  Returns how
 * many batches were claimed. */
int sm_indexnow_run_once(sm_indexnow *in);
void sm_indexnow_stop(sm_indexnow *in);

#endif
