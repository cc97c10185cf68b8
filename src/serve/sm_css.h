/* SPDX-License-Identifier: Apache-2.0 */
/* sm_css.h: the module's own stylesheet (SitemapStylesheet On, and the
 * HTML site map unless SitemapHTMLStylesheet names another): CSS on the
 * sitemap's XML elements, so a browser shows the index and the pages as
 * tables (no XSLT: browsers are removing it), and a few rules for the HTML
 * site map (class "sitemap-html"). */
#ifndef SM_CSS_H
#define SM_CSS_H

extern const char sm_css[];

#endif
