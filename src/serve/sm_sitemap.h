/* SPDX-License-Identifier: Apache-2.0 */
/* sm_sitemap.h: what a sitemap looks like for one site: the names of its
 * documents, and the optional changefreq/priority annotations. */
#ifndef SM_SITEMAP_H
#define SM_SITEMAP_H

#include <apr_pools.h>
#include <apr_tables.h>

#include "record/sm_rules.h"

/* ---- document names --------------------------------------------------------
 * For SitemapPath "/sitemap.xml" the pages are "/sitemap-1.xml", ... */

/* Is path a valid SitemapPath (absolute, ends in ".xml", only characters
 * a URL path holds literally: no space, control or non-ASCII byte, no
 * '%', '?', '#', '[', ']', '"'; no dot segments)?  NULL if so, else
 * what is wrong. */
const char *sm_sitemap_path_check(const char *path);

/* The same check for any document path (SitemapTextPath ".txt",
 * SitemapHTMLPath ".html"): ext is the extension it must end with. */
const char *sm_doc_path_check(const char *path, const char *ext);

/* The path of page n: "<stem>-<n><ext>", ext being path's own extension
 * (from its last '.'): "/sitemap-2.xml", "/sitemap-2.txt". */
const char *sm_page_path(apr_pool_t *p, const char *sitemap_path,
                         apr_int64_t n);

#define SM_NAME_NOT_OURS  (-1)  /* some other URL */
#define SM_NAME_BAD       (-2)  /* looks like a page but is not a valid one */
#define SM_NAME_INDEX       0   /* the SitemapPath itself */
/* What uri names (sitemap_path being any document path: its extension is
 * the one the pages have): SM_NAME_INDEX, a page number (1 or more; no leading
 * zeros, at most 9 digits), SM_NAME_BAD (a first segment of the form
 * "<stem>-<anything>.xml" that is not a valid page, or more path after
 * one) or SM_NAME_NOT_OURS. */
apr_int64_t sm_name_parse(const char *sitemap_path, const char *uri);

/* As sm_name_parse, also for the gzip forms of the same names
 * ("/sitemap.xml.gz", "/sitemap-1.xml.gz"): *gz says which form uri is
 * (0 for every answer but a document's gzip form). */
apr_int64_t sm_name_parse_gz(const char *sitemap_path, const char *uri,
                             int *gz);

/* ---- annotations -------------------------------------------------------- */

typedef struct {
    const sm_regex *re;
    const char *value;      /* a changefreq word, or a priority "0.0".."1.0" */
} sm_annotation;

/* Valid changefreq words (always ... never); NULL if word is one, else an
 * error sentence listing them. */
const char *sm_changefreq_check(const char *word);
/* A priority from 0.0 to 1.0 with at most one decimal ("0.8", "1", "1.0",
 * ".5"); returns the canonical form ("0.8", "1.0", "0.5") or NULL. */
const char *sm_priority_canon(apr_pool_t *p, const char *value);

/* The first annotation whose pattern matches path, or NULL. */
const char *sm_annotation_find(const apr_array_header_t *annotations,
                               const char *path);

/* ---- settings kept with the site in the store ---------------------------
 * Text, one item a line:
 *   path /sitemap.xml
 *   page_size 50000
 *   changefreq <word> <regex>      (in order; first match wins)
 *   priority <value> <regex>
 *   stylesheet <href>             (the xml-stylesheet PI; absent: none)
 */
const char *sm_settings_format(apr_pool_t *p, const char *sitemap_path,
                               int page_size,
                               const apr_array_header_t *changefreq,
                               const apr_array_header_t *priority,
                               const char *stylesheet);

/* The settings as sm_settings_parse reads them back. */
#define SM_SETTINGS_DEFAULT_PATH       "/sitemap.xml"
#define SM_SETTINGS_DEFAULT_PAGE_SIZE  50000
typedef struct {
    const char *path;                   /* the SitemapPath */
    int page_size;
    apr_array_header_t *changefreq;     /* sm_annotation, regexes compiled */
    apr_array_header_t *priority;       /* sm_annotation */
    const char *stylesheet;             /* the PI's href, NULL: none */
} sm_settings;

/* Read text written by sm_settings_format.  Items missing from it (also an
 * empty or NULL text: nothing stored yet) keep the module's defaults:
 * SM_SETTINGS_DEFAULT_PATH, SM_SETTINGS_DEFAULT_PAGE_SIZE, no annotations.
 * Lines of unknown kinds are skipped (written by a newer module).  Returns
 * NULL, or a sentence saying which line is wrong and why. */
const char *sm_settings_parse(apr_pool_t *p, const char *text,
                              sm_settings *out);

/* ---- the stylesheet of the documents ---------------------------------------
 * SitemapStylesheet On names the module's own CSS, SM_STYLESHEET_NAME in
 * SitemapPath's directory; an administrator's URL is kept as written. */
#define SM_STYLESHEET_NAME "sitemap.css"
const char *sm_stylesheet_default(apr_pool_t *p, const char *sitemap_path);
/* NULL if url may go into the processing instruction, else what is wrong. */
const char *sm_stylesheet_url_check(const char *url);

#endif
