/* SPDX-License-Identifier: Apache-2.0 */
/* mod_sitemap_record.h: what the recording side of the glue shares
 * (mod_sitemap_record.c, mod_sitemap_decide.c, mod_sitemap_head.c,
 * mod_sitemap_known.c, mod_sitemap_why.c, mod_sitemap_disallow.c): the
 * head filter's note for log_transaction, the verdict notes, the
 * robots.txt rules' questions. */
#ifndef MOD_SITEMAP_RECORD_H
#define MOD_SITEMAP_RECORD_H

#include "mod_sitemap.h"

/* What the head filter (mod_sitemap_head.c) leaves for log_transaction,
 * in the final request's request_config.  No note, or a note in state
 * SITEMAP_HEAD_NONE (made for the facts below by an earlier hook): the
 * filter did not run, and the response is judged by its headers. */
typedef enum {
    SITEMAP_HEAD_NONE = 0,      /* the filter has not run */
    SITEMAP_HEAD_REPEAT = 1,    /* a repeat when the body began: not
                                   read; by headers if filters after the
                                   reader made it new */
    SITEMAP_HEAD_UNREAD,        /* not read (not a 200 of a listed type
                                   then, or the body broke off): never
                                   recorded from this response */
    SITEMAP_HEAD_UNREADABLE,    /* a Content-Encoding: by headers */
    SITEMAP_HEAD_READ,          /* read: head says */
    SITEMAP_HEAD_SKIPPED        /* not inserted: the same file as at a
                                   repeat before (sitemap_head_known) */
} sitemap_head_state;

/* The response headers the rules and the change read. */
typedef struct {
    const char *last_modified;  /* headers_out's first */
    const char *etag;           /* headers_out's first */
    const char *x_robots_tag;   /* every value of both tables, joined */
    const char *cache_control;  /* likewise */
} sitemap_response_headers;

typedef struct {
    sitemap_head_state state;
    struct sm_head *scanner;    /* SITEMAP_HEAD_READ */
    /* A response without validators of its own (no ETag, no real
     * Last-Modified) is read to its end for its content's fingerprint
     * (sm_fingerprint): never a repeat before it is read. */
    int fingerprinting;         /* no ETag: fingerprint when read */
    struct sm_fingerprint *fp;  /* NULL: not fingerprinted */
    apr_uint64_t fingerprint;   /* its value once the body ended (0 till
                                   then: a broken body is not judged) */
    apr_uint64_t raw;           /* the raw facts' hash when the body began
                                   (sm_recorder_raw) */
    /* The headers hashed then: when log_transaction finds the same ones,
     * a repeat's answer stands without hashing them again. */
    sitemap_response_headers headers;
    /* What every hook of the request would otherwise compute again, kept
     * here by whichever asks first: sitemap_site's answer (when not NULL),
     * the raw facts' first part (0: not yet) for first_site under the
     * robots.txt rules' first_generation. */
    const sm_site_conf *site;
    const sm_site_conf *first_site;
    apr_uint64_t first;
    apr_uint32_t first_generation;
    /* A repeat's headers_out entries when the body began (NULL: not
     * kept), so that log_transaction sees them unchanged without reading
     * the headers again. */
    int nentries;
    const apr_table_entry_t *entries;
    /* One of the module's own answers, whose Vary the Vary filter makes
     * each field once (sitemap_decode_etags, mod_sitemap_http.c). */
    int vary;
} sitemap_head_note;

/* r's note (above), made empty (SITEMAP_HEAD_NONE) when it has none. */
sitemap_head_note *sitemap_request_note(request_rec *r);

/* For the head filter, when the body begins: 1 when log_transaction would
 * decide this response (a main GET answered 200 with a listed type), the
 * rules would record it as far as its URL and credentials tell, and it is
 * not a repeat of what the recorder knows (*repeat set when it is);
 * note->raw and note->headers are the raw facts' hash and headers then. */
int sitemap_record_wants_head(request_rec *r, int *repeat,
                              sitemap_head_note *note);

/* The static files whose last response was a confirmed repeat
 * (mod_sitemap_known.c).  known_file: at insert_filter, is r's file (and
 * content type) the one of a repeat before, in n's slot?  Then the filter
 * is left out (SITEMAP_HEAD_SKIPPED).  remember: a repeat confirmed by
 * log_transaction (note: its headers and raw facts).  repeat: at
 * log_transaction, are h the headers of the slot's repeat (the same type
 * still)?  Then *raw is its raw facts' hash, for the recorder's memory.
 * forget: the slot no longer stands (a skipped response was no repeat). */
int sitemap_known_file(const request_rec *r, const sitemap_head_note *n);
void sitemap_known_remember(const request_rec *last,
                            const sitemap_head_note *note);
int sitemap_known_repeat(const request_rec *last, const sitemap_head_note *n,
                         const sitemap_response_headers *h,
                         apr_uint64_t *raw);
void sitemap_known_forget(const sitemap_head_note *note);
/* Could sitemap_head_read_file read last's head from its file (no filter
 * that makes the body; no Content-Encoding but mod_deflate's gzip of a
 * file that is not encoded itself)? */
int sitemap_head_readable(const request_rec *last);
/* Is there a filter that may make r's body (INCLUDES, SUBSTITUTE, SED,
 * an ext_filter or a Lua filter: AP_FTYPE_RESOURCE) among its output
 * filters?  Such a body's ETag and Last-Modified are the file's, not the
 * body's: it repeats only with the same content (sm_fingerprint). */
int sitemap_body_made_by_filters(const request_rec *r);
/* A response whose filter was left out (SITEMAP_HEAD_SKIPPED) that was no
 * repeat after all: its head read from its file (h: the final headers) as
 * the filter would have read it, the note made SITEMAP_HEAD_READ; 0 when
 * that cannot be (a body to fingerprint, filters that make the body, a
 * file that is encoded itself, a file changed since it was served).  A
 * gzip Content-Encoding mod_deflate made from the plain file is no
 * obstacle. */
int sitemap_head_read_file(request_rec *last, sitemap_head_note *note,
                           const sitemap_response_headers *h);

/* A response the rules left out (why; detail: what it names, NULL:
 * nothing): its verdict is noted for sitemapctl why, unless this process
 * noted the same within the hour (mod_sitemap_why.c).  url: the URL as
 * stored, NULL to normalise resp->target; refused_early: why is
 * sm_rules_worth_deciding's (only some of its reasons are noted). */
/* Was r (its final request) answered by one of the module's own handlers
 * (the status page, its metrics, robots.txt)?  Their verdicts are not
 * kept: no one asks why they are not listed. */
int sitemap_own_answer(const request_rec *r);

/* Crawl coverage (mod_sitemap_crawl.c): a request whose User-Agent (ua)
 * passed the pre-check, matched, verified, counted and handed to the
 * recorder; and the URL it names (mod_sitemap_record.c). */
void sitemap_crawl_fetch(request_rec *r, sitemap_server_conf *conf,
                         const char *ua);
const char *sitemap_crawl_url(request_rec *r, const sitemap_server_conf *conf,
                              const sm_site_conf *site, request_rec *orig,
                              request_rec *last, int status);
void sitemap_note_verdict(request_rec *r, const sitemap_server_conf *conf,
                          const sm_site_conf *site, const sm_response *resp,
                          const char *url, const char *why,
                          const char *detail, int refused_early);

/* The site's own robots.txt rules (mod_sitemap_disallow.c). */
#define SITEMAP_DISALLOW_CHECK apr_time_from_sec(5)
/* Moves whenever this process's rules of any site change: folded into the
 * raw facts, so every response is decided again once. */
extern volatile apr_uint32_t sitemap_disallow_generation;
/* Look whether the site's robots.txt file changed (at most every
 * SITEMAP_DISALLOW_CHECK). */
void sitemap_disallow_refresh(request_rec *r, sitemap_server_conf *conf,
                              const sm_site_conf *site);
/* 1 when robots.txt disallows url ("/path?query") for "*", Googlebot or
 * Bingbot, with *why naming the line and the crawler. */
int sitemap_disallowed(request_rec *r, sitemap_server_conf *conf,
                       const sm_site_conf *site, const char *url,
                       const char **why);

/* Shared by the log hook (mod_sitemap_record.c) and the decision
 * (mod_sitemap_decide.c).  all_values: every value of a response header
 * of last, from headers_out and (errs) err_headers_out, comma-joined,
 * NULL when absent.  real_last_modified: a Last-Modified that is a real
 * modification time (not now, nor later), else 0.  client_certificate:
 * did the client present a TLS certificate (a credential like a user)? */
const char *sitemap_all_values(const request_rec *last, int errs,
                               const char *name);
apr_time_t sitemap_real_last_modified(const char *value, apr_time_t now);
int sitemap_client_certificate(request_rec *r);
/* Path info after what served the final request (the URL the client
 * asked for may have had some before a rewrite took it to a front
 * controller). */
static APR_INLINE int sitemap_final_path_info(const request_rec *last)
{
    return last->path_info && *last->path_info;
}
/* A response that is no repeat: the rules decide, and a record or forget
 * is handed to the recorder (raw: its raw facts' hash; note: the head
 * filter's, NULL when none).  OK, or DECLINED when ignored. */
int sitemap_decide(request_rec *r, sitemap_server_conf *conf,
                   const sm_site_conf *site, request_rec *orig,
                   request_rec *last, sm_response *resp,
                   const sitemap_response_headers *h, apr_uint64_t raw,
                   const sitemap_head_note *note);

#endif
