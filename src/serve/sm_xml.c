/* SPDX-License-Identifier: Apache-2.0 */
/* sm_xml.c: see sm_xml.h. */
#include "serve/sm_xml.h"
#include "head/sm_alternates.h"
#include "store/sm_store.h"

#include <apr_strings.h>
#include <string.h>

#define BUFFER_SIZE 16384

struct sm_xml_writer {
    sm_xml_sink *sink;
    void *baton;
    apr_status_t status;    /* the first sink error; writes stop after it */
    apr_size_t used;
    apr_off_t total;
    const char *stylesheet; /* the xml-stylesheet PI's href, or NULL */
    char buf[BUFFER_SIZE];
};

sm_xml_writer *sm_xml_writer_create(apr_pool_t *p, sm_xml_sink *sink,
                                    void *baton)
{
    sm_xml_writer *w = apr_palloc(p, sizeof(*w));
    w->sink = sink;
    w->baton = baton;
    w->status = APR_SUCCESS;
    w->used = 0;
    w->total = 0;
    w->stylesheet = NULL;
    return w;
}

void sm_xml_set_stylesheet(sm_xml_writer *w, const char *href)
{
    w->stylesheet = href;
}

apr_status_t sm_xml_flush(sm_xml_writer *w)
{
    if (w->status == APR_SUCCESS && w->used)
        w->status = w->sink(w->baton, w->buf, w->used);
    w->used = 0;
    return w->status;
}

static void put(sm_xml_writer *w, const char *s, apr_size_t n)
{
    w->total += n;
    while (n) {
        apr_size_t room = BUFFER_SIZE - w->used;
        apr_size_t take = n < room ? n : room;
        memcpy(w->buf + w->used, s, take);
        w->used += take;
        s += take;
        n -= take;
        if (w->used == BUFFER_SIZE && sm_xml_flush(w) != APR_SUCCESS)
            return;
    }
}

static void puts_(sm_xml_writer *w, const char *s)
{
    put(w, s, strlen(s));
}

/* Character data: the five XML entities; everything else as it is (stored
 * URLs are ASCII, percent-encoded). */
static void put_escaped(sm_xml_writer *w, const char *s)
{
    const char *run = s;

    for (; *s; s++) {
        const char *ent;
        switch (*s) {
        case '&':  ent = "&amp;";  break;
        case '<':  ent = "&lt;";   break;
        case '>':  ent = "&gt;";   break;
        case '\'': ent = "&apos;"; break;
        case '"':  ent = "&quot;"; break;
        default:   continue;
        }
        put(w, run, (apr_size_t)(s - run));
        puts_(w, ent);
        run = s + 1;
    }
    put(w, run, (apr_size_t)(s - run));
}

void sm_w3c_datetime(char *buf, apr_time_t t)
{
    apr_time_exp_t tm;

    apr_time_exp_gmt(&tm, t);
    apr_snprintf(buf, SM_W3C_DATETIME_LEN,
                 "%04d-%02d-%02dT%02d:%02d:%02d+00:00", tm.tm_year + 1900,
                 tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
}

static void put_lastmod(sm_xml_writer *w, apr_time_t t)
{
    char date[SM_W3C_DATETIME_LEN];

    if (!t)
        return;
    sm_w3c_datetime(date, t);
    puts_(w, "<lastmod>");
    puts_(w, date);
    puts_(w, "</lastmod>");
}

static const char xml_decl[] = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";

/* The declaration, and the stylesheet's processing instruction (href is
 * checked by sm_stylesheet_url_check: no '"', no "?>"; escaped all the
 * same, as the xml-stylesheet recommendation allows in pseudo-attributes). */
static void prolog(sm_xml_writer *w)
{
    puts_(w, xml_decl);
    if (w->stylesheet) {
        puts_(w, "<?xml-stylesheet type=\"text/css\" href=\"");
        put_escaped(w, w->stylesheet);
        puts_(w, "\"?>\n");
    }
}

apr_status_t sm_xml_urlset_begin(sm_xml_writer *w)
{
    prolog(w);
    /* The xhtml prefix of hreflang alternates, declared once here, where
     * every client reads it (npm's `sitemap` in strict mode refuses any
     * attribute on <url>, a namespace declaration included).  Declared
     * whether or not the page has alternates: the start tag is written
     * before any row is read, and an unused declaration is valid XML that
     * neither schema nor parser minds. */
    puts_(w, "<urlset xmlns=\"" SM_XML_NS "\" xmlns:xhtml=\"" SM_XHTML_NS
          "\">\n");
    return w->status;
}

apr_status_t sm_xml_url(sm_xml_writer *w, const char *base, const char *path,
                        apr_time_t lastmod, const char *changefreq,
                        const char *priority)
{
    return sm_xml_url_alternates(w, base, path, lastmod, changefreq, priority,
                                 NULL);
}

#define LINK_OPEN "<xhtml:link rel=\"alternate\" hreflang=\""
#define LINK_HREF "\" href=\""
#define LINK_CLOSE "\"/>"

apr_size_t sm_xml_alternates_len(const apr_array_header_t *alternates)
{
    apr_size_t n;
    int i;

    if (!alternates || alternates->nelts == 0)
        return 0;
    n = 0;
    for (i = 0; i < alternates->nelts; i++) {
        const sm_alternate *a = &APR_ARRAY_IDX(alternates, i, sm_alternate);
        n += sizeof(LINK_OPEN) - 1 + sm_xml_escaped_len(a->hreflang)
             + sizeof(LINK_HREF) - 1 + sm_xml_escaped_len(a->href)
             + sizeof(LINK_CLOSE) - 1;
    }
    return n;
}

/* A <url> up to its end tag. */
static void url_open(sm_xml_writer *w, const char *base, const char *path,
                     apr_time_t lastmod, const char *changefreq,
                     const char *priority,
                     const apr_array_header_t *alternates)
{
    int i, n = alternates ? alternates->nelts : 0;

    puts_(w, "<url><loc>");
    put_escaped(w, base);
    put_escaped(w, path);
    puts_(w, "</loc>");
    put_lastmod(w, lastmod);
    if (changefreq) {
        puts_(w, "<changefreq>");
        puts_(w, changefreq);
        puts_(w, "</changefreq>");
    }
    if (priority) {
        puts_(w, "<priority>");
        puts_(w, priority);
        puts_(w, "</priority>");
    }
    for (i = 0; i < n; i++) {
        const sm_alternate *a = &APR_ARRAY_IDX(alternates, i, sm_alternate);
        puts_(w, LINK_OPEN);
        put_escaped(w, a->hreflang);
        puts_(w, LINK_HREF);
        put_escaped(w, a->href);
        puts_(w, LINK_CLOSE);
    }
}

apr_status_t sm_xml_url_alternates(sm_xml_writer *w, const char *base,
                                   const char *path, apr_time_t lastmod,
                                   const char *changefreq,
                                   const char *priority,
                                   const apr_array_header_t *alternates)
{
    url_open(w, base, path, lastmod, changefreq, priority, alternates);
    puts_(w, "</url>\n");
    return w->status;
}

#define IMAGE_OPEN "<image:image><image:loc>"
#define IMAGE_CLOSE "</image:loc></image:image>"

apr_size_t sm_xml_image_len(const char *image)
{
    return sizeof(IMAGE_OPEN) - 1 + sm_xml_escaped_len(image)
           + sizeof(IMAGE_CLOSE) - 1;
}

apr_status_t sm_xml_urlset_begin_images(sm_xml_writer *w)
{
    prolog(w);
    puts_(w, "<urlset xmlns=\"" SM_XML_NS "\" xmlns:xhtml=\"" SM_XHTML_NS
          "\" xmlns:image=\"" SM_IMAGE_NS "\">\n");
    return w->status;
}

apr_status_t sm_xml_url_images(sm_xml_writer *w, const char *base,
                               const char *path, apr_time_t lastmod,
                               const char *changefreq, const char *priority,
                               const apr_array_header_t *alternates,
                               const apr_array_header_t *images)
{
    int i;

    url_open(w, base, path, lastmod, changefreq, priority, alternates);
    for (i = 0; images && i < images->nelts; i++) {
        puts_(w, IMAGE_OPEN);
        put_escaped(w, APR_ARRAY_IDX(images, i, const char *));
        puts_(w, IMAGE_CLOSE);
    }
    puts_(w, "</url>\n");
    return w->status;
}

apr_status_t sm_xml_urlset_end(sm_xml_writer *w)
{
    puts_(w, "</urlset>\n");
    return sm_xml_flush(w);
}

apr_status_t sm_xml_index_begin(sm_xml_writer *w)
{
    prolog(w);
    puts_(w, "<sitemapindex xmlns=\"" SM_XML_NS "\">\n");
    return w->status;
}

apr_status_t sm_xml_index_entry(sm_xml_writer *w, const char *base,
                                const char *path, apr_time_t lastmod)
{
    puts_(w, "<sitemap><loc>");
    put_escaped(w, base);
    put_escaped(w, path);
    puts_(w, "</loc>");
    put_lastmod(w, lastmod);
    puts_(w, "</sitemap>\n");
    return w->status;
}

apr_status_t sm_xml_index_end(sm_xml_writer *w)
{
    puts_(w, "</sitemapindex>\n");
    return sm_xml_flush(w);
}

apr_status_t sm_xml_text(sm_xml_writer *w, const char *s)
{
    put_escaped(w, s);
    return w->status;
}

apr_status_t sm_xml_raw(sm_xml_writer *w, const char *s)
{
    puts_(w, s);
    return w->status;
}

apr_off_t sm_xml_bytes(const sm_xml_writer *w)
{
    return w->total;
}
