/* SPDX-License-Identifier: Apache-2.0 */
/* sm_crawl_dns.c: reverse-then-forward DNS confirmation of a crawler's
 * address, off the request path.
 *
 * The request path asks sm_crawl_dns_check, which only reads the cache
 * and, for an address it does not know, puts it on a bounded queue.  A
 * thread that may wait drains the queue with sm_crawl_dns_run: the
 * address's name (PTR), then that name's addresses, which must hold the
 * address again (anyone can publish a PTR record naming
 * crawl-1.googlebot.com for their own address; only Google can make that
 * name resolve to it).  What it came to is cached, a confirmed name for
 * ttl_ok, a definite no for ttl_none, a timeout for ttl_fail, and still
 * answered while it is looked up again once expired; the cache holds at
 * most cache_max addresses (the oldest entry goes first).
 * Suffixes are compared on the request path against the cached name, so
 * crawlers with different suffixes share one cache. */
#include "crawl/sm_crawl.h"

#include <apr_hash.h>
#include <apr_strings.h>
#include <apr_thread_mutex.h>

#include <arpa/inet.h>
#include <string.h>

#define ADDR_MAX 64             /* text of an address, with a zone */
#define NAME_MAX_LEN 256        /* a DNS name, with the NUL */

typedef struct {
    char addr[ADDR_MAX];
    char name[NAME_MAX_LEN];    /* the confirmed name; "": none */
    apr_time_t expires;
    int used;
    int pending;                /* queued, not looked up yet */
} entry;

struct sm_crawl_dns {
    sm_dns_conf conf;
    apr_thread_mutex_t *mutex;  /* guards all that follows */
    entry *slots;               /* cache_max of them, a ring */
    int next;                   /* the slot the next new address takes */
    apr_hash_t *index;          /* addr -> entry * */
    int cached;
    char (*queue)[ADDR_MAX];    /* queue_max addresses, a ring */
    int qhead, qlen;
};

void sm_dns_conf_default(sm_dns_conf *c)
{
    memset(c, 0, sizeof(*c));
    c->reverse = sm_dns_system_reverse;
    c->forward = sm_dns_system_forward;
    c->cache_max = 4096;
    c->queue_max = 256;
    c->ttl_ok = apr_time_from_sec(86400);
    c->ttl_none = apr_time_from_sec(3600);
    c->ttl_fail = apr_time_from_sec(60);
}

sm_crawl_dns *sm_crawl_dns_create(apr_pool_t *p, const sm_dns_conf *conf,
                                  const char **err)
{
    sm_crawl_dns *d = apr_pcalloc(p, sizeof(*d));

    d->conf = *conf;
    if (d->conf.cache_max < 1 || d->conf.queue_max < 1) {
        *err = "the DNS cache and queue need room for an address";
        return NULL;
    }
    if (apr_thread_mutex_create(&d->mutex, APR_THREAD_MUTEX_DEFAULT, p)
        != APR_SUCCESS) {
        *err = "cannot create a mutex";
        return NULL;
    }
    d->slots = apr_pcalloc(p, sizeof(entry) * (apr_size_t)d->conf.cache_max);
    d->queue = apr_pcalloc(p, ADDR_MAX * (apr_size_t)d->conf.queue_max);
    /* apr_hash reuses the entries it frees: bounded by cache_max. */
    d->index = apr_hash_make(p);
    return d;
}

/* Is name (a trailing dot allowed) suffix itself or a name under it?
 * Case-insensitive, as DNS names are. */
static int under(const char *name, const char *suffix)
{
    apr_size_t n = strlen(name), s = strlen(suffix);

    if (n && name[n - 1] == '.')
        n--;
    if (s && suffix[s - 1] == '.')
        s--;
    if (!s || n < s || strncasecmp(name + n - s, suffix, s) != 0)
        return 0;
    return n == s || name[n - s - 1] == '.';
}

/* The cache's entry for addr, a new one (the oldest evicted) when make. */
static entry *find(sm_crawl_dns *d, const char *addr, int make)
{
    entry *e = apr_hash_get(d->index, addr, APR_HASH_KEY_STRING);

    if (e || !make)
        return e;
    e = &d->slots[d->next];
    d->next = (d->next + 1) % d->conf.cache_max;
    if (e->used)
        apr_hash_set(d->index, e->addr, APR_HASH_KEY_STRING, NULL);
    else
        d->cached++;
    memset(e, 0, sizeof(*e));
    apr_cpystrn(e->addr, addr, sizeof(e->addr));
    e->used = 1;
    apr_hash_set(d->index, e->addr, APR_HASH_KEY_STRING, e);
    return e;
}

sm_crawl_result sm_crawl_dns_check(sm_crawl_dns *d, const char *addr,
                                   const apr_array_header_t *suffixes,
                                   apr_time_t now)
{
    sm_crawl_result res = SM_CRAWL_PENDING;
    entry *e;
    int i;

    if (!addr || strlen(addr) >= ADDR_MAX)
        return SM_CRAWL_UNVERIFIED;
    apr_thread_mutex_lock(d->mutex);
    e = find(d, addr, 0);
    /* Answered before: that answer, also while it is asked again once
     * expired (a crawler's fetches never turn pending at each expiry). */
    if (e && e->expires) {
        res = SM_CRAWL_UNVERIFIED;
        for (i = 0; e->name[0] && i < suffixes->nelts; i++)
            if (under(e->name, APR_ARRAY_IDX(suffixes, i, const char *)))
                res = SM_CRAWL_VERIFIED;
    }
    /* Unknown or expired, and not queued: queue it, when there is room (a
     * later claim queues it otherwise). */
    if ((!e || (!e->pending && now >= e->expires))
        && d->qlen < d->conf.queue_max) {
        e = find(d, addr, 1);
        e->pending = 1;
        apr_cpystrn(d->queue[(d->qhead + d->qlen) % d->conf.queue_max],
                    addr, ADDR_MAX);
        d->qlen++;
    }
    apr_thread_mutex_unlock(d->mutex);
    return res;
}

/* The same address?  Text forms differ (zeros, case, an IPv4-mapped IPv6
 * address): compared as bytes. */
static int same_addr(const char *a, const char *b)
{
    unsigned char x[16], y[16];
    static const unsigned char mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                                             0xff, 0xff};
    int fx = inet_pton(AF_INET, a, x + 12) == 1 ? 4
           : inet_pton(AF_INET6, a, x) == 1 ? 6 : 0;
    int fy = inet_pton(AF_INET, b, y + 12) == 1 ? 4
           : inet_pton(AF_INET6, b, y) == 1 ? 6 : 0;

    if (!fx || !fy)
        return 0;
    if (fx == 4)
        memcpy(x, mapped, sizeof(mapped));
    if (fy == 4)
        memcpy(y, mapped, sizeof(mapped));
    return memcmp(x, y, 16) == 0;
}

/* Reverse, then forward: the confirmed name into name ("" when none), and
 * how long that answer holds. */
static apr_interval_time_t confirm(sm_crawl_dns *d, apr_pool_t *p,
                                   const char *addr, char *name)
{
    apr_array_header_t *addrs = apr_array_make(p, 4, sizeof(const char *));
    char ptr[NAME_MAX_LEN];
    sm_dns_status st;
    int i;

    name[0] = '\0';
    ptr[0] = '\0';
    st = d->conf.reverse(d->conf.baton, addr, ptr, sizeof(ptr));
    if (st == SM_DNS_TIMEOUT)
        return d->conf.ttl_fail;
    if (st != SM_DNS_OK || !ptr[0])
        return d->conf.ttl_none;
    ptr[sizeof(ptr) - 1] = '\0';
    st = d->conf.forward(d->conf.baton, p, ptr, addrs);
    if (st == SM_DNS_TIMEOUT)
        return d->conf.ttl_fail;
    if (st != SM_DNS_OK)
        return d->conf.ttl_none;
    for (i = 0; i < addrs->nelts; i++) {
        const char *a = APR_ARRAY_IDX(addrs, i, const char *);
        if (a && same_addr(a, addr)) {
            apr_cpystrn(name, ptr, NAME_MAX_LEN);
            return d->conf.ttl_ok;
        }
    }
    return d->conf.ttl_none;
}

int sm_crawl_dns_run(sm_crawl_dns *d, int max, apr_time_t now)
{
    apr_pool_t *p;
    int done = 0;

    if (apr_pool_create(&p, NULL) != APR_SUCCESS)
        return 0;
    while (done < max) {
        char addr[ADDR_MAX], name[NAME_MAX_LEN];
        apr_interval_time_t ttl;
        entry *e;

        apr_thread_mutex_lock(d->mutex);
        if (!d->qlen) {
            apr_thread_mutex_unlock(d->mutex);
            break;
        }
        memcpy(addr, d->queue[d->qhead], ADDR_MAX);
        d->qhead = (d->qhead + 1) % d->conf.queue_max;
        d->qlen--;
        apr_thread_mutex_unlock(d->mutex);

        ttl = confirm(d, p, addr, name);
        apr_pool_clear(p);
        done++;

        apr_thread_mutex_lock(d->mutex);
        /* The entry may have been evicted meanwhile: made again. */
        e = find(d, addr, 1);
        apr_cpystrn(e->name, name, sizeof(e->name));
        e->expires = now + ttl;
        e->pending = 0;
        apr_thread_mutex_unlock(d->mutex);
    }
    apr_pool_destroy(p);
    return done;
}

int sm_crawl_dns_cached(sm_crawl_dns *d)
{
    int n;

    apr_thread_mutex_lock(d->mutex);
    n = d->cached;
    apr_thread_mutex_unlock(d->mutex);
    return n;
}

int sm_crawl_dns_queued(sm_crawl_dns *d)
{
    int n;

    apr_thread_mutex_lock(d->mutex);
    n = d->qlen;
    apr_thread_mutex_unlock(d->mutex);
    return n;
}

/* ---- the system's resolver ---------------------------------------------- */

sm_dns_status sm_dns_system_reverse(void *baton, const char *addr,
                                    char *name, apr_size_t len)
{
    apr_pool_t *p;
    apr_sockaddr_t *sa;
    char *host = NULL;
    apr_status_t rv;
    sm_dns_status st = SM_DNS_NONE;

    (void)baton;
    if (apr_pool_create(&p, NULL) != APR_SUCCESS)
        return SM_DNS_TIMEOUT;
    rv = apr_sockaddr_info_get(&sa, addr, APR_UNSPEC, 0, APR_IPV4_ADDR_OK, p);
    if (rv == APR_SUCCESS) {
        /* APR_GETNAMEINFO_NAMEREQD: no name is an error, not the address
         * back in text. */
        rv = apr_getnameinfo(&host, sa, 0);
        if (rv == APR_SUCCESS && host && strcmp(host, addr) != 0) {
            apr_cpystrn(name, host, len);
            st = SM_DNS_OK;
        }
        else if (rv != APR_SUCCESS && APR_STATUS_IS_EAGAIN(rv))
            st = SM_DNS_TIMEOUT;
    }
    apr_pool_destroy(p);
    return st;
}

sm_dns_status sm_dns_system_forward(void *baton, apr_pool_t *p,
                                    const char *name,
                                    apr_array_header_t *addrs)
{
    apr_sockaddr_t *sa, *it;
    apr_status_t rv;

    (void)baton;
    rv = apr_sockaddr_info_get(&sa, name, APR_UNSPEC, 0, 0, p);
    if (rv != APR_SUCCESS)
        return APR_STATUS_IS_EAGAIN(rv) ? SM_DNS_TIMEOUT : SM_DNS_NONE;
    for (it = sa; it; it = it->next) {
        char *ip;
        if (apr_sockaddr_ip_get(&ip, it) == APR_SUCCESS)
            APR_ARRAY_PUSH(addrs, const char *) = ip;
    }
    return SM_DNS_OK;
}
