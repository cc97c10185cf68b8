/* SPDX-License-Identifier: Apache-2.0 */
/* mod_sitemap_why.c: verdict notes, so that sitemapctl why and the status
 * page can say why a URL seen recently is not listed.  Called from the
 * log_transaction hook (mod_sitemap_record.c) for a response the rules
 * left out; never touches the store: the note goes to the recorder's
 * writer, which keeps the URL's latest verdict in its batches.
 *
 * Cheap for a flood: the raw facts (site, target, reason, detail, status)
 * are hashed first, and a note handed over within the hour by this
 * process, or over the rate, stops there (sm_recorder_note_skip), before
 * the URL is normalised. */
#include "mod_sitemap_record.h"

#include <apr_strings.h>
#include <string.h>

#include "util/sm_hash.h"

/* A refusal of sm_rules_worth_deciding worth a note: not a subrequest, a
 * method other than GET/HEAD or a status; a content type only when it
 * looks like a page (sm_rules_page_like: no images, styles, scripts). */
static int worth_noting(const sm_response *resp, const char *why)
{
    if (!why || !strcmp(why, "subrequest") || !strcmp(why, "not GET")
        || !strcmp(why, "status"))
        return 0;
    if (!strcmp(why, "content type"))
        return resp->status == HTTP_OK
               && sm_rules_page_like(resp->content_type);
    return 1;
}

int sitemap_own_answer(const request_rec *r)
{
    while (r->next)
        r = r->next;
    return r->handler && !strncmp(r->handler, "sitemap", 7);
}

void sitemap_note_verdict(request_rec *r, const sitemap_server_conf *conf,
                          const sm_site_conf *site, const sm_response *resp,
                          const char *url, const char *why,
                          const char *detail, int refused_early)
{
    sm_change c;
    const char *strs[4];
    apr_uint64_t facts;

    if (!conf->proc->recorder || !why
        || (refused_early && !worth_noting(resp, why))
        || sitemap_own_answer(r))
        return;
    strs[0] = site->base;
    strs[1] = resp->target;
    strs[2] = why;
    strs[3] = detail;
    facts = sm_hash_strs(SM_HASH_SEED ^ (apr_uint64_t)resp->status, strs, 4);
    if (sm_recorder_note_skip(conf->proc->recorder, facts, r->request_time))
        return;
    if (!url && !(url = sm_rules_note_url(r->pool, &conf->rules, resp)))
        return;
    memset(&c, 0, sizeof(c));
    c.op = SM_CHANGE_NOTE;
    c.site = site;
    c.url = url;
    c.seen = r->request_time;
    c.why = why;
    c.detail = detail;
    c.status = resp->status;
    sm_recorder_note(conf->proc->recorder, &c);
}
