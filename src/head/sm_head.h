/* SPDX-License-Identifier: Apache-2.0 */
/* sm_head.h: what a page's own <head> says about indexing, read as it
 * streams past (no httpd headers: the glue feeds it bucket by bucket).
 *
 * Fed chunks of any size, split anywhere, it keeps only bounded state (at
 * most one tag in progress, SM_HEAD_TAG_MAX bytes of it) and stops reading
 * at the end of the head as a browser sees it: </head>, <body>, any start
 * tag a browser would put into the body (<div>, <p>, <img>...), <plaintext>,
 * or SM_HEAD_LIMIT bytes, whichever comes first.  It finds:
 *   - <meta name="robots|googlebot" content="..."> holding the token
 *     "noindex" or "none" (any case, any order, comma or space separated);
 *   - <link rel="canonical" href="...">: the first; two that differ cancel
 *     each other out (search engines ignore conflicting canonicals);
 *   - <link rel="alternate" hreflang="xx" href="...">: up to
 *     SM_HEAD_MAX_ALTERNATES, absolute http(s) hrefs only (blanks and
 *     non-ASCII bytes inside are left to the resolver), each hreflang (a
 *     language tag sm_hreflang_canon accepts, or x-default) once;
 *   - <base href="...">, which relative hrefs resolve against;
 *   - <title> text (whitespace collapsed, at most SM_HEAD_TITLE_MAX bytes);
 *   - images: <meta property|name="og:image" content> (og:image:url,
 *     og:image:secure_url too), <meta name|property="twitter:image"
 *     content> (twitter:image:src too) and <link rel="image_src" href>,
 *     SM_HEAD_MAX_IMAGES of each form (sm_head_images.c);
 *   - the description and publication time (sm_head_news.h): of <meta
 *     name="description">, <meta property="article:published_time"> and
 *     the text of <script type="application/ld+json"> (its first
 *     SM_HEAD_JSONLD_MAX bytes; a <script> tag's attributes are read only
 *     when it holds a '+'; not read after a published_time meta, which
 *     wins over it).
 * HTML as browsers tokenise it: tag and attribute names in any case,
 * double, single or no quotes, attributes in any order (the first of a
 * duplicated attribute wins), character references in values (numeric and
 * the common named ones), comments ("<!-- -->", "<!...>", "<?...>").  Only
 * the attributes of <meta>, <link> and <base> are parsed; any other tag
 * ends at its next '>' even inside a quoted value (<html>, <script>...:
 * what follows is text, or raw text up to the element's end tag anyway),
 * which keeps the cost near that of finding the '<'s.  The
 * content of <script>, <style>, <noscript> (scripting on, as browsers and
 * crawlers that render run it), <textarea>, <title>, <xmp>, <iframe>,
 * <noembed> and <noframes> is text up to its own end tag, and what is inside
 * <template> is not part of the head: none of them is mistaken for tags.
 * Any ASCII-compatible charset works (only ASCII bytes are interpreted); a
 * UTF-8 BOM is just text before the first tag.  Text itself never ends the
 * head here (browsers would end it at non-blank text; CMS heads carry
 * stray text often enough that reading on is the safer choice). */
#ifndef SM_HEAD_H
#define SM_HEAD_H

#include <apr_pools.h>
#include <apr_tables.h>

#define SM_HEAD_LIMIT          (64 * 1024)  /* bytes read at most */
#define SM_HEAD_TAG_MAX        8192         /* a longer tag is skipped */
#define SM_HEAD_MAX_ALTERNATES 64
#define SM_HEAD_TITLE_MAX      512
#define SM_HEAD_MAX_IMAGES     8            /* of each form (og, twitter,
                                               image_src) */

/* An image the head declares (sm_head_images.h): the href as written,
 * decoded; form: SM_HEAD_IMAGE_OG, _TWITTER or _SRC. */
typedef struct {
    const char *href;
    int form;
} sm_head_image;

typedef struct {
    const char *hreflang;   /* as written (stored lowercased: sm_alternates) */
    const char *href;       /* absolute http(s), entities decoded */
} sm_head_alternate;

/* What was found; strings live in the scanner's pool. */
typedef struct {
    int done;                   /* the head ended or the limit was reached */
    int truncated;              /* stopped by SM_HEAD_LIMIT */
    int noindex;                /* robots/googlebot noindex or none */
    const char *canonical;      /* the href as written, decoded; NULL: none
                                   (or conflicting ones) */
    const char *base_href;      /* <base href>, decoded; NULL: none */
    const char *title;          /* NULL: no <title> */
    apr_array_header_t *alternates;  /* sm_head_alternate */
    apr_array_header_t *images; /* sm_head_image, each href once; NULL:
                                   none (made on the first) */
    /* <meta name="description">'s text (sm_head_news.h: decoded,
     * collapsed, cut), NULL: none */
    const char *description;
    /* the publication time: <meta property="article:published_time">,
     * else the first JSON-LD NewsArticle/Article/BlogPosting's
     * datePublished (sm_head_news.h), 0: none */
    apr_time_t published;
} sm_head_result;

typedef struct sm_head sm_head;

/* A scanner whose results are allocated from p (a request's pool),
 * reading everything above. */
sm_head *sm_head_create(apr_pool_t *p);

/* What a scanner made by sm_head_create_ex reads beyond robots, the
 * canonical, the alternates, <base> and the title (which it always
 * reads, exactly as sm_head_create's does): the images (SitemapImages
 * On), the description and publication time, JSON-LD included (a news
 * sitemap or llms.txt).  What is not wanted stays NULL (0), and its tags
 * cost only the finding of their end. */
#define SM_HEAD_WANT_IMAGES 1u
#define SM_HEAD_WANT_NEWS   2u
#define SM_HEAD_WANT_ALL    (SM_HEAD_WANT_IMAGES | SM_HEAD_WANT_NEWS)
sm_head *sm_head_create_ex(apr_pool_t *p, unsigned wants);

/* Read the next len bytes of the document.  Returns 1 once the head is
 * over (later calls do nothing), 0 while more is wanted. */
int sm_head_feed(sm_head *h, const char *data, apr_size_t len);

/* The document ended (or the caller stops): the results so far. */
const sm_head_result *sm_head_result_get(sm_head *h);

/* Resolve an href found in a page (canonical, base) against the page's
 * URL, as a browser does (RFC 3986 section 5): page_base is the site's
 * canonical base ("scheme://host[:port]", sm_url_parse_base) and page_path
 * the page's target ("/path?query").  On success returns 1 with *base the
 * href's canonical base and *target its "/path[?query]" (fragment
 * dropped, not yet normalised: pass it to sm_url_from_target: a blank or
 * non-ASCII byte in it is still literal); an internationalised host (raw
 * UTF-8 or %-encoded) is in its A-label (xn--) form.  0 when the href is
 * not an http(s) URL or its host is not valid. */
int sm_head_resolve(apr_pool_t *p, const char *page_base,
                    const char *page_path, const char *href,
                    const char **base, const char **target);

/* 1 when the page's canonical names another URL than the page itself:
 * another site (site_base differs) or another stored URL than page_url
 * once normalised with allow as stored URLs are (sm_url_from_target).  0
 * when there is none, when it names the page (absolute or relative, with
 * or without the default port), or when it is not an http(s) URL (search
 * engines ignore such a canonical).  <base href> is honoured. */
int sm_head_names_other(apr_pool_t *p, const sm_head_result *res,
                        const char *site_base, const char *page_target,
                        const char *page_url,
                        const apr_array_header_t *allow);

/* The images res declares, resolved against the page as its canonical is
 * (its <base href> honoured): each an absolute URL, its base canonical
 * and its path and query normalised as stored URLs are (every query
 * parameter kept), of the site (site_base) or of a host named in hosts
 * (const char *, any case; NULL: none), each once, in the head's order;
 * others (not http(s), another host, malformed) are left out. */
apr_array_header_t *sm_head_images_resolve(apr_pool_t *p,
                                           const sm_head_result *res,
                                           const char *site_base,
                                           const char *page_target,
                                           const apr_array_header_t *hosts);
/* Is an image at image_base (a canonical base) of the site or of one of
 * hosts?  */
int sm_image_host_allowed(apr_pool_t *p, const char *image_base,
                          const char *site_base,
                          const apr_array_header_t *hosts);
/* An image's stored form: base + target normalised (every query
 * parameter kept); NULL when the target cannot be. */
const char *sm_image_url(apr_pool_t *p, const char *base,
                         const char *target);

/* The target of a Link response header's rel="canonical" (RFC 8288; the
 * value as httpd joins several, comma-separated), as written; NULL when
 * there is none, or two that differ (as for <link rel=canonical>).  It is
 * resolved against the page's URL, never against a <base href>. */
const char *sm_link_canonical(apr_pool_t *p, const char *value);

#endif
