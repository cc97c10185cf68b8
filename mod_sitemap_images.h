/* SPDX-License-Identifier: Apache-2.0 */
/* mod_sitemap_images.h: SitemapImages' recording (mod_sitemap_images.c),
 * for log_transaction (mod_sitemap_record.c). */
#ifndef MOD_SITEMAP_IMAGES_H
#define MOD_SITEMAP_IMAGES_H

#include "mod_sitemap_record.h"
#include "head/sm_head.h"

/* An image response of the site (a 200 image/ type, its Referer a page of
 * the site) handed to the recorder: 1 when that was all there was to do
 * with it.  A 404 or 410 takes the URL from every page's images (0:
 * log_page goes on). */
int sitemap_image_logged(request_rec *r, sitemap_server_conf *conf);

/* At insert_filter: is r an image file served as it is (SitemapImages
 * On), whose head filter is left out? */
int sitemap_image_file(const request_rec *r,
                       const sitemap_server_conf *conf);

/* The images a page's head declares, as its record carries them
 * (sm_change.images; NULL: SitemapImages Off). */
const char *sitemap_head_images(request_rec *r,
                                const sitemap_server_conf *conf,
                                const sm_site_conf *site,
                                const request_rec *orig,
                                const sm_head_result *head);

#endif
