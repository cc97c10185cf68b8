/* SPDX-License-Identifier: Apache-2.0 */
/* mod_sitemap_images.c: SitemapImages' recording (see the README, "Image
 * sitemaps", and docs/recording.md).  A page's images come from two
 * places:
 *   - its head (og:image, twitter:image, image_src; sm_head), resolved
 *     against the page, of the site or of a SitemapImageHosts host: they
 *     go with the page's record (sitemap_head_images);
 *   - the images browsers fetch for it: a 200 response of an image/ type of the
 *     site, to a GET without credentials or a session, whose Referer is a
 *     URL of the site (same scheme, host and port as its base).  The
 *     writer attaches it only when the Referer's page is listed, so a
 *     forged Referer can attach only an image the site really served, to
 *     a page it really lists; at most SM_IMAGES_MAX a page.
 * An image URL of the site that answers 404 or 410 leaves every page.
 * A response handled here costs a steady-state repeat once known: its
 * raw facts (site, target, Referer, status) are the recorder's memory's
 * (sm_recorder_repeat) before anything else is read. */
#include "mod_sitemap_images.h"

#include "http_log.h"
#include "http_request.h"
#include "http_ssl.h"

#include <apr_lib.h>
#include <apr_strings.h>

#include "head/sm_head.h"
#include "util/sm_hash.h"
#include "util/sm_url.h"

APLOG_USE_MODULE(sitemap);

#define IMAGE_RAW_MIX APR_UINT64_C(0x27d4eb2f165667c5)

const char *sitemap_image_host_problem(apr_pool_t *p, const char *arg)
{
    const char *err, *base = apr_pstrcat(p, "http://", arg, NULL);
    const char *c;

    (void)err;
    for (c = arg; *c; c++)
        if (!apr_isalnum(*c) && *c != '-' && *c != '.')
            return "";
    if (!*arg || strlen(arg) > 253 || arg[0] == '.' || arg[0] == '-'
        || !sm_url_parse_base(p, base, &err))
        return "";
    return NULL;
}

/* The head's images as a RECORD carries them ("\n"-joined; "" none). */
const char *sitemap_head_images(request_rec *r,
                                const sitemap_server_conf *conf,
                                const sm_site_conf *site,
                                const request_rec *orig,
                                const sm_head_result *head)
{
    apr_array_header_t *urls;

    if (conf->images != 1)
        return NULL;
    urls = sm_head_images_resolve(r->pool, head, site->base,
                                  orig->unparsed_uri, conf->image_hosts);
    return apr_array_pstrcat(r->pool, urls, '\n');
}

/* Did the client send a credential (a user, Authorization, a TLS client
 * certificate) or a session cookie?  As the page rules read them. */
static int not_anonymous(request_rec *r, const sitemap_server_conf *conf)
{
    const char *verify;

    if (r->user || apr_table_get(r->headers_in, "Authorization"))
        return 1;
    verify = ap_ssl_var_lookup(r->pool, r->server, r->connection, r,
                               "SSL_CLIENT_VERIFY");
    if (verify && *verify && strcmp(verify, "NONE") != 0)
        return 1;
    return sm_has_session(conf->sessions,
                          apr_table_get(r->headers_in, "Cookie"));
}

/* The stored URL of the page a Referer names, when it is of the site;
 * NULL otherwise. */
static const char *referer_page(request_rec *r,
                                const sitemap_server_conf *conf,
                                const sm_site_conf *site,
                                const char *referer)
{
    apr_size_t n = strlen(site->base);
    char *path, *url;

    if (!referer || strncasecmp(referer, site->base, n) != 0
        || (referer[n] != '/' && referer[n] != '\0'))
        return NULL;
    if (sm_url_from_target(r->pool, referer[n] ? referer + n : "/",
                           conf->allow_query, n, &path, &url) != SM_URL_OK)
        return NULL;
    return url;
}

/* "image/", in any case: a byte at a time (strncasecmp cost both hooks
 * of an image request 40 instructions each). */
static APR_INLINE int is_image_type(const char *ct)
{
    return ct && (ct[0] | 0x20) == 'i' && (ct[1] | 0x20) == 'm'
           && (ct[2] | 0x20) == 'a' && (ct[3] | 0x20) == 'g'
           && (ct[4] | 0x20) == 'e' && ct[5] == '/';
}

/* An image/ file served as it is, with SitemapImages On: its 200 is
 * sitemap_image_logged's, which reads no head, so the head filter is left
 * out (SITEMAP_HEAD_SKIPPED).  Should the response turn out to be
 * log_page's after all (no site for it, a type changed after this hook),
 * the skipped note has its head read from the file there, as for a known
 * file (sitemap_head_read_file).  mod_mime's type is set by now; a
 * script's is not, and a script is never left out here. */
SM_HOT int sitemap_image_file(const request_rec *r,
                              const sitemap_server_conf *conf)
{
    const char *ct = r->content_type;

    return conf->images == 1 && is_image_type(ct)
           && r->finfo.filetype == APR_REG
           && sitemap_served_as_file(r);
}

/* The raw facts of an image response: the site, the target, the status
 * and the Referer (NULL differs from "").  The site and the target (with
 * the method, GET here, and the robots.txt rules' generation) are the
 * note's first part when the prefetch at translate_name hashed them
 * (sitemap_record_prefetch), so the target is not hashed twice; else
 * hashed here.  The memory line is picked by the whole hash, not by the
 * target alone as a page's is: an image on every page (a logo) has one
 * raw a Referer, more than a line's three aliases. */
static apr_uint64_t image_raw(const request_rec *orig,
                              const sm_site_conf *site, int status,
                              const char *referer)
{
    const sitemap_head_note *n =
        ap_get_module_config(orig->request_config, &sitemap_module);
    apr_uint64_t x;

    if (n && n->first_site == site
        && n->first_generation == sitemap_disallow_generation)
        x = n->first;
    else
        x = sm_hash_str(sm_hash_u64(SM_HASH_SEED,
                                    (apr_uint64_t)(apr_uintptr_t)site),
                        orig->unparsed_uri);
    x = sm_hash_str(x ^ IMAGE_RAW_MIX ^ (apr_uint64_t)status, referer);
    return sm_recorder_raw(x, x);
}

int sitemap_image_logged(request_rec *r, sitemap_server_conf *conf)
{
    request_rec *orig = r, *last = r;
    const sm_site_conf *site;
    const char *referer = NULL, *page = NULL, *image;
    apr_uint64_t raw;
    sm_change c;
    int status;

    if (conf->images != 1 || conf->enabled != 1 || !conf->proc->recorder)
        return 0;
    while (orig->prev)
        orig = orig->prev;
    while (last->next)
        last = last->next;
    status = last->status;
    if (orig->main || orig->method_number != M_GET
        || !(status == HTTP_OK ? is_image_type(last->content_type)
                               : status == HTTP_NOT_FOUND
                                 || status == HTTP_GONE)
        || !(site = sitemap_site(r, conf)))
        return 0;
    if (status == HTTP_OK)
        referer = apr_table_get(orig->headers_in, "Referer");
    /* The raw facts: a repeat stops here, lock-free. */
    raw = image_raw(orig, site, status, referer);
    if (sm_recorder_repeat(conf->proc->recorder, raw, r->request_time))
        return status == HTTP_OK;
    if (!(image = sm_image_url(r->pool, site->base, orig->unparsed_uri)))
        return status == HTTP_OK;
    memset(&c, 0, sizeof(c));
    c.site = site;
    c.seen = r->request_time;
    c.status = status;
    c.image = image;
    if (status != HTTP_OK) {
        /* Gone from every page; the response goes on to log_page (a
         * page of that URL is forgotten there). */
        c.op = SM_CHANGE_IMAGE_GONE;
        c.url = image + strlen(site->base);
        sm_recorder_image(conf->proc->recorder, &c, raw);
        return 0;
    }
    if (!(page = referer_page(r, conf, site, referer))
        || not_anonymous(orig, conf)
        || !sitemap_anonymous_allowed(orig, last)) {
        ap_log_rerror(APLOG_MARK, APLOG_TRACE1, 0, r, "image not attached "
                      "(%s): %s", page ? "not for anonymous visitors"
                                       : "no Referer of the site",
                      orig->unparsed_uri);
        return 1;
    }
    c.op = SM_CHANGE_IMAGE;
    c.url = page;
    ap_log_rerror(APLOG_MARK, APLOG_TRACE1, 0, r, "image %s for %s%s", image,
                  site->base, page);
    sm_recorder_image(conf->proc->recorder, &c, raw);
    return 1;
}
