/* SPDX-License-Identifier: Apache-2.0 */
/* sm_head_images.c: the images a page's head declares (sm_head.h,
 * sm_head_images.h): og:image, twitter:image and <link rel="image_src">,
 * kept as written by the scanner and resolved against the page (and its
 * <base href>) as its canonical is, by sm_head_images_resolve. */
#include "head/sm_head_images.h"

#include <apr_lib.h>
#include <apr_strings.h>

#include "util/sm_html.h"
#include "util/sm_url.h"

int sm_head_image_rel_slow(const char *v, apr_size_t n)
{
    apr_size_t i = 0;

    while (i < n) {
        apr_size_t j;

        while (i < n && apr_isspace(v[i]))
            i++;
        for (j = i; j < n && !apr_isspace(v[j]); j++)
            ;
        if (SM_IMG_IS(v + i, j - i, "image_src"))
            return 1;
        i = j;
    }
    return 0;
}

void sm_head_image_add(apr_pool_t *p, sm_head_result *res, unsigned *counts,
                       int form, const char *v, apr_size_t n)
{
    const char *href;
    int i;

    if (form < 0 || form >= SM_HEAD_IMAGE_FORMS
        || counts[form] >= SM_HEAD_MAX_IMAGES || n == 0 || n > SM_URL_MAX)
        return;
    href = sm_html_decode(p, v, n);
    href += strspn(href, " \t\r\n\f");
    if (!*href)
        return;
    if (!res->images)
        res->images = apr_array_make(p, 4, sizeof(sm_head_image));
    for (i = 0; i < res->images->nelts; i++)
        if (strcmp(APR_ARRAY_IDX(res->images, i, sm_head_image).href,
                   href) == 0)
            return;
    counts[form]++;
    APR_ARRAY_PUSH(res->images, sm_head_image).href = href;
    APR_ARRAY_IDX(res->images, res->images->nelts - 1, sm_head_image).form
        = form;
}

/* The host of a canonical base "scheme://host[:port]", from p. */
static const char *base_host(apr_pool_t *p, const char *base)
{
    const char *h = strstr(base, "://"), *end;

    if (!h)
        return "";
    h += 3;
    end = h[0] == '[' ? strchr(h, ']') : NULL;
    end = strchr(end ? end : h, ':');
    return end ? apr_pstrmemdup(p, h, (apr_size_t)(end - h))
               : apr_pstrdup(p, h);
}

int sm_image_host_allowed(apr_pool_t *p, const char *image_base,
                          const char *site_base,
                          const apr_array_header_t *hosts)
{
    const char *host;
    int i;

    if (strcmp(image_base, site_base) == 0)
        return 1;
    if (!hosts || hosts->nelts == 0)
        return 0;
    host = base_host(p, image_base);
    for (i = 0; i < hosts->nelts; i++)
        if (strcasecmp(APR_ARRAY_IDX(hosts, i, const char *), host) == 0)
            return 1;
    return 0;
}

const char *sm_image_url(apr_pool_t *p, const char *base, const char *target)
{
    char *path, *url;

    if (sm_url_from_target(p, target, sm_url_query_names(p, target),
                           strlen(base), &path, &url) != SM_URL_OK)
        return NULL;
    return apr_pstrcat(p, base, url, NULL);
}

apr_array_header_t *sm_head_images_resolve(apr_pool_t *p,
                                           const sm_head_result *res,
                                           const char *site_base,
                                           const char *page_target,
                                           const apr_array_header_t *hosts)
{
    apr_array_header_t *out = apr_array_make(p, res->images
                                                ? res->images->nelts : 0,
                                             sizeof(const char *));
    const char *base = site_base, *path = page_target;
    int i, j;

    if (!res->images)
        return out;
    if (res->base_href
        && !sm_head_resolve(p, site_base, page_target, res->base_href,
                            &base, &path))
        base = site_base, path = page_target;
    for (i = 0; i < res->images->nelts; i++) {
        const char *href = APR_ARRAY_IDX(res->images, i, sm_head_image).href;
        const char *ibase, *itarget, *url;

        if (!sm_head_resolve(p, base, path, href, &ibase, &itarget)
            || !sm_image_host_allowed(p, ibase, site_base, hosts)
            || !(url = sm_image_url(p, ibase, itarget)))
            continue;
        for (j = 0; j < out->nelts; j++)
            if (strcmp(APR_ARRAY_IDX(out, j, const char *), url) == 0)
                break;
        if (j == out->nelts)
            APR_ARRAY_PUSH(out, const char *) = url;
    }
    return out;
}
