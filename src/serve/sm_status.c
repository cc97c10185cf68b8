/* SPDX-License-Identifier: Apache-2.0 */
/* sm_status.c: see sm_status.h. */
#include "serve/sm_status.h"

#include <apr_strings.h>

#include <stddef.h>
#include <string.h>

#define DAY_SEC 86400

void sm_status_days(sm_status_site *s, const apr_array_header_t *added,
                    apr_time_t now)
{
    apr_int64_t today = apr_time_sec(now) / DAY_SEC;
    int i;

    s->first_day = today - SM_STATUS_CHART_DAYS + 1;
    memset(s->added, 0, sizeof(s->added));
    memset(s->removed, 0, sizeof(s->removed));
    for (i = 0; added && i < added->nelts; i++) {
        const sm_day_count *d = &APR_ARRAY_IDX(added, i, sm_day_count);
        if (d->day >= s->first_day && d->day <= today) {
            s->added[d->day - s->first_day] = d->added;
            s->removed[d->day - s->first_day] = d->removed;
        }
    }
}

const char *sm_status_health(const sm_status_site *s)
{
    if (s->store_error)
        return "unreadable";
    if (s->have_counters && s->counters.last_fault > s->counters.last_write)
        return "failing";
    return "ok";
}

/* ---- writing -------------------------------------------------------------- */

static void out(sm_xml_writer *w, const char *s) { sm_xml_raw(w, s); }

static void outf(sm_xml_writer *w, apr_pool_t *p, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void outf(sm_xml_writer *w, apr_pool_t *p, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    sm_xml_raw(w, apr_pvsprintf(p, fmt, ap));
    va_end(ap);
}

static const char *date(apr_pool_t *p, apr_time_t t)
{
    char *buf;

    if (!t)
        return "";
    buf = apr_palloc(p, SM_W3C_DATETIME_LEN);
    sm_w3c_datetime(buf, t);
    return buf;
}

/* A JSON string: '"', '\' and control characters escaped; other bytes as
 * they are (stored URLs are ASCII; a fault message is a C string). */
static void json_str(sm_xml_writer *w, apr_pool_t *p, const char *s)
{
    const char *run = s;

    out(w, "\"");
    for (; s && *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c >= 0x20 && c != '"' && c != '\\')
            continue;
        sm_xml_raw(w, apr_pstrmemdup(p, run, (apr_size_t)(s - run)));
        outf(w, p, "\\u%04x", c);
        run = s + 1;
    }
    if (run)
        out(w, run);
    out(w, "\"");
}

#define U64(x) ((apr_uint64_t)(x))

static const struct {
    const char *name, *help;
    apr_size_t offset;
} counters[] = {
#define C(f, h) { #f, h, offsetof(sm_recorder_shared, f) }
    C(recorded, "Changes of kind record handed to the recorder"),
    C(forgotten, "Changes of kind forget handed to the recorder"),
    C(skipped, "Changes dropped as repeats by the recorder's memory"),
    C(queued, "Changes queued for the store"),
    C(written, "Changes committed to the store"),
    C(refused_full, "New URLs refused by SitemapMaxURLs"),
    C(dropped, "Changes lost to store faults"),
    C(faults, "Failed writes to the store"),
#undef C
};
#define N_COUNTERS (sizeof(counters) / sizeof(counters[0]))

static apr_uint64_t counter(const sm_recorder_shared *c, int i)
{
    return *(const apr_uint64_t *)((const char *)c + counters[i].offset);
}

/* ,"crawlers":[...] of a site that tracks crawlers. */
static void crawlers_json(sm_xml_writer *w, apr_pool_t *p,
                          const sm_status_site *s)
{
    int j;

    if (!s->crawlers)
        return;
    out(w, ",\"crawlers\":[");
    for (j = 0; j < s->crawlers->nelts; j++) {
        const sm_status_crawler *c = &APR_ARRAY_IDX(s->crawlers, j,
                                                    sm_status_crawler);
        out(w, j ? ",{\"name\":" : "{\"name\":");
        json_str(w, p, c->name);
        outf(w, p, ",\"verified_hits\":%" APR_UINT64_T_FMT
             ",\"unverified_hits\":%" APR_UINT64_T_FMT
             ",\"pending_hits\":%" APR_UINT64_T_FMT
             ",\"listed_urls\":%" APR_INT64_T_FMT
             ",\"crawled_1d\":%" APR_INT64_T_FMT
             ",\"crawled_7d\":%" APR_INT64_T_FMT
             ",\"crawled_30d\":%" APR_INT64_T_FMT
             ",\"never_crawled\":%" APR_INT64_T_FMT
             ",\"stale\":%" APR_INT64_T_FMT
             ",\"unlisted_hits\":%" APR_INT64_T_FMT
             ",\"sitemap_fetches\":%" APR_INT64_T_FMT
             ",\"last_sitemap_fetch\":\"%s\"}",
             c->verified, c->unverified, c->pending, c->cov.listed_urls,
             c->cov.crawled_1d, c->cov.crawled_7d, c->cov.crawled_30d,
             c->cov.never_crawled, c->cov.stale, c->cov.unlisted_hits,
             c->cov.sitemap_fetches, date(p, c->cov.last_sitemap_fetch));
    }
    out(w, "]");
}

apr_status_t sm_status_json(apr_pool_t *p, const sm_status_site *sites,
                            int n, apr_time_t started, sm_xml_sink *sink,
                            void *baton)
{
    sm_xml_writer *w = sm_xml_writer_create(p, sink, baton);
    int i, j;

    outf(w, p, "{\"started\":\"%s\",\"sites\":[", date(p, started));
    for (i = 0; i < n; i++) {
        const sm_status_site *s = &sites[i];
        out(w, i ? ",\n{" : "\n{");
        out(w, "\"base\":");
        json_str(w, p, s->base);
        out(w, ",\"store\":");
        json_str(w, p, s->db_path);
        out(w, ",\"health\":");
        json_str(w, p, sm_status_health(s));
        if (s->store_error) {
            out(w, ",\"store_error\":");
            json_str(w, p, s->store_error);
        }
        outf(w, p, ",\"urls\":%" APR_INT64_T_FMT ",\"pages\":%"
             APR_INT64_T_FMT ",\"store_bytes\":%" APR_INT64_T_FMT
             ",\"store_free_bytes\":%" APR_INT64_T_FMT, s->urls, s->pages,
             s->about.db_bytes, s->about.free_bytes);
        out(w, ",\"recent\":[");
        for (j = 0; s->recent && j < s->recent->nelts; j++) {
            const sm_recent_url *u = &APR_ARRAY_IDX(s->recent, j,
                                                    sm_recent_url);
            out(w, j ? ",{\"url\":" : "{\"url\":");
            json_str(w, p, u->url);
            outf(w, p, ",\"lastmod\":\"%s\"}", date(p, u->lastmod));
        }
        out(w, "],\"left_out\":[");
        for (j = 0; s->left_out && j < s->left_out->nelts; j++) {
            const sm_verdict_row *v = &APR_ARRAY_IDX(s->left_out, j,
                                                     sm_verdict_row);
            out(w, j ? ",{\"url\":" : "{\"url\":");
            json_str(w, p, v->url);
            out(w, ",\"verdict\":");
            json_str(w, p, v->verdict);
            out(w, ",\"reason\":");
            json_str(w, p, v->reason);
            if (v->detail) {
                out(w, ",\"detail\":");
                json_str(w, p, v->detail);
            }
            outf(w, p, ",\"status\":%d,\"at\":\"%s\"}", v->status,
                 date(p, v->at));
        }
        if (s->hosts) {
            out(w, "],\"hosts\":[");
            for (j = 0; j < s->hosts->nelts; j++) {
                const sm_site_stats *h = &APR_ARRAY_IDX(s->hosts, j,
                                                        sm_site_stats);
                out(w, j ? ",{\"base\":" : "{\"base\":");
                json_str(w, p, h->base);
                outf(w, p, ",\"urls\":%" APR_INT64_T_FMT ",\"pages\":%"
                     APR_INT64_T_FMT "}", h->url_count, h->pages);
            }
            outf(w, p, "],\"hosts_total\":%" APR_INT64_T_FMT
                 ",\"hosts_urls\":%" APR_INT64_T_FMT ",\"hosts_pages\":%"
                 APR_INT64_T_FMT ",\"recorder\":{", s->hosts_total,
                 s->hosts_urls, s->hosts_pages);
        }
        else
            out(w, "],\"recorder\":{");
        for (j = 0; j < (int)N_COUNTERS; j++)
            outf(w, p, "%s\"%s\":%" APR_UINT64_T_FMT, j ? "," : "",
                 counters[j].name,
                 s->have_counters ? counter(&s->counters, j) : 0);
        outf(w, p, ",\"last_write\":\"%s\",\"last_fault\":\"%s\","
             "\"last_fault_reason\":",
             date(p, (apr_time_t)s->counters.last_write),
             date(p, (apr_time_t)s->counters.last_fault));
        json_str(w, p, s->counters.last_fault_why);
        out(w, "}");
        crawlers_json(w, p, s);
        out(w, ",\"days\":[");
        for (j = 0; j < SM_STATUS_CHART_DAYS; j++) {
            char d[SM_W3C_DATETIME_LEN];
            sm_w3c_datetime(d, apr_time_from_sec((s->first_day + j)
                                                 * DAY_SEC));
            d[10] = '\0';
            outf(w, p, "%s{\"day\":\"%s\",\"added\":%" APR_INT64_T_FMT
                 ",\"removed\":%" APR_INT64_T_FMT "}", j ? "," : "", d,
                 s->added[j], s->removed[j]);
        }
        out(w, "]}");
    }
    out(w, "\n]}\n");
    return sm_xml_flush(w);
}

/* A label value of the exposition format: '\', '"' and newline escaped. */
static const char *label(apr_pool_t *p, const char *v)
{
    char *o = apr_palloc(p, strlen(v) * 2 + 1), *d = o;

    for (; *v; v++) {
        if (*v == '\\' || *v == '"' || *v == '\n') {
            *d++ = '\\';
            *d++ = *v == '\n' ? 'n' : *v;
        }
        else {
            *d++ = *v;
        }
    }
    *d = '\0';
    return o;
}

/* sitemap_urls (pages 0) or sitemap_pages of a SitemapSiteFromHost
 * vhost's sites, a series each as for any site. */
static void host_metric(sm_xml_writer *w, apr_pool_t *p,
                        const sm_status_site *s, int pages)
{
    int j;

    for (j = 0; s->hosts && j < s->hosts->nelts; j++) {
        const sm_site_stats *h = &APR_ARRAY_IDX(s->hosts, j, sm_site_stats);
        outf(w, p, "sitemap_%s{site=\"%s\"} %" APR_INT64_T_FMT "\n",
             pages ? "pages" : "urls", label(p, h->base),
             pages ? h->pages : h->url_count);
    }
}

/* sitemap_crawler_*{site, crawler}: one family per figure. */
static const struct {
    const char *name, *type, *help;
} crawler_series[] = {
    { "verified_hits_total", "counter", "Verified fetches since the "
      "server started." },
    { "unverified_hits_total", "counter", "Claims of the crawler's "
      "User-Agent its sources did not bear out, since the server started." },
    { "pending_hits_total", "counter", "Claims DNS had not confirmed yet, "
      "since the server started." },
    { "listed_urls", "gauge", "URLs of the site's sitemap." },
    { "crawled_1d", "gauge", "Listed URLs fetched in the last day." },
    { "crawled_7d", "gauge", "Listed URLs fetched in the last 7 days." },
    { "crawled_30d", "gauge", "Listed URLs fetched in the last 30 days." },
    { "never_crawled", "gauge", "Listed URLs never fetched." },
    { "stale", "gauge", "Listed URLs changed since their last fetch." },
    { "unlisted_hits", "gauge", "Verified fetches of URLs not listed." },
    { "sitemap_fetches", "gauge", "Verified fetches of the sitemaps." }
};

static apr_uint64_t crawler_value(const sm_status_crawler *c, int k)
{
    const apr_int64_t v[] = {
        (apr_int64_t)c->verified, (apr_int64_t)c->unverified,
        (apr_int64_t)c->pending, c->cov.listed_urls, c->cov.crawled_1d,
        c->cov.crawled_7d, c->cov.crawled_30d, c->cov.never_crawled,
        c->cov.stale, c->cov.unlisted_hits, c->cov.sitemap_fetches
    };
    return (apr_uint64_t)v[k];
}

static void crawler_metrics(sm_xml_writer *w, apr_pool_t *p,
                            const sm_status_site *sites, int n)
{
    int i, j, k;

    for (k = 0; k < (int)(sizeof(crawler_series) / sizeof(crawler_series[0]));
         k++) {
        int head = 0;
        for (i = 0; i < n; i++)
            for (j = 0; sites[i].crawlers && j < sites[i].crawlers->nelts;
                 j++) {
                const sm_status_crawler *c = &APR_ARRAY_IDX(
                    sites[i].crawlers, j, sm_status_crawler);
                if (!head++)
                    outf(w, p, "# HELP sitemap_crawler_%s %s\n# TYPE "
                         "sitemap_crawler_%s %s\n", crawler_series[k].name,
                         crawler_series[k].help, crawler_series[k].name,
                         crawler_series[k].type);
                outf(w, p, "sitemap_crawler_%s{site=\"%s\",crawler=\"%s\"} %"
                     APR_UINT64_T_FMT "\n", crawler_series[k].name,
                     label(p, sites[i].base), label(p, c->name),
                     crawler_value(c, k));
            }
    }
}

apr_status_t sm_status_metrics(apr_pool_t *p, const sm_status_site *sites,
                               int n, sm_xml_sink *sink, void *baton)
{
    sm_xml_writer *w = sm_xml_writer_create(p, sink, baton);
    int i, j;

    out(w, "# HELP sitemap_urls URLs stored for the site.\n"
           "# TYPE sitemap_urls gauge\n");
    for (i = 0; i < n; i++) {
        outf(w, p, "sitemap_urls{site=\"%s\"} %" APR_INT64_T_FMT "\n",
             label(p, sites[i].base), sites[i].urls);
        host_metric(w, p, &sites[i], 0);
    }
    out(w, "# HELP sitemap_pages Non-empty sitemap pages of the site.\n"
           "# TYPE sitemap_pages gauge\n");
    for (i = 0; i < n; i++) {
        outf(w, p, "sitemap_pages{site=\"%s\"} %" APR_INT64_T_FMT "\n",
             label(p, sites[i].base), sites[i].pages);
        host_metric(w, p, &sites[i], 1);
    }
    out(w, "# HELP sitemap_host_sites Sites of a SitemapSiteFromHost vhost "
           "(the sitemap_urls series list at most "
           APR_STRINGIFY(SM_STATUS_HOSTS_SHOWN) ").\n"
           "# TYPE sitemap_host_sites gauge\n");
    for (i = 0; i < n; i++)
        if (sites[i].hosts)
            outf(w, p, "sitemap_host_sites{site=\"%s\"} %" APR_INT64_T_FMT
                 "\n", label(p, sites[i].base), sites[i].hosts_total);
    out(w, "# HELP sitemap_host_urls URLs of all a SitemapSiteFromHost "
           "vhost's sites.\n# TYPE sitemap_host_urls gauge\n");
    for (i = 0; i < n; i++)
        if (sites[i].hosts)
            outf(w, p, "sitemap_host_urls{site=\"%s\"} %" APR_INT64_T_FMT
                 "\n", label(p, sites[i].base), sites[i].hosts_urls);
    out(w, "# HELP sitemap_store_up 1 when the store could be read.\n"
           "# TYPE sitemap_store_up gauge\n");
    for (i = 0; i < n; i++)
        outf(w, p, "sitemap_store_up{site=\"%s\"} %d\n",
             label(p, sites[i].base), sites[i].store_error ? 0 : 1);
    out(w, "# HELP sitemap_store_bytes Size of the store file.\n"
           "# TYPE sitemap_store_bytes gauge\n");
    for (i = 0; i < n; i++)
        outf(w, p, "sitemap_store_bytes{site=\"%s\"} %" APR_INT64_T_FMT
             "\n", label(p, sites[i].base), sites[i].about.db_bytes);
    crawler_metrics(w, p, sites, n);
    /* The recorder's counters belong to the store file, shared by the
     * sites in it: one series per store. */
    for (j = 0; j < (int)N_COUNTERS; j++) {
        outf(w, p, "# HELP sitemap_recorder_%s_total %s since the server "
             "started.\n# TYPE sitemap_recorder_%s_total counter\n",
             counters[j].name, counters[j].help, counters[j].name);
        for (i = 0; i < n; i++) {
            int k;
            for (k = 0; k < i; k++)
                if (strcmp(sites[k].db_path, sites[i].db_path) == 0)
                    break;
            if (k < i || !sites[i].have_counters)
                continue;
            outf(w, p, "sitemap_recorder_%s_total{store=\"%s\"} %"
                 APR_UINT64_T_FMT "\n", counters[j].name,
                 label(p, sites[i].db_path), counter(&sites[i].counters, j));
        }
    }
    return sm_xml_flush(w);
}

/* ---- HTML ------------------------------------------------------------------ */

#define CHART_W 560
#define CHART_H 140

/* Bars of URLs added (up) and removed (down) per day, as inline SVG. */
static void chart(sm_xml_writer *w, apr_pool_t *p, const sm_status_site *s,
                  int idx)
{
    apr_int64_t top = 1;
    double bar = (double)CHART_W / SM_STATUS_CHART_DAYS, mid = CHART_H / 2.0;
    int j;

    for (j = 0; j < SM_STATUS_CHART_DAYS; j++) {
        if (s->added[j] > top)
            top = s->added[j];
        if (s->removed[j] > top)
            top = s->removed[j];
    }
    outf(w, p, "<figure>\n<svg xmlns=\"http://www.w3.org/2000/svg\" "
         "width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" role=\"img\" "
         "aria-labelledby=\"chart%d\">\n<title id=\"chart%d\">URLs added "
         "(green, up) and removed (red, down) per day, last %d days; "
         "the tallest bar is %" APR_INT64_T_FMT "</title>\n"
         "<line x1=\"0\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#888\"/>\n",
         CHART_W, CHART_H, CHART_W, CHART_H, idx, idx, SM_STATUS_CHART_DAYS,
         top, mid, CHART_W, mid);
    for (j = 0; j < SM_STATUS_CHART_DAYS; j++) {
        double up = (mid - 2) * (double)s->added[j] / (double)top;
        double down = (mid - 2) * (double)s->removed[j] / (double)top;
        if (s->added[j])
            outf(w, p, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
                 "height=\"%.1f\" fill=\"#2f9e44\"><title>%" APR_INT64_T_FMT
                 " added</title></rect>\n", j * bar + 1, mid - up, bar - 2,
                 up, s->added[j]);
        if (s->removed[j])
            outf(w, p, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
                 "height=\"%.1f\" fill=\"#e03131\"><title>%" APR_INT64_T_FMT
                 " removed</title></rect>\n", j * bar + 1, mid, bar - 2,
                 down, s->removed[j]);
    }
    out(w, "</svg>\n<figcaption>URLs added (up) and removed (down) per day "
           "over the last four weeks (from the store: added, first seen "
           "and still stored; removed: forgotten, expired or removed by "
           "sitemapctl).</figcaption>\n"
           "</figure>\n");
}

static void row(sm_xml_writer *w, apr_pool_t *p, const char *name,
                apr_uint64_t v)
{
    outf(w, p, "<tr><th scope=\"row\">%s</th><td>%" APR_UINT64_T_FMT
         "</td></tr>\n", name, v);
}

/* A SitemapSiteFromHost vhost's sites: a row each. */
static void host_table(sm_xml_writer *w, apr_pool_t *p,
                       const sm_status_site *s)
{
    int j;

    if (!s->hosts)
        return;
    outf(w, p, "<h3>Sites of this virtual host, one per host name (%"
         APR_INT64_T_FMT ")</h3>\n", s->hosts_total);
    if (!s->hosts->nelts) {
        out(w, "<p>None stored yet.</p>\n");
        return;
    }
    out(w, "<table class=\"hosts\">\n<tr><th scope=\"col\">Site</th>"
           "<th scope=\"col\">URLs</th><th scope=\"col\">Sitemap pages</th>"
           "</tr>\n");
    for (j = 0; j < s->hosts->nelts; j++) {
        const sm_site_stats *h = &APR_ARRAY_IDX(s->hosts, j, sm_site_stats);
        out(w, "<tr><th scope=\"row\">");
        sm_xml_text(w, h->base);
        outf(w, p, "</th><td>%" APR_INT64_T_FMT "</td><td>%" APR_INT64_T_FMT
             "</td></tr>\n", h->url_count, h->pages);
    }
    out(w, "</table>\n");
    if (s->hosts_total > s->hosts->nelts)
        outf(w, p, "<p>The %d with most URLs are listed; all %"
             APR_INT64_T_FMT " have %" APR_INT64_T_FMT " URLs in %"
             APR_INT64_T_FMT " sitemap pages.</p>\n", s->hosts->nelts,
             s->hosts_total, s->hosts_urls, s->hosts_pages);
}

apr_status_t sm_status_html(apr_pool_t *p, const sm_status_site *sites,
                            int n, apr_time_t started, sm_xml_sink *sink,
                            void *baton)
{
    sm_xml_writer *w = sm_xml_writer_create(p, sink, baton);
    int i, j;

    out(w, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset="
           "\"utf-8\">\n<title>Sitemap status</title>\n<style>\n"
           "body{font:15px/1.45 system-ui,sans-serif;margin:1em 2em;"
           "color:#1f2933}table{border-collapse:collapse}"
           "th,td{text-align:left;padding:.2em .8em;border-bottom:1px solid "
           "#d9e2ec}td{font-variant-numeric:tabular-nums}"
           "section{margin-bottom:2em}.failing,.unreadable{color:#c92a2a}"
           "\n</style>\n</head>\n<body>\n<main>\n<h1>Sitemap status</h1>\n");
    outf(w, p, "<p>Counters since %s (the last start or restart).</p>\n",
         date(p, started));
    for (i = 0; i < n; i++) {
        const sm_status_site *s = &sites[i];
        const char *health = sm_status_health(s);
        out(w, "<section>\n<h2>");
        sm_xml_text(w, s->base);
        out(w, "</h2>\n<table>\n<tr><th scope=\"row\">Store</th><td>");
        sm_xml_text(w, s->db_path);
        outf(w, p, "</td></tr>\n<tr><th scope=\"row\">Health</th><td "
             "class=\"%s\">%s", health, health);
        if (s->store_error) {
            out(w, ": ");
            sm_xml_text(w, s->store_error);
        }
        out(w, "</td></tr>\n");
        row(w, p, "URLs", U64(s->urls));
        row(w, p, "Sitemap pages", U64(s->pages));
        row(w, p, "Store size (bytes)", U64(s->about.db_bytes));
        row(w, p, "of which free", U64(s->about.free_bytes));
        for (j = 0; j < (int)N_COUNTERS; j++)
            row(w, p, counters[j].help,
                s->have_counters ? counter(&s->counters, j) : 0);
        outf(w, p, "<tr><th scope=\"row\">Last good write</th><td>%s</td>"
             "</tr>\n<tr><th scope=\"row\">Last store fault</th><td>%s ",
             date(p, (apr_time_t)s->counters.last_write),
             date(p, (apr_time_t)s->counters.last_fault));
        sm_xml_text(w, s->counters.last_fault_why);
        out(w, "</td></tr>\n</table>\n");
        host_table(w, p, s);
        chart(w, p, s, i);
        sm_status_crawlers_html(w, p, s, i);
        out(w, "<h3>Newest changes</h3>\n<ol>\n");
        for (j = 0; s->recent && j < s->recent->nelts; j++) {
            const sm_recent_url *u = &APR_ARRAY_IDX(s->recent, j,
                                                    sm_recent_url);
            out(w, "<li>");
            sm_xml_text(w, u->url);
            outf(w, p, " <small>%s</small></li>\n", date(p, u->lastmod));
        }
        out(w, "</ol>\n");
        /* Why is a page not listed: the latest left out (sitemapctl why
         * says more of any URL). */
        if (s->left_out && s->left_out->nelts) {
            out(w, "<h3>Latest left out</h3>\n<ol>\n");
            for (j = 0; j < s->left_out->nelts; j++) {
                const sm_verdict_row *v = &APR_ARRAY_IDX(s->left_out, j,
                                                         sm_verdict_row);
                out(w, "<li>");
                sm_xml_text(w, v->url);
                out(w, ": ");
                sm_xml_text(w, v->verdict);
                out(w, ", ");
                sm_xml_text(w, v->reason);
                if (v->detail) {
                    out(w, " (");
                    sm_xml_text(w, v->detail);
                    out(w, ")");
                }
                outf(w, p, " <small>%s</small></li>\n", date(p, v->at));
            }
            out(w, "</ol>\n");
        }
        out(w, "</section>\n");
    }
    out(w, "</main>\n</body>\n</html>\n");
    return sm_xml_flush(w);
}
