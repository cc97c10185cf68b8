/* SPDX-License-Identifier: Apache-2.0 */
/* sm_news.c: the news sitemap and llms.txt (see sm_news.h). */
#include "serve/sm_news.h"

#include <stdlib.h>
#include <string.h>

#include <apr_lib.h>
#include <apr_strings.h>

#include "serve/sm_xml.h"

const char *sm_news_language_problem(const char *lang)
{
    apr_size_t n = strlen(lang), i;

    if (strcmp(lang, "zh-cn") == 0 || strcmp(lang, "zh-tw") == 0)
        return NULL;
    if (n < 2 || n > 3)
        return "not 2 or 3 letters";
    for (i = 0; i < n; i++)
        if (lang[i] < 'a' || lang[i] > 'z')
            return "not lowercase letters a-z";
    return NULL;
}

const char *sm_news_text_problem(const char *s)
{
    const unsigned char *c = (const unsigned char *)s;

    if (!s[strspn(s, " ")])
        return "empty";
    if (strlen(s) > 1024)
        return "longer than 1024 bytes";
    for (; *c; c++)
        if (*c < 0x20 || *c == 0x7f)
            return "holds a control character";
    return NULL;
}

/* ---- the news sitemap ---------------------------------------------------- */

/* <loc> of base + url */
static apr_status_t loc(sm_xml_writer *w, const char *base, const char *url)
{
    apr_status_t rv;

    if ((rv = sm_xml_raw(w, "<url><loc>")) != APR_SUCCESS
        || (rv = sm_xml_text(w, base)) != APR_SUCCESS
        || (rv = sm_xml_text(w, url)) != APR_SUCCESS)
        return rv;
    return sm_xml_raw(w, "</loc>");
}

static apr_status_t news_item(sm_xml_writer *w, const char *base,
                              const char *name, const char *lang,
                              const sm_news_item *it)
{
    char date[SM_W3C_DATETIME_LEN];
    apr_status_t rv;

    sm_w3c_datetime(date, it->published);
    if ((rv = loc(w, base, it->url)) != APR_SUCCESS
        || (rv = sm_xml_raw(w, "<news:news><news:publication><news:name>"))
           != APR_SUCCESS
        || (rv = sm_xml_text(w, name)) != APR_SUCCESS
        || (rv = sm_xml_raw(w, "</news:name><news:language>"))
           != APR_SUCCESS
        || (rv = sm_xml_text(w, lang)) != APR_SUCCESS
        || (rv = sm_xml_raw(w, "</news:language></news:publication>"
                            "<news:publication_date>")) != APR_SUCCESS
        || (rv = sm_xml_raw(w, date)) != APR_SUCCESS
        || (rv = sm_xml_raw(w, "</news:publication_date><news:title>"))
           != APR_SUCCESS
        || (rv = sm_xml_text(w, it->title && *it->title ? it->title
                                                        : it->url))
           != APR_SUCCESS)
        return rv;
    return sm_xml_raw(w, "</news:title></news:news></url>\n");
}

apr_status_t sm_news_write(apr_pool_t *p, sm_sink *sink, void *baton,
                           const char *base, const char *name,
                           const char *lang, const apr_array_header_t *items,
                           const sm_llms_item *filler)
{
    sm_xml_writer *w = sm_xml_writer_create(p, sink, baton);
    apr_status_t rv;
    int i;

    if ((rv = sm_xml_raw(w, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                         "<urlset xmlns=\"" SM_XML_NS "\" xmlns:news=\""
                         SM_NEWS_NS "\">\n")) != APR_SUCCESS)
        return rv;
    for (i = 0; i < items->nelts; i++)
        if ((rv = news_item(w, base, name, lang,
                            &APR_ARRAY_IDX(items, i, sm_news_item)))
            != APR_SUCCESS)
            return rv;
    if (!items->nelts && filler) {
        char date[SM_W3C_DATETIME_LEN];
        sm_w3c_datetime(date, filler->lastmod);
        if ((rv = loc(w, base, filler->url)) != APR_SUCCESS
            || (rv = sm_xml_raw(w, "<lastmod>")) != APR_SUCCESS
            || (rv = sm_xml_raw(w, date)) != APR_SUCCESS
            || (rv = sm_xml_raw(w, "</lastmod></url>\n")) != APR_SUCCESS)
            return rv;
    }
    if ((rv = sm_xml_raw(w, "</urlset>\n")) != APR_SUCCESS)
        return rv;
    return sm_xml_flush(w);
}

/* ---- llms.txt ---------------------------------------------------------- */

char *sm_md_text(apr_pool_t *p, const char *s)
{
    char *out = apr_palloc(p, strlen(s) * 2 + 1), *o = out;

    for (; *s; s++) {
        if (*s == '\n' || *s == '\r' || *s == '\t') {
            *o++ = ' ';
            continue;
        }
        if (strchr("\\[]()*_`<>", *s))
            *o++ = '\\';
        *o++ = *s;
    }
    *o = '\0';
    return out;
}

char *sm_md_url(apr_pool_t *p, const char *url)
{
    char *out = apr_palloc(p, strlen(url) * 3 + 1), *o = out;
    const unsigned char *c = (const unsigned char *)url;

    for (; *c; c++) {
        if (*c <= ' ' || *c >= 0x7f || strchr("()<>\\[]", *c)) {
            apr_snprintf(o, 4, "%%%02X", *c);
            o += 3;
        }
        else
            *o++ = (char)*c;
    }
    *o = '\0';
    return out;
}

/* The section of a stored URL: its first path segment when more path
 * follows it, "" for the pages right under the root. */
static apr_size_t section_len(const char *url, const char **at)
{
    const char *slash, *q = strchr(url, '?');

    *at = url + 1;
    slash = strchr(url + 1, '/');
    if (!slash || (q && q < slash))
        return 0;
    return (apr_size_t)(slash - *at);
}

static int by_section(const void *a, const void *b)
{
    const sm_llms_item *x = a, *y = b;
    const char *sx, *sy;
    apr_size_t nx = section_len(x->url, &sx), ny = section_len(y->url, &sy);
    int c;

    if (!nx || !ny) {
        if (nx != ny)
            return nx ? 1 : -1;
    }
    else if ((c = strncmp(sx, sy, nx < ny ? nx : ny)) != 0)
        return c;
    else if (nx != ny)
        return nx < ny ? -1 : 1;
    return strcmp(x->url, y->url);
}

static apr_status_t llms_item(apr_pool_t *p, sm_xml_writer *w,
                              const char *base, const sm_llms_item *it)
{
    const char *title = it->title && *it->title ? it->title : it->url;

    return sm_xml_raw(w, apr_pstrcat(p, "- [", sm_md_text(p, title), "](",
                                     sm_md_url(p, base), sm_md_url(p, it->url),
                                     ")", it->description
                                          && *it->description ? ": " : "",
                                     it->description && *it->description
                                     ? sm_md_text(p, it->description) : "",
                                     "\n", NULL));
}

apr_status_t sm_llms_write(apr_pool_t *p, sm_sink *sink, void *baton,
                           const char *base, const char *title,
                           const char *summary, apr_array_header_t *items)
{
    sm_xml_writer *w = sm_xml_writer_create(p, sink, baton);
    const char *last = NULL, *at;
    apr_size_t last_len = 0, n;
    apr_status_t rv;
    int i;

    qsort(items->elts, (size_t)items->nelts, sizeof(sm_llms_item),
          by_section);
    if ((rv = sm_xml_raw(w, apr_pstrcat(p, "# ", sm_md_text(p, title), "\n",
                                        NULL))) != APR_SUCCESS)
        return rv;
    if (summary && (rv = sm_xml_raw(w, apr_pstrcat(
                        p, "\n> ", sm_md_text(p, summary), "\n", NULL)))
                   != APR_SUCCESS)
        return rv;
    for (i = 0; i < items->nelts; i++) {
        const sm_llms_item *it = &APR_ARRAY_IDX(items, i, sm_llms_item);
        apr_pool_t *ip;
        n = section_len(it->url, &at);
        if (!last || n != last_len || strncmp(at, last, n) != 0) {
            const char *name = n ? sm_md_text(p, apr_pstrndup(p, at, n))
                                 : SM_LLMS_ROOT_SECTION;
            if ((rv = sm_xml_raw(w, apr_pstrcat(p, "\n## ", name, "\n\n",
                                                NULL))) != APR_SUCCESS)
                return rv;
            last = at;
            last_len = n;
        }
        /* a pool a line: memory stays that of one line */
        if (apr_pool_create(&ip, p) != APR_SUCCESS)
            return APR_ENOMEM;
        rv = llms_item(ip, w, base, it);
        apr_pool_destroy(ip);
        if (rv != APR_SUCCESS)
            return rv;
    }
    return sm_xml_flush(w);
}
