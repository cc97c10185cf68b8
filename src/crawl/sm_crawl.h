/* SPDX-License-Identifier: Apache-2.0 */
/* sm_crawl.h: the crawlers a site tracks (SitemapCrawler), which of them
 * a request claims to be, and whether its client address bears it out.
 *
 * A crawler has a name, a User-Agent pattern (PCRE2, case-insensitive) and
 * sources that verify a claim: files of the engine's published address
 * ranges (sm_crawl_ranges, below) and reverse-then-forward DNS
 * confirmation against host name suffixes (sm_crawl_dns, below).
 *
 * The request path: sm_crawl_precheck (a few dozen instructions: no regex,
 * no allocation) answers 0 for nearly every ordinary visitor; only when it
 * answers 1 does sm_crawl_match run the patterns, and only for a claim
 * does sm_crawl_verify look at the address (ranges in memory, the DNS
 * cache; never a lookup).  Everything here is safe to call from many
 * threads once sm_crawl_list_finish has run. */
#ifndef SM_CRAWL_H
#define SM_CRAWL_H

#include <apr_network_io.h>
#include <apr_pools.h>
#include <apr_tables.h>
#include <apr_time.h>

#include "record/sm_rules.h"

/* Bounds of the directive and of a ranges file. */
#define SM_CRAWL_NAME_MAX      32        /* bytes of a crawler's name */
#define SM_CRAWL_MAX           64        /* crawlers a server tracks */
#define SM_CRAWL_SOURCES_MAX   8         /* sources a crawler has */
#define SM_CRAWL_SUFFIXES_MAX  8         /* suffixes a dns: source has */
#define SM_CRAWL_FILE_MAX      (4 * 1024 * 1024) /* bytes of a ranges file */
#define SM_CRAWL_PREFIXES_MAX  65536     /* prefixes of a ranges file */
#define SM_CRAWL_JSON_DEPTH    16        /* nesting a ranges file may have */
/* How often a ranges file is looked at (stat) for a change, at most. */
#define SM_CRAWL_RECHECK       apr_time_from_sec(5)

/* What a crawler's claim came to. */
typedef enum {
    SM_CRAWL_UNVERIFIED = 0,    /* the address is none of its sources' */
    SM_CRAWL_VERIFIED,          /* a source vouches for the address */
    SM_CRAWL_PENDING            /* only DNS can say, and it has not yet */
} sm_crawl_result;

/* ---- address ranges (sm_crawl_ranges.c) --------------------------------- */

typedef struct sm_crawl_ranges sm_crawl_ranges;

/* Parse the JSON text (len bytes) Google and Bing publish:
 * {"prefixes":[{"ipv4Prefix":"66.249.64.0/27"},
 *              {"ipv6Prefix":"2001:4860:4801:10::/64"}, ...], ...}.
 * Strict JSON (RFC 8259, UTF-8, at most SM_CRAWL_JSON_DEPTH deep), other
 * members ignored, at most SM_CRAWL_PREFIXES_MAX prefixes, each a valid
 * address of its family with a prefix length it allows and no host bits
 * set.  The ranges (allocated from p), or NULL and *err (from p) saying
 * what is wrong and where (the byte offset). */
sm_crawl_ranges *sm_crawl_ranges_parse(apr_pool_t *p, const char *json,
                                       apr_size_t len, const char **err);
/* Does the address fall in a range?  An IPv4-mapped IPv6 address
 * (::ffff:a.b.c.d) is matched as the IPv4 address. */
int sm_crawl_ranges_has(const sm_crawl_ranges *r, const apr_sockaddr_t *sa);
/* The same for an address in text ("66.249.66.1", "2001:db8::1"). */
int sm_crawl_ranges_has_text(const sm_crawl_ranges *r, const char *addr);
int sm_crawl_ranges_count(const sm_crawl_ranges *r);

/* A ranges file, re-read when it changes.  Opened without following a
 * symbolic link, a regular file of at most SM_CRAWL_FILE_MAX bytes. */
typedef struct sm_crawl_file sm_crawl_file;

/* Read path now (at start-up: a file that cannot be read or parsed is an
 * error, *err says why).  The file's state lives in p. */
sm_crawl_file *sm_crawl_file_open(apr_pool_t *p, const char *path,
                                  apr_time_t now, const char **err);
/* At most once every SM_CRAWL_RECHECK by the caller's clock (now): look at
 * the file's inode, size and modification time, and read it again when one
 * changed.  A file that became unreadable or invalid keeps the ranges read
 * last (1 is returned and *err, from p, says why, for the log); 0: nothing
 * to say (unchanged, or read again). */
int sm_crawl_file_refresh(sm_crawl_file *f, apr_pool_t *p, apr_time_t now,
                          const char **err);
/* Does the file's current ranges hold the address? */
int sm_crawl_file_has(sm_crawl_file *f, const apr_sockaddr_t *sa);
/* How many times the file was read successfully, and its prefixes now. */
int sm_crawl_file_reads(sm_crawl_file *f);
int sm_crawl_file_prefixes(sm_crawl_file *f);
const char *sm_crawl_file_path(const sm_crawl_file *f);

/* ---- DNS confirmation (sm_crawl_dns.c) ---------------------------------- */

/* What a lookup came to. */
typedef enum {
    SM_DNS_OK = 0,
    SM_DNS_NONE,        /* no such name or address: a definite answer */
    SM_DNS_TIMEOUT      /* no answer in time, or a temporary failure */
} sm_dns_status;

/* The lookups, injected (unit tests give their own answers): the reverse
 * lookup writes the address's name (PTR) into name (len bytes, NUL
 * terminated); the forward lookup pushes the name's addresses (text,
 * allocated from p) onto addrs. */
typedef sm_dns_status sm_dns_reverse_fn(void *baton, const char *addr,
                                        char *name, apr_size_t len);
typedef sm_dns_status sm_dns_forward_fn(void *baton, apr_pool_t *p,
                                        const char *name,
                                        apr_array_header_t *addrs);
/* The system's resolver (getnameinfo, getaddrinfo through APR). */
sm_dns_status sm_dns_system_reverse(void *baton, const char *addr,
                                    char *name, apr_size_t len);
sm_dns_status sm_dns_system_forward(void *baton, apr_pool_t *p,
                                    const char *name,
                                    apr_array_header_t *addrs);

typedef struct {
    sm_dns_reverse_fn *reverse;
    sm_dns_forward_fn *forward;
    void *baton;
    int cache_max;                  /* addresses cached, at most */
    int queue_max;                  /* addresses waiting, at most */
    apr_interval_time_t ttl_ok;     /* a confirmed name */
    apr_interval_time_t ttl_none;   /* a definite no */
    apr_interval_time_t ttl_fail;   /* a timeout: asked again after it */
} sm_dns_conf;

/* Defaults: 4096 cached, 256 waiting, 1 day, 1 hour, 1 minute. */
void sm_dns_conf_default(sm_dns_conf *c);

/* A process's DNS confirmations: a bounded cache and a bounded queue of
 * addresses to look up, behind a mutex.  The request path only reads the
 * cache and puts addresses on the queue (sm_crawl_dns_check); a thread
 * that may wait (the writer, a helper) drains the queue (sm_crawl_dns_run). */
typedef struct sm_crawl_dns sm_crawl_dns;

/* NULL and *err on failure (no mutex). */
sm_crawl_dns *sm_crawl_dns_create(apr_pool_t *p, const sm_dns_conf *conf,
                                  const char **err);
/* What the cache says of addr for the suffixes (each "example.com":
 * the name itself or any name under it): VERIFIED when the address's
 * forward-confirmed name is under one, UNVERIFIED when it is not or has
 * none, PENDING when the cache has no answer yet.  An address unknown, or
 * whose answer expired (that answer is still given meanwhile), is queued
 * for a lookup, unless the queue is full: then a later claim queues it.
 * No lookup, no allocation. */
sm_crawl_result sm_crawl_dns_check(sm_crawl_dns *d, const char *addr,
                                   const apr_array_header_t *suffixes,
                                   apr_time_t now);
/* Look up at most max queued addresses (reverse, then forward; may wait
 * for the resolver) and cache what they came to; returns how many.  One
 * thread at a time; the lookups run without the mutex held. */
int sm_crawl_dns_run(sm_crawl_dns *d, int max, apr_time_t now);
/* Addresses cached and queued now (for the status page and tests). */
int sm_crawl_dns_cached(sm_crawl_dns *d);
int sm_crawl_dns_queued(sm_crawl_dns *d);

/* ---- crawlers (sm_crawl.c) ---------------------------------------------- */

typedef struct {
    const char *path;               /* a ranges file, or NULL */
    sm_crawl_file *file;            /* once sm_crawl_list_open has run */
    apr_array_header_t *suffixes;   /* const char *: a dns: source */
} sm_crawl_source;

typedef struct {
    const char *name;
    const char *pattern;
    sm_regex *ua;
    apr_array_header_t *sources;    /* sm_crawl_source */
    /* The literal every match of the pattern holds (lowercase; "" when
     * none can be known) and the pre-check's needle taken from it. */
    const char *literal;
} sm_crawler;

typedef struct sm_crawl_list sm_crawl_list;

sm_crawl_list *sm_crawl_list_make(apr_pool_t *p);
/* SitemapCrawler NAME UA-REGEX SOURCE...: add a crawler.  NULL on
 * success, else the error (from p), naming the directive, the value and
 * what is allowed.  A SOURCE is "dns:SUFFIX[,SUFFIX...]" or the path of a
 * ranges file (absolute; read by sm_crawl_list_open). */
const char *sm_crawl_add(sm_crawl_list *l, apr_pool_t *p, int argc,
                         char *const *argv);
int sm_crawl_count(const sm_crawl_list *l);
const sm_crawler *sm_crawl_get(const sm_crawl_list *l, int i);
/* Read the ranges files (start-up); NULL, or the error (from p) naming
 * the directive, the crawler and the file. */
const char *sm_crawl_list_open(sm_crawl_list *l, apr_pool_t *p,
                               apr_time_t now);
/* Look at the ranges files for changes (sm_crawl_file_refresh); the
 * problems found (const char *, from p) pushed onto errs. */
void sm_crawl_list_refresh(sm_crawl_list *l, apr_pool_t *p, apr_time_t now,
                           apr_array_header_t *errs);

/* May this User-Agent be any crawler's?  0: certainly not (no regex
 * needed); 1: ask sm_crawl_match.  NULL: 0. */
int sm_crawl_precheck(const sm_crawl_list *l, const char *ua);
/* The request path's whole question, in one call: the first field named
 * User-Agent (ASCII case-insensitively, as apr_table_get answers) among
 * fields (apr_table_elts of a request's headers_in), when
 * sm_crawl_precheck says it may be a crawler's; NULL otherwise (no such
 * field, or an ordinary visitor). */
const char *sm_crawl_visitor(const sm_crawl_list *l,
                             const apr_array_header_t *fields);
/* The first crawler whose pattern matches ua (run the pre-check first),
 * or NULL. */
const sm_crawler *sm_crawl_match(const sm_crawl_list *l, const char *ua);
/* Does the client address bear the crawler out?  dns may be NULL (a
 * dns: source is then PENDING for ever).  VERIFIED when any source
 * vouches; PENDING when none does and a dns: source does not know yet. */
sm_crawl_result sm_crawl_verify(const sm_crawler *c, sm_crawl_dns *dns,
                                const apr_sockaddr_t *sa, apr_time_t now);

/* The literal a pattern's every match holds, lowercase ASCII ("" when
 * none can be told: an alternation at the top, an option that changes how
 * the pattern reads); exposed for the tests. */
const char *sm_crawl_required_literal(apr_pool_t *p, const char *pattern);

#endif
