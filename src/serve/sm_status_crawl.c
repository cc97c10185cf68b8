/* SPDX-License-Identifier: Apache-2.0 */
/* sm_status_crawl.c: the status page's crawl coverage in HTML (issue 36):
 * per crawler the figures ?json has, and an inline SVG chart (no script)
 * of coverage over the last SM_CRAWL_DAYS days, with a <title> and a
 * table of the same figures as its text alternative.  Coverage: listed
 * URLs the crawler fetched within 30 days / listed URLs; the days before
 * today from the store (sm_crawl_day), today from the live figures. */
#include "serve/sm_status.h"

#include <apr_strings.h>
#include <apr_time.h>

#include <stdarg.h>
#include <string.h>

#define COV_W 560
#define COV_H 120

static void outf(sm_xml_writer *w, apr_pool_t *p, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void outf(sm_xml_writer *w, apr_pool_t *p, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    sm_xml_raw(w, apr_pvsprintf(p, fmt, ap));
    va_end(ap);
}

/* "2026-11-26" of a day since the epoch. */
static const char *day_name(apr_pool_t *p, apr_int64_t day)
{
    apr_time_exp_t tm;

    apr_time_exp_gmt(&tm, apr_time_from_sec(day * 86400));
    return apr_psprintf(p, "%04d-%02d-%02d", tm.tm_year + 1900,
                        tm.tm_mon + 1, tm.tm_mday);
}

/* "37%", or "-" with nothing listed. */
static const char *percent(apr_pool_t *p, apr_int64_t crawled,
                           apr_int64_t listed)
{
    if (listed <= 0)
        return "-";
    return apr_psprintf(p, "%" APR_INT64_T_FMT "%%", crawled * 100 / listed);
}

/* The chart's days, oldest first: the stored ones, and today live.
 * Days with no figures have listed -1. */
static void chart_days(const sm_status_crawler *c, apr_int64_t today,
                       sm_crawl_day *v)
{
    apr_int64_t first = today - SM_CRAWL_DAYS + 1;
    int i;

    for (i = 0; i < SM_CRAWL_DAYS; i++) {
        v[i].day = first + i;
        v[i].listed = v[i].crawled = -1;
    }
    for (i = 0; c->days && i < c->days->nelts; i++) {
        const sm_crawl_day *d = &APR_ARRAY_IDX(c->days, i, sm_crawl_day);
        if (d->day >= first && d->day < today)
            v[d->day - first] = *d;
    }
    v[SM_CRAWL_DAYS - 1].listed = c->cov.listed_urls;
    v[SM_CRAWL_DAYS - 1].crawled = c->cov.crawled_30d;
}

static void chart(sm_xml_writer *w, apr_pool_t *p, const sm_status_crawler *c,
                  const sm_crawl_day *v, const char *id)
{
    double bar = (double)COV_W / SM_CRAWL_DAYS;
    int i;

    outf(w, p, "<figure>\n<svg xmlns=\"http://www.w3.org/2000/svg\" "
         "width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" role=\"img\" "
         "aria-labelledby=\"%s\">\n<title id=\"%s\">Coverage by ",
         COV_W, COV_H, COV_W, COV_H, id, id);
    sm_xml_text(w, c->name);
    outf(w, p, " per day, last %d days: the share of listed URLs it "
         "fetched within 30 days; today %s</title>\n<rect x=\"0\" y=\"0\" "
         "width=\"%d\" height=\"%d\" fill=\"none\" stroke=\"#d9e2ec\"/>\n",
         SM_CRAWL_DAYS, percent(p, v[SM_CRAWL_DAYS - 1].crawled,
                                v[SM_CRAWL_DAYS - 1].listed), COV_W, COV_H);
    for (i = 0; i < SM_CRAWL_DAYS; i++) {
        double h;
        if (v[i].listed <= 0)
            continue;
        h = (COV_H - 2) * (double)v[i].crawled / (double)v[i].listed;
        outf(w, p, "<rect class=\"cov\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\""
             " height=\"%.1f\" fill=\"#1c7ed6\"><title>%s: %s (%"
             APR_INT64_T_FMT " of %" APR_INT64_T_FMT ")</title></rect>\n",
             i * bar + 1, COV_H - 1 - h, bar - 2, h, day_name(p, v[i].day),
             percent(p, v[i].crawled, v[i].listed), v[i].crawled,
             v[i].listed);
    }
    sm_xml_raw(w, "</svg>\n<figcaption>Coverage per day (listed URLs "
                  "fetched, verified, within the 30 days before; the days "
                  "before today as the store took them at the day's end, "
                  "today live).  The figures:</figcaption>\n");
    sm_xml_raw(w, "<table class=\"coverage-days\">\n<tr><th scope=\"col\">"
                  "Day (UTC)</th><th scope=\"col\">Listed</th><th scope="
                  "\"col\">Crawled within 30 days</th><th scope=\"col\">"
                  "Coverage</th></tr>\n");
    for (i = SM_CRAWL_DAYS - 1; i >= 0; i--)
        if (v[i].listed >= 0)
            outf(w, p, "<tr><th scope=\"row\">%s</th><td>%" APR_INT64_T_FMT
                 "</td><td>%" APR_INT64_T_FMT "</td><td>%s</td></tr>\n",
                 day_name(p, v[i].day), v[i].listed, v[i].crawled,
                 percent(p, v[i].crawled, v[i].listed));
    sm_xml_raw(w, "</table>\n</figure>\n");
}

static void row(sm_xml_writer *w, apr_pool_t *p, const char *key,
                const char *name, apr_int64_t v)
{
    outf(w, p, "<tr data-key=\"%s\"><th scope=\"row\">%s</th><td>%"
         APR_INT64_T_FMT "</td></tr>\n", key, name, v);
}

static void figures(sm_xml_writer *w, apr_pool_t *p,
                    const sm_status_crawler *c)
{
    char when[SM_W3C_DATETIME_LEN] = "never";

    sm_xml_raw(w, "<table class=\"crawler\">\n");
    row(w, p, "verified_hits", "Verified fetches (since the start)",
        (apr_int64_t)c->verified);
    row(w, p, "unverified_hits", "Unverified claims (since the start)",
        (apr_int64_t)c->unverified);
    row(w, p, "pending_hits", "Claims DNS had not answered (since the start)",
        (apr_int64_t)c->pending);
    row(w, p, "listed_urls", "Listed URLs", c->cov.listed_urls);
    row(w, p, "crawled_1d", "Crawled in the last day", c->cov.crawled_1d);
    row(w, p, "crawled_7d", "Crawled in the last 7 days", c->cov.crawled_7d);
    row(w, p, "crawled_30d", "Crawled in the last 30 days",
        c->cov.crawled_30d);
    row(w, p, "never_crawled", "Never crawled", c->cov.never_crawled);
    row(w, p, "stale", "Stale (changed since its last fetch)", c->cov.stale);
    row(w, p, "unlisted_hits", "Fetches of URLs not listed",
        c->cov.unlisted_hits);
    row(w, p, "sitemap_fetches", "Sitemap fetches", c->cov.sitemap_fetches);
    if (c->cov.last_sitemap_fetch)
        sm_w3c_datetime(when, c->cov.last_sitemap_fetch);
    outf(w, p, "<tr data-key=\"last_sitemap_fetch\"><th scope=\"row\">Last "
         "sitemap fetch</th><td>%s</td></tr>\n</table>\n", when);
}

void sm_status_crawlers_html(sm_xml_writer *w, apr_pool_t *p,
                             const sm_status_site *s, int idx)
{
    apr_int64_t today = s->first_day + SM_STATUS_CHART_DAYS - 1;
    sm_crawl_day v[SM_CRAWL_DAYS];
    int j;

    if (!s->crawlers)
        return;
    for (j = 0; j < s->crawlers->nelts; j++) {
        const sm_status_crawler *c = &APR_ARRAY_IDX(s->crawlers, j,
                                                    sm_status_crawler);
        sm_xml_raw(w, "<h3 class=\"crawler\">Crawl coverage: ");
        sm_xml_text(w, c->name);
        sm_xml_raw(w, "</h3>\n");
        figures(w, p, c);
        chart_days(c, today, v);
        chart(w, p, c, v, apr_psprintf(p, "cov%d-%d", idx, j));
    }
}
