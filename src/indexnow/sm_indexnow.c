/* SPDX-License-Identifier: Apache-2.0 */
/* sm_indexnow.c: the IndexNow sender (see sm_indexnow.h). */
#include "indexnow/sm_indexnow.h"
#include "record/sm_memory.h"

#include <apr_lib.h>
#include <apr_strings.h>
#include <apr_thread_cond.h>
#include <apr_thread_mutex.h>
#include <apr_thread_proc.h>
#include <curl/curl.h>
#include <string.h>

#include "util/sm_url.h"

/* How long one POST may take: connecting, and in all. */
#define CONNECT_TIMEOUT_S  10
#define TOTAL_TIMEOUT_S    30
/* A claim outlives the longest POST: should the sender die between sending
 * and recording it, another takes the batch over after the lease (and
 * sends that one batch again: the only case where a URL goes twice). */
#define CLAIM_LEASE        apr_time_from_sec(TOTAL_TIMEOUT_S + 30)
/* Retries after 429, 5xx or no answer wait the interval, then twice as
 * long each time, up to an hour. */
#define BACKOFF_MAX        apr_time_from_sec(3600)
/* How often the thread looks for work, at most. */
#define POLL_MAX           apr_time_from_sec(1)
#define POLL_MIN           apr_time_from_msec(100)
/* What of an answer's body is kept for the log and sitemapctl stats. */
#define REASON_MAX         300

const char *sm_indexnow_endpoint_problem(apr_pool_t *p, const char *url)
{
    CURLU *u = curl_url();
    char *scheme = NULL, *host = NULL;
    const char *why = NULL;

    (void)p;
    if (!u)
        return "out of memory";
    /* libcurl's own parser: the URL libcurl will be given. */
    if (curl_url_set(u, CURLUPART_URL, url, 0) != CURLUE_OK
        || curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) != CURLUE_OK
        || curl_url_get(u, CURLUPART_HOST, &host, 0) != CURLUE_OK || !*host)
        why = "it is not an absolute URL with a host";
    else if (strcmp(scheme, "https") && strcmp(scheme, "http"))
        why = "its scheme is neither https nor http";
    curl_free(scheme);
    curl_free(host);
    curl_url_cleanup(u);
    return why;
}

struct sm_indexnow {
    apr_pool_t *pool;
    const char *db_path;            /* a file, or a URI: what is opened */
    const char *db_shown;           /* db_path, a password masked */
    int busy_timeout_ms;
    const sm_logger *log;
    apr_array_header_t *sites;      /* sm_indexnow_site */
    sm_store *store;                /* opened on first use */
    apr_pool_t *thread_pool;        /* the sender's (sm_private_pool) */
    apr_pool_t *store_pool;
    apr_time_t store_failed;        /* last open failure, for the log */
    apr_time_t claim_failed;        /* likewise for a failed claim */
    int unsupported_said;           /* the backend has no IndexNow */
    apr_interval_time_t poll;
    apr_thread_mutex_t *lock;
    apr_thread_cond_t *wake;
    apr_thread_t *thread;
    int running;
    volatile int stopping;
};

apr_status_t sm_indexnow_global_init(void)
{
    return curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK
           ? APR_SUCCESS : APR_EGENERAL;
}

static apr_status_t indexnow_cleanup(void *data)
{
    sm_indexnow_stop(data);
    return APR_SUCCESS;
}

apr_status_t sm_indexnow_create(sm_indexnow **out, apr_pool_t *p,
                                const char *db_path, int busy_timeout_ms,
                                const sm_logger *log)
{
    sm_indexnow *in = apr_pcalloc(p, sizeof(*in));
    apr_status_t rv;

    in->pool = p;
    in->db_path = apr_pstrdup(p, db_path);
    in->db_shown = sm_uri_mask(p, db_path);
    in->busy_timeout_ms = busy_timeout_ms;
    in->log = log;
    in->sites = apr_array_make(p, 2, sizeof(sm_indexnow_site));
    in->poll = POLL_MAX;
    if ((rv = apr_thread_mutex_create(&in->lock, APR_THREAD_MUTEX_DEFAULT, p))
        || (rv = apr_thread_cond_create(&in->wake, p))
        || (rv = sm_private_pool(&in->thread_pool, p))
        || (rv = apr_pool_create(&in->store_pool, in->thread_pool)))
        return rv;
    apr_pool_pre_cleanup_register(p, in, indexnow_cleanup);
    *out = in;
    return APR_SUCCESS;
}

void sm_indexnow_add_site(sm_indexnow *in, const sm_indexnow_site *site)
{
    sm_indexnow_site *s = apr_array_push(in->sites);

    *s = *site;
    s->base = apr_pstrdup(in->pool, site->base);
    s->key = apr_pstrdup(in->pool, site->key);
    s->endpoint = apr_pstrdup(in->pool, site->endpoint);
    /* Poll often enough for the shortest interval. */
    if (site->interval / 2 < in->poll)
        in->poll = site->interval / 2 > POLL_MIN ? site->interval / 2
                                                 : POLL_MIN;
}

typedef struct {
    char buf[REASON_MAX + 1];
    apr_size_t len;
} answer;

static size_t keep_answer(char *data, size_t size, size_t n, void *baton)
{
    answer *a = baton;
    size_t len = size * n, room = REASON_MAX - a->len;

    memcpy(a->buf + a->len, data, len < room ? len : room);
    a->len += len < room ? len : room;
    a->buf[a->len] = '\0';
    return len;
}

/* libcurl calls it at least once a second: a stop aborts the POST. */
static int check_stop(void *baton, curl_off_t dltotal, curl_off_t dlnow,
                      curl_off_t ultotal, curl_off_t ulnow)
{
    (void)dltotal; (void)dlnow; (void)ultotal; (void)ulnow;
    return ((sm_indexnow *)baton)->stopping;
}

/* The answer as one printable line. */
static const char *one_line(apr_pool_t *p, const char *s)
{
    char *out = apr_pstrdup(p, s), *c;

    for (c = out; *c; c++)
        if (!apr_isprint(*c))
            *c = ' ';
    return out;
}

/* POST body to the endpoint: the HTTP status, 0 when none came (reason
 * says why). */
static int post(sm_indexnow *in, apr_pool_t *p, const sm_indexnow_site *site,
                const char *body, const char **reason)
{
    CURL *h = curl_easy_init();
    struct curl_slist *headers = NULL;
    char errbuf[CURL_ERROR_SIZE] = "";
    answer a;
    long status = 0;
    CURLcode rc;

    a.len = 0;
    a.buf[0] = '\0';
    if (!h) {
        *reason = "cannot set up libcurl";
        return 0;
    }
    headers = curl_slist_append(headers,
                                "Content-Type: application/json; "
                                "charset=utf-8");
    curl_easy_setopt(h, CURLOPT_URL, site->endpoint);
    curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
    curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE,
                     (curl_off_t)strlen(body));
    curl_easy_setopt(h, CURLOPT_USERAGENT, "mod_sitemap (IndexNow)");
    curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 1L);
    curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 2L);
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT, (long)CONNECT_TIMEOUT_S);
    curl_easy_setopt(h, CURLOPT_TIMEOUT, (long)TOTAL_TIMEOUT_S);
    /* Threads: no signals for timeouts. */
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, check_stop);
    curl_easy_setopt(h, CURLOPT_XFERINFODATA, in);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, keep_answer);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &a);
    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
    rc = curl_easy_perform(h);
    if (rc == CURLE_OK)
        curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
    *reason = rc != CURLE_OK
            ? apr_pstrdup(p, *errbuf ? errbuf : curl_easy_strerror(rc))
            : one_line(p, a.buf);
    curl_slist_free_all(headers);
    curl_easy_cleanup(h);
    return (int)status;
}

/* What IndexNow's documentation says each refusal means. */
static const char *refusal_meaning(int status)
{
    switch (status) {
    case 400: return "bad request: the submission's format is invalid";
    case 403: return "forbidden: the key is not valid (the key file is not "
                     "reachable at keyLocation, or holds another key)";
    case 422: return "unprocessable: URLs do not belong to the host, or the "
                     "key does not match the protocol's schema";
    default:  return "refused";
    }
}

static sm_store *open_store(sm_indexnow *in)
{
    char err[256];
    apr_time_t now = apr_time_now();

    if (in->store && sm_store_is_current(in->store))
        return in->store;
    if (in->store) {
        sm_store_close(in->store);
        in->store = NULL;
        apr_pool_clear(in->store_pool);
    }
    if (sm_store_open_stoppable(&in->store, in->store_pool, in->db_path, 0,
                                in->busy_timeout_ms, in->log, &in->stopping,
                                err, sizeof(err)) != APR_SUCCESS) {
        /* At most once a minute. */
        if (now - in->store_failed > apr_time_from_sec(60)) {
            sm_log(in->log, SM_LOG_WARN, 0, "IndexNow: cannot open the store "
                   "'%s' (%s); pending URLs wait", in->db_shown, err);
            in->store_failed = now;
        }
        in->store = NULL;
    }
    return in->store;
}

static void send_site(sm_indexnow *in, sm_store *st, apr_pool_t *p,
                      const sm_indexnow_site *site, int *claimed)
{
    sm_indexnow_batch batch;
    sm_indexnow_result res;
    const char *reason = NULL;
    apr_time_t now = apr_time_now();
    apr_status_t rv;
    int status, n;

    rv = sm_store_indexnow_claim(st, p, site->base, now, CLAIM_LEASE,
                                 &batch);
    if (rv == APR_ENOTIMPL) {
        if (!in->unsupported_said)
            sm_log(site->log, SM_LOG_ERR, 0, "IndexNow %s: the store backend "
                   "%s does not support IndexNow yet: nothing is submitted",
                   site->base, st->ops->name);
        in->unsupported_said = 1;
        return;
    }
    if (rv != APR_SUCCESS) {
        /* A store fault: at most once a minute in the log. */
        if (now - in->claim_failed > apr_time_from_sec(60)) {
            sm_log(site->log, SM_LOG_WARN, 0, "IndexNow %s: cannot claim "
                   "pending URLs: %s; they wait", site->base,
                   sm_store_error(st));
            in->claim_failed = now;
        }
        return;
    }
    if (!(n = batch.items->nelts))
        return;
    (*claimed)++;
    memset(&res, 0, sizeof(res));
    res.overflow_logged = batch.overflow;
    if (batch.overflow > batch.overflow_logged)
        sm_log(site->log, SM_LOG_WARN, 0, "IndexNow %s: %" APR_INT64_T_FMT
               " changes were not queued: the backlog holds at most %d URLs "
               "(%" APR_INT64_T_FMT " in all so far)", site->base,
               batch.overflow - batch.overflow_logged,
               SM_INDEXNOW_BACKLOG_MAX, batch.overflow);
    status = post(in, p, site, sm_indexnow_json(p, site, batch.items),
                  &reason);
    res.now = apr_time_now();
    res.status = status;
    res.reason = reason;
    if (status >= 200 && status < 300) {
        res.outcome = SM_INDEXNOW_SENT;
        res.next_try = res.now + site->interval;
        sm_log(site->log, SM_LOG_INFO, 0, "IndexNow %s: %d URLs submitted to "
               "%s (HTTP %d)", site->base, n, site->endpoint, status);
    }
    else if (status == 0 || status == 429 || status >= 500) {
        res.outcome = SM_INDEXNOW_RETRY;
        res.backoff = batch.backoff ? batch.backoff * 2 : site->interval;
        if (res.backoff < apr_time_from_sec(1))
            res.backoff = apr_time_from_sec(1);
        if (res.backoff > BACKOFF_MAX)
            res.backoff = BACKOFF_MAX;
        /* A stop aborted the POST: another process may take it now. */
        res.next_try = in->stopping ? 0 : res.now + res.backoff;
        if (!in->stopping)
            sm_log(site->log, SM_LOG_WARN, 0, "IndexNow %s: %d URLs not "
                   "accepted by %s (%s%s%s); retrying in %" APR_TIME_T_FMT
                   "s", site->base, n, site->endpoint,
                   status ? apr_psprintf(p, "HTTP %d", status)
                          : "no answer",
                   *reason ? ": " : "", reason, apr_time_sec(res.backoff));
    }
    else {
        res.outcome = SM_INDEXNOW_DROPPED;
        res.next_try = res.now + site->interval;
        sm_log(site->log, SM_LOG_ERR, 0, "IndexNow %s: %s answered HTTP %d, "
               "%s%s%s; %d URLs dropped (not retried)", site->base,
               site->endpoint, status, refusal_meaning(status),
               *reason ? ": " : "", reason, n);
    }
    if (sm_store_indexnow_finish(st, site->base, &batch, &res)
        != APR_SUCCESS)
        sm_log(site->log, SM_LOG_WARN, 0, "IndexNow %s: cannot record the "
               "answer (%s); the batch may be sent again after %" 
               APR_TIME_T_FMT "s", site->base, sm_store_error(st),
               apr_time_sec(CLAIM_LEASE));
}

int sm_indexnow_run_once(sm_indexnow *in)
{
    apr_pool_t *p;
    sm_store *st;
    int i, claimed = 0;

    if (!(st = open_store(in)))
        return 0;
    if (apr_pool_create(&p, in->thread_pool) != APR_SUCCESS)
        return 0;
    for (i = 0; i < in->sites->nelts && !in->stopping; i++)
        send_site(in, st, p, &APR_ARRAY_IDX(in->sites, i, sm_indexnow_site),
                  &claimed);
    apr_pool_destroy(p);
    return claimed;
}

static void *APR_THREAD_FUNC sender_main(apr_thread_t *thd, void *data)
{
    sm_indexnow *in = data;

    apr_thread_mutex_lock(in->lock);
    while (!in->stopping) {
        apr_thread_mutex_unlock(in->lock);
        sm_indexnow_run_once(in);
        apr_thread_mutex_lock(in->lock);
        if (!in->stopping)
            apr_thread_cond_timedwait(in->wake, in->lock, in->poll);
    }
    apr_thread_mutex_unlock(in->lock);
    apr_thread_exit(thd, APR_SUCCESS);
    return NULL;
}

apr_status_t sm_indexnow_start(sm_indexnow *in)
{
    apr_threadattr_t *attr;
    apr_status_t rv;

    if (in->running || !in->sites->nelts)
        return APR_SUCCESS;
    if ((rv = apr_threadattr_create(&attr, in->pool)) != APR_SUCCESS)
        return rv;
    apr_threadattr_stacksize_set(attr, 256 * 1024);
    rv = apr_thread_create(&in->thread, attr, sender_main, in, in->pool);
    if (rv == APR_SUCCESS)
        in->running = 1;
    return rv;
}

void sm_indexnow_stop(sm_indexnow *in)
{
    apr_status_t rv;

    /* A wait on a hung database ends within the busy timeout from now,
     * also in the writer, which stops after this sender. */
    sm_store_stop_all();
    apr_thread_mutex_lock(in->lock);
    in->stopping = 1;
    apr_thread_cond_broadcast(in->wake);
    apr_thread_mutex_unlock(in->lock);
    if (in->running) {
        apr_thread_join(&rv, in->thread);
        in->running = 0;
    }
    if (in->store) {
        sm_store_close(in->store);
        in->store = NULL;
    }
}
