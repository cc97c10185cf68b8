/* SPDX-License-Identifier: Apache-2.0 */
/* sm_sites.h: sites made at run time from a request's Host (the mass
 * virtual host of SitemapSiteFromHost): the Host's normal form, and a
 * bounded, thread-safe registry of the sites one process has seen.
 *
 * The glue is mod_sitemap_hosts.c. */
#ifndef SM_SITES_H
#define SM_SITES_H

#include <apr_pools.h>
#include <apr_time.h>

#include "store/sm_store.h"

/* The longest DNS name (RFC 1035, without the trailing dot). */
#define SM_HOST_MAX 253

/* Why a Host has no normal form. */
typedef enum {
    SM_HOST_OK = 0,
    SM_HOST_EMPTY,          /* missing or empty */
    SM_HOST_TOO_LONG,       /* over SM_HOST_MAX */
    SM_HOST_PORT,           /* a port other than the vhost's own */
    SM_HOST_IP,             /* an IP literal and allow_ip is 0 */
    SM_HOST_INVALID         /* not a DNS name (characters, labels) */
} sm_host_status;

/* The normal form of a request's Host, written to out (at least
 * SM_HOST_MAX + 1 bytes): lowercase, without a trailing dot, without
 * ":port" when port is the vhost's own (any other port: SM_HOST_PORT).
 * IP literals (dotted IPv4, [IPv6]) only with allow_ip; otherwise a DNS
 * name of letters, digits and hyphens, labels of 1 to 63 bytes that do
 * not begin or end with a hyphen, and not all digits in the last label.
 * Written by hand: apr_parse_addr_port accepts names httpd would never
 * route (underscores, empty labels) and does not lowercase. */
sm_host_status sm_host_normalise(const char *host, int port, int allow_ip,
                                 char *out);

/* The registry: at most max sites; lookups and additions from any thread
 * of the process. */
typedef struct sm_sites sm_sites;

typedef enum {
    SM_SITES_FOUND = 0,     /* known before */
    SM_SITES_ADDED,         /* added now */
    SM_SITES_FULL           /* not known and the cap is reached */
} sm_sites_result;

/* Every site made is a copy of *proto (page size, caps, settings) with
 * its own base: prefix (the vhost's scheme, "https://") + the name +
 * suffix (the vhost's ":port", or ""). */
apr_status_t sm_sites_create(apr_pool_t *p, int max,
                             const sm_site_conf *proto, const char *prefix,
                             const char *suffix, sm_sites **out);
/* The site of name (a normal form), found or added; NULL when the cap
 * refuses it.  It lives as long as the registry.  *warn is set to 1 at
 * most once per interval when the cap refuses a name (the caller logs
 * it), else 0. */
const sm_site_conf *sm_sites_get(sm_sites *reg, const char *name,
                                 apr_time_t now,
                                 apr_interval_time_t interval, int *warn,
                                 sm_sites_result *res);
/* The site of name when the registry holds it (no place taken), else
 * NULL. */
const sm_site_conf *sm_sites_find(sm_sites *reg, const char *name);
/* A site of name made as the registry would make it, in p, without
 * taking a place: for reading what the store has of a name this process
 * has not placed (its sitemap, its robots.txt line). */
const sm_site_conf *sm_sites_make(sm_sites *reg, apr_pool_t *p,
                                  const char *name);
/* How many sites the registry holds. */
int sm_sites_count(sm_sites *reg);

#endif
