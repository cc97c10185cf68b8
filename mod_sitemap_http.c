/* SPDX-License-Identifier: Apache-2.0 */
/* mod_sitemap_http.c: what every output of the module (the documents,
 * the views, robots.txt) needs from HTTP whatever stands in front of it:
 * validators that survive encoding filters (src/util/sm_etag.h), and a Vary
 * that mod_cache_disk keys alike on the 200 and the 304. */
#include "mod_sitemap.h"

#include "http_core.h"
#include "http_protocol.h"
#include "http_request.h"

#include <apr_strings.h>

#include "mod_sitemap_record.h"
#include "util/sm_etag.h"

#define VARY_FILTER "SITEMAP_VARY"
/* The first request of r's chain keeps the client's If-None-Match. */
#define INM_NOTE "sitemap-if-none-match"

static ap_filter_rec_t *vary_filter_handle;

static request_rec *first_of(request_rec *r)
{
    while (r->prev)
        r = r->prev;
    return r;
}

void sitemap_decode_etags(request_rec *r)
{
    static const char *const headers[] = { "If-None-Match", "If-Match" };
    const char *inm = apr_table_get(r->headers_in, "If-None-Match");
    request_rec *first = first_of(r);
    int i;

    if (inm && !apr_table_get(first->notes, INM_NOTE))
        apr_table_setn(first->notes, INM_NOTE, inm);
    for (i = 0; i < 2; i++) {
        const char *v = sm_etag_list_decoded(r->pool, apr_table_get(
                                                 r->headers_in, headers[i]));
        if (v)
            apr_table_setn(r->headers_in, headers[i], v);
    }
    sitemap_request_note(r)->vary = 1;
}

void sitemap_etag_as_sent(request_rec *r)
{
    const char *sent = sm_etag_encoded_in(r->pool,
                           apr_table_get(first_of(r)->notes, INM_NOTE),
                           apr_table_get(r->headers_out, "ETag"));
    if (sent)
        apr_table_setn(r->headers_out, "ETag", sent);
}

/* After the encoding filters, before mod_cache's save filter: each field
 * name of Vary once (sm_vary_dedup). */
static apr_status_t vary_filter(ap_filter_t *f, apr_bucket_brigade *bb)
{
    request_rec *r = f->r;
    const char *v = sm_vary_dedup(r->pool, apr_table_get(r->headers_out,
                                                         "Vary"));
    if (v)
        apr_table_setn(r->headers_out, "Vary", v);
    ap_remove_output_filter(f);
    return ap_pass_brigade(f->next, bb);
}

/* Last, so that the filter comes after the encoding filters of the same
 * type (mod_filter's and SetOutputFilter's are added in the middle).  The
 * flag is in r's note, not r->notes: a pointer and a load for the
 * requests that have none, where a table lookup cost 35. */
SM_HOT void sitemap_vary_insert_filter(request_rec *r)
{
    const sitemap_head_note *n = ap_get_module_config(r->request_config,
                                                      &sitemap_module);

    if (n && n->vary && !r->main)
        ap_add_output_filter_handle(vary_filter_handle, NULL, r,
                                    r->connection);
}

int sitemap_methods(request_rec *r)
{
    r->allowed |= (AP_METHOD_BIT << M_GET) | (AP_METHOD_BIT << M_OPTIONS);
    if (r->method_number == M_GET)
        return DECLINED;
    /* Answered here, not through the error path: that one would replace
     * Allow with what the method registry says (and add TRACE). */
    apr_table_setn(r->headers_out, "Allow", SITEMAP_ALLOW);
    if (r->method_number == M_OPTIONS) {
        ap_set_content_length(r, 0);
        return OK;
    }
    r->status = HTTP_METHOD_NOT_ALLOWED;
    ap_set_content_type(r, "text/plain; charset=utf-8");
    ap_rputs("Only " SITEMAP_ALLOW " are allowed here.\n", r);
    return OK;
}

void sitemap_http_register(apr_pool_t *p)
{
    (void)p;
    /* DEFLATE and BROTLI are AP_FTYPE_CONTENT_SET; CACHE_SAVE is one
     * above, and added earlier (the quick handler). */
    vary_filter_handle = ap_register_output_filter(VARY_FILTER, vary_filter,
                                                   NULL,
                                                   AP_FTYPE_CONTENT_SET);
}
