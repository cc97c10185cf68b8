/* SPDX-License-Identifier: Apache-2.0 */
/* sm_sites.c: a Host's normal form and the bounded registry of sites made
 * from Hosts (see sm_sites.h). */
#include "record/sm_sites.h"
#include "record/sm_memory.h"

#include <apr_hash.h>
#include <apr_lib.h>
#include <apr_strings.h>
#include <apr_thread_mutex.h>

#include <stdlib.h>
#include <string.h>

static int is_ipv4(const char *s)
{
    int dots = 0, digits = 0;

    for (; *s; s++) {
        if (*s >= '0' && *s <= '9') {
            if (++digits > 3)
                return 0;
        }
        else if (*s == '.' && digits) {
            dots++;
            digits = 0;
        }
        else
            return 0;
    }
    return dots == 3 && digits;
}

/* Letters, digits, hyphens; labels 1..63 not beginning or ending with a
 * hyphen; a last label that is not all digits (those are IP forms). */
static int is_dns_name(const char *s)
{
    const char *label = s;
    int all_digits = 1;

    for (;; s++) {
        if (*s == '.' || *s == '\0') {
            apr_size_t n = (apr_size_t)(s - label);

            if (n == 0 || n > 63 || label[0] == '-' || s[-1] == '-')
                return 0;
            if (*s == '\0')
                return !all_digits;
            label = s + 1;
            all_digits = 1;
            continue;
        }
        if (*s >= 'a' && *s <= 'z')
            all_digits = 0;
        else if (*s == '-')
            all_digits = 0;
        else if (!(*s >= '0' && *s <= '9'))
            return 0;
    }
}

sm_host_status sm_host_normalise(const char *host, int port, int allow_ip,
                                 char *out)
{
    const char *colon, *end;
    apr_size_t n, i;

    out[0] = '\0';
    if (!host || !*host)
        return SM_HOST_EMPTY;
    /* The port: after the last ':' outside an IPv6 literal's brackets. */
    end = host + strlen(host);
    colon = strrchr(host, ':');
    if (colon && (host[0] != '[' || strchr(colon, ']') == NULL)) {
        char *stop;
        long given;

        if (!colon[1])
            return SM_HOST_PORT;
        given = strtol(colon + 1, &stop, 10);
        if (*stop || colon[1] < '0' || colon[1] > '9' || given != port)
            return SM_HOST_PORT;
        end = colon;
    }
    n = (apr_size_t)(end - host);
    if (n > 0 && host[n - 1] == '.')
        n--;
    if (n == 0)
        return SM_HOST_EMPTY;
    if (n > SM_HOST_MAX)
        return SM_HOST_TOO_LONG;
    for (i = 0; i < n; i++)
        out[i] = apr_tolower(host[i]);
    out[n] = '\0';
    if (out[0] == '[') {
        if (out[n - 1] != ']' || n < 3
            || strspn(out + 1, "0123456789abcdef:.") != n - 2) {
            out[0] = '\0';
            return SM_HOST_INVALID;
        }
        if (!allow_ip) {
            out[0] = '\0';
            return SM_HOST_IP;
        }
        return SM_HOST_OK;
    }
    if (is_ipv4(out)) {
        if (!allow_ip) {
            out[0] = '\0';
            return SM_HOST_IP;
        }
        return SM_HOST_OK;
    }
    if (!is_dns_name(out)) {
        out[0] = '\0';
        return SM_HOST_INVALID;
    }
    return SM_HOST_OK;
}

struct sm_sites {
    apr_pool_t *pool;               /* the names and bases (sm_private_pool:
                                       used with lock held, by request
                                       threads and the writer's spills) */
    apr_thread_mutex_t *lock;
    apr_hash_t *sites;              /* name -> sm_site_conf */
    const sm_site_conf *proto;
    const char *prefix, *suffix;
    int max;
    apr_time_t last_warned;         /* 0: never */
};

apr_status_t sm_sites_create(apr_pool_t *p, int max,
                             const sm_site_conf *proto, const char *prefix,
                             const char *suffix, sm_sites **out)
{
    sm_sites *reg = apr_pcalloc(p, sizeof(*reg));
    apr_status_t rv;

    if ((rv = apr_thread_mutex_create(&reg->lock, APR_THREAD_MUTEX_DEFAULT,
                                      p)) != APR_SUCCESS
        || (rv = sm_private_pool(&reg->pool, p)) != APR_SUCCESS)
        return rv;
    reg->sites = apr_hash_make(p);
    reg->proto = proto;
    reg->prefix = prefix;
    reg->suffix = suffix;
    reg->max = max;
    *out = reg;
    return APR_SUCCESS;
}

static sm_site_conf *site_make(const sm_sites *reg, apr_pool_t *p,
                               const char *name)
{
    sm_site_conf *site = apr_pmemdup(p, reg->proto, sizeof(*site));

    site->base = apr_pstrcat(p, reg->prefix, name, reg->suffix, NULL);
    return site;
}

const sm_site_conf *sm_sites_make(sm_sites *reg, apr_pool_t *p,
                                  const char *name)
{
    return site_make(reg, p, name);
}

const sm_site_conf *sm_sites_find(sm_sites *reg, const char *name)
{
    const sm_site_conf *site;

    apr_thread_mutex_lock(reg->lock);
    site = apr_hash_get(reg->sites, name, APR_HASH_KEY_STRING);
    apr_thread_mutex_unlock(reg->lock);
    return site;
}

const sm_site_conf *sm_sites_get(sm_sites *reg, const char *name,
                                 apr_time_t now,
                                 apr_interval_time_t interval, int *warn,
                                 sm_sites_result *res)
{
    sm_site_conf *site;

    *warn = 0;
    apr_thread_mutex_lock(reg->lock);
    site = apr_hash_get(reg->sites, name, APR_HASH_KEY_STRING);
    if (site)
        *res = SM_SITES_FOUND;
    else if ((int)apr_hash_count(reg->sites) >= reg->max) {
        if (!reg->last_warned || now - reg->last_warned >= interval) {
            reg->last_warned = now;
            *warn = 1;
        }
        *res = SM_SITES_FULL;
    }
    else {
        const char *key = apr_pstrdup(reg->pool, name);

        site = site_make(reg, reg->pool, key);
        apr_hash_set(reg->sites, key, APR_HASH_KEY_STRING, site);
        *res = SM_SITES_ADDED;
    }
    apr_thread_mutex_unlock(reg->lock);
    return site;
}

int sm_sites_count(sm_sites *reg)
{
    int n;

    apr_thread_mutex_lock(reg->lock);
    n = (int)apr_hash_count(reg->sites);
    apr_thread_mutex_unlock(reg->lock);
    return n;
}
