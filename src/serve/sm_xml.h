/* SPDX-License-Identifier: Apache-2.0 */
/* sm_xml.h: the sitemaps.org 0.9 XML writer, streaming.
 *
 * Output goes through a small fixed buffer to a sink (the module's sink
 * passes it down httpd's filter chain, sitemapctl's writes a file), so
 * memory does not grow with the document.  Used by the module and by
 * sitemapctl export, so both produce the same bytes. */
#ifndef SM_XML_H
#define SM_XML_H

#include <apr_pools.h>
#include <apr_tables.h>
#include <apr_time.h>

#include "util/sm_sink.h"

#define SM_XML_NS "http://www.sitemaps.org/schemas/sitemap/0.9"
#define SM_XHTML_NS "http://www.w3.org/1999/xhtml"

typedef sm_sink sm_xml_sink;

typedef struct sm_xml_writer sm_xml_writer;

sm_xml_writer *sm_xml_writer_create(apr_pool_t *p, sm_xml_sink *sink,
                                    void *baton);

/* Documents begun after this carry <?xml-stylesheet type="text/css"
 * href="..."?> after the declaration (href NULL: none; kept by
 * reference). */
void sm_xml_set_stylesheet(sm_xml_writer *w, const char *href);

/* <?xml ...?><urlset xmlns=... xmlns:xhtml=...> (SM_XHTML_NS, always) */
apr_status_t sm_xml_urlset_begin(sm_xml_writer *w);
/* One <url>: loc is base + path (entity-escaped); lastmod 0 is left out;
 * changefreq and priority NULL are left out. */
apr_status_t sm_xml_url(sm_xml_writer *w, const char *base, const char *path,
                        apr_time_t lastmod, const char *changefreq,
                        const char *priority);
/* The same with the URL's hreflang alternates (sm_alternate, in their
 * stored form; NULL or none: exactly sm_xml_url's bytes) after priority,
 * one <xhtml:link rel="alternate" hreflang="..." href="..."/> each (the
 * xhtml prefix is declared on <urlset>). */
apr_status_t sm_xml_url_alternates(sm_xml_writer *w, const char *base,
                                   const char *path, apr_time_t lastmod,
                                   const char *changefreq,
                                   const char *priority,
                                   const apr_array_header_t *alternates);
/* The bytes sm_xml_url_alternates writes for alternates beyond what
 * sm_xml_url writes for the same URL (0 for none). */
apr_size_t sm_xml_alternates_len(const apr_array_header_t *alternates);
apr_status_t sm_xml_urlset_end(sm_xml_writer *w);

/* SitemapImages: the Google image extension's namespace, declared once on
 * <urlset> by sm_xml_urlset_begin_images (else as sm_xml_urlset_begin),
 * and a <url> as sm_xml_url_alternates writes it with an
 * <image:image><image:loc>...</image:loc></image:image> per image (const
 * char *, absolute URLs; NULL or none: exactly sm_xml_url_alternates'
 * bytes) before </url>.  Only image:loc: Google deprecated the others. */
#define SM_IMAGE_NS "http://www.google.com/schemas/sitemap-image/1.1"
apr_status_t sm_xml_urlset_begin_images(sm_xml_writer *w);
apr_status_t sm_xml_url_images(sm_xml_writer *w, const char *base,
                               const char *path, apr_time_t lastmod,
                               const char *changefreq, const char *priority,
                               const apr_array_header_t *alternates,
                               const apr_array_header_t *images);
/* The bytes one image adds to its <url>. */
apr_size_t sm_xml_image_len(const char *image);

/* <?xml ...?><sitemapindex xmlns=...> */
apr_status_t sm_xml_index_begin(sm_xml_writer *w);
/* One <sitemap>: loc is base + path. */
apr_status_t sm_xml_index_entry(sm_xml_writer *w, const char *base,
                                const char *path, apr_time_t lastmod);
apr_status_t sm_xml_index_end(sm_xml_writer *w);

/* Text with the five entities escaped (&amp; &lt; &gt; &apos; &quot;: also
 * right for HTML text and quoted attributes). */
apr_status_t sm_xml_text(sm_xml_writer *w, const char *s);
/* Text as it is, through the same buffer (the text format: no entities);
 * returns the sink's first failure. */
apr_status_t sm_xml_raw(sm_xml_writer *w, const char *s);

/* Hand what is buffered to the sink. */
apr_status_t sm_xml_flush(sm_xml_writer *w);
/* Bytes given to the writer so far. */
apr_off_t sm_xml_bytes(const sm_xml_writer *w);

/* W3C Datetime with seconds, in UTC: "2026-11-22T04:49:16+00:00" (25
 * characters and a NUL). */
#define SM_W3C_DATETIME_LEN 26
void sm_w3c_datetime(char *buf, apr_time_t t);

#endif
