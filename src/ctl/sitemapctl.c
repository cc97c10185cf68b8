/* SPDX-License-Identifier: Apache-2.0 */
/* sitemapctl: the administrator's command for mod_sitemap's store.
 *
 * Linked against the same core as the module (src/): the same base-URL
 * canonicalisation, URL normalisation, recording rules, page assignment
 * and XML writer.  Safe while httpd works on the same file: SQLite in WAL
 * mode, a 5 s busy timeout, and short write transactions with pauses
 * between them.  Read-only commands open the file read-only and never
 * create it.
 *
 * Exit statuses (also in --help and the README):
 *   0 success
 *   1 check: the file is not sound
 *   2 bad arguments (usage)
 *   3 the store cannot be opened: missing, not SQLite, not a mod_sitemap
 *     store, a newer schema, no permission; a PostgreSQL database that
 *     cannot be reached or refuses the role
 *   4 the site is not in the store
 *   5 a log could not be opened or read to its end
 *   6 the store failed while working (locked for more than 5 s, disk full,
 *     I/O error); the failed transaction changed nothing
 *   7 the output could not be written: an export file, or standard
 *     output (a full disk, a closed pipe)
 *   8 why: the URL is not listed and no verdict of it is kept */
#include "config.h"

#include <apr_general.h>
#include <apr_lib.h>
#include <apr_strings.h>
#include <apr_time.h>

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ctl/sitemapctl.h"
#include "ctl/sm_ctl.h"
#include "head/sm_alternates.h"
#include "serve/sm_document.h"
#include "serve/sm_news.h"
#include "record/sm_rules.h"
#include "serve/sm_sitemap.h"
#include "indexnow/sm_indexnow.h"
#include "store/sm_store.h"
#include "util/sm_url.h"
#include "util/sm_parse.h"
#include "serve/sm_xml.h"

const char *progname = "sitemapctl";

/* ---- messages ---------------------------------------------------------------- */

void say(const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "%s: ", progname);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

static void log_to_stderr(void *baton, sm_log_level level, apr_status_t rv,
                          const char *msg)
{
    (void)baton; (void)rv;
    say("%s%s", level == SM_LOG_ERR ? "" : "warning: ", msg);
}

const sm_logger logger = { log_to_stderr, NULL, SM_LOG_WARN };

const char *w3c(apr_pool_t *p, apr_time_t t)
{
    char *buf;
    if (!t)
        return "-";
    buf = apr_palloc(p, SM_W3C_DATETIME_LEN);
    sm_w3c_datetime(buf, t);
    return buf;
}

/* ---- commands and their options ----------------------------------------- */


static const command commands[] = {
    { "stats", O_SITE, 0, 0, 0, cmd_stats,
      "stats DB [--site BASE]",
      "Show the store file (size, schema version, id) and, for every site or\n"
      "the one named, its URLs, pages, newest and oldest lastmod and\n"
      "last-seen times, and its hreflang alternates.\n" },
    { "list", O_SITE | O_PAGE, 1, 0, 0, cmd_list,
      "list DB --site BASE [--page N]",
      "Print the site's URLs, one a line: URL, lastmod (W3C, UTC) and page,\n"
      "separated by tabs, in sitemap order (page by page); each hreflang\n"
      "alternate follows on a line of its own: tab, hreflang, tab, href.\n"
      "  --page N   only the URLs of page N\n" },
    { "import", O_SITE | O_EXCLUDE | O_ALLOW_QUERY | O_PAGE_SIZE
                | O_ALL_TYPES, 1, 1, -1, cmd_import,
      "import DB --site BASE [--exclude REGEX]... [--allow-query NAME]...\n"
      "       [--page-size N] [--all-types] LOG...",
      "Learn the site's pages from Apache access logs (common or combined\n"
      "format, also with a leading %v or %v:%p, plain or gzip; \"-\" reads\n"
      "standard input), with the module's rules: GET answered 200 is\n"
      "recorded, 404, 410 and 301 (GET or HEAD) forget; authenticated\n"
      "requests (%u not \"-\"), paths matching --exclude, queries with a\n"
      "name not given with --allow-query and URLs longer than 2048\n"
      "characters are left out.  A log does not hold the Content-Type: a\n"
      "200 line is taken for a page unless its path ends in a file type that\n"
      "never is one (.css .js .png .jpg .pdf .zip ...; --all-types takes\n"
      "every 200 line for a page).  Per URL the newest line wins; a new URL\n"
      "gets the time of its newest line as lastmod; a stored URL keeps its\n"
      "lastmod (the module saw the real responses) and has its last-seen\n"
      "time moved forward.  Lines that cannot be parsed are counted and\n"
      "shown, never fatal.  Creates the store file if it is missing.\n"
      "  --exclude REGEX     as SitemapExclude (repeatable)\n"
      "  --allow-query NAME  as SitemapAllowQuery (repeatable)\n"
      "  --page-size N       URLs per page for a site the store does not know\n"
      "                      yet (default 50000); a known site keeps the page\n"
      "                      size the module stored\n"
      "  --all-types         no guessing from file types\n" },
    { "add", O_SITE | O_LASTMOD | O_PAGE_SIZE, 1, 1, -1, cmd_add,
      "add DB --site BASE [--lastmod TIME] [--page-size N] URL...",
      "Add URLs (a path \"/a\" or a full URL on BASE; normalised as the module\n"
      "does).  A new URL gets lastmod now (or --lastmod); a stored one keeps\n"
      "its lastmod unless --lastmod is given.  Creates the store file if it\n"
      "is missing.\n"
      "  --lastmod TIME  2026-11-22, 2026-11-22T10:30:00Z or @EPOCH-SECONDS\n"
      "  --page-size N   as for import\n" },
    { "remove", O_SITE, 1, 1, -1, cmd_remove,
      "remove DB --site BASE URL...",
      "Remove URLs (a path or a full URL on BASE).  The page they were on\n"
      "counts as changed, as when the module forgets a URL.\n" },
    { "export", O_SITE | O_EXPORT_DOCS, 1, 1, 1, cmd_export,
      "export DB --site BASE [--images] [--news-path PATH\n"
      "       --news-publication 'NAME LANG'] [--llms-path PATH\n"
      "       [--llms-title TEXT] [--llms-summary TEXT] [--llms-max N]] DIR",
      "Write the files the module serves for the site, byte for byte, under\n"
      "DIR at their URL paths: the SitemapPath document (a <urlset> when the\n"
      "site fits one page, else a <sitemapindex>) and every non-empty page\n"
      "(sitemap-N.xml), from one snapshot of the store, and sitemap.css\n"
      "beside them when they name the module's own stylesheet\n"
      "(SitemapStylesheet On).  The SitemapPath,\n"
      "changefreq and priority rules are those the module stored with the\n"
      "site.  Files are replaced by rename; page files of an earlier export\n"
      "that the module no longer serves are removed; other files in DIR are\n"
      "left alone.  The module's directives that are not stored with the\n"
      "site are given as options, with the directives' values:\n"
      "  --images                  as SitemapImages On: each <url> with its\n"
      "                            stored images\n"
      "  --news-path PATH          the news sitemap (SitemapNewsPath), with\n"
      "  --news-publication 'NAME LANG'  SitemapNewsPublication's two values\n"
      "                            in one argument (LANG: its last word)\n"
      "  --llms-path PATH          llms.txt (SitemapLLMsPath), with\n"
      "  --llms-title TEXT         SitemapLLMsTitle,\n"
      "  --llms-summary TEXT       SitemapLLMsSummary and\n"
      "  --llms-max N              SitemapLLMsMax (default 500)\n"
      "The news sitemap's 48 hours end at the time of the export.\n" },
    { "prune", O_SITE | O_OLDER_THAN, 1, 0, 0, cmd_prune,
      "prune DB --site BASE --older-than DURATION",
      "Remove the site's URLs not served (last seen) for longer than\n"
      "DURATION: a whole number with d, h, mi, s or ms (30d, 12h, 90mi,\n"
      "3600s), as SitemapExpire.\n" },
    { "check", 0, 0, 0, 0, cmd_check,
      "check DB",
      "Check the file without changing it: SQLite's integrity_check, that it\n"
      "is a mod_sitemap store (application_id) of a schema version this\n"
      "sitemapctl knows, that page summaries and URL counts agree with\n"
      "the URLs, and that stored hreflang alternates are well-formed.  Exit\n"
      "status 0 when sound, 1 when not, 3 when the file\n"
      "cannot be opened at all (missing).\n" },
    { "indexnow", O_SITE | O_ALL, 1, 0, -1, cmd_indexnow,
      "indexnow DB --site BASE (URL... | --all)",
      "Submit URLs with IndexNow by hand: put them (a path or a full URL on\n"
      "BASE), or with --all every URL the site has in the store, on the\n"
      "site's IndexNow pending list.  The module's sender posts them within\n"
      "SitemapIndexNowInterval, as any change (the site needs SitemapIndexNow\n"
      "On in a running httpd).  The list holds at most 100,000 URLs a site:\n"
      "what does not fit is said and left out.  Search engines discourage\n"
      "submitting a whole site: --all is for a first submission by choice.\n"
      "  --all  every URL of the site\n" },
    { "why", O_SITE, 0, 1, 1, cmd_why,
      "why DB URL [--site BASE]",
      "Say whether a URL (a full URL, or a path with --site) is listed and,\n"
      "if not, why: the latest verdict the module kept of it, left out (a\n"
      "rule refused it: path info, session, authenticated, excluded, query,\n"
      "content type, cache-control no-store, robots.txt...) or removed\n"
      "(noindex, a canonical naming another URL, status 404, 410 or 301, not\n"
      "for anonymous visitors), with what it names, the status and when.  A\n"
      "listed URL shows its lastmod and last-seen time, and a verdict newer\n"
      "than them.  Verdicts are kept for the latest 10,000 URLs a site.\n"
      "Exit status 0 when the URL is listed or has a verdict, 8 when\n"
      "neither.\n" },
    { "coverage", O_SITE | O_CRAWLER | O_COVERAGE, 1, 0, 0, cmd_coverage,
      "coverage DB --site BASE --crawler NAME [--never | --stale | "
      "--unlisted]",
      "Print the site's listed URLs, one a line in sitemap order: URL,\n"
      "lastmod and the crawler's last verified fetch of it (\"-\": never),\n"
      "separated by tabs.  NAME is a SitemapCrawler's.\n"
      "  --never     only the URLs it never fetched\n"
      "  --stale     only those changed since its last fetch\n"
      "  --unlisted  instead, the URLs it fetched that are not listed (the\n"
      "              newest 1,000 kept; lastmod \"-\")\n" },
    { NULL, 0, 0, 0, 0, NULL, NULL, NULL }
};

static const char exit_statuses[] =
    "Exit status:\n"
    "  0  success\n"
    "  1  check: the file is not sound\n"
    "  2  bad arguments\n"
    "  3  the store cannot be opened (missing, not SQLite, not a mod_sitemap\n"
    "     store, a newer schema, no permission; a database that cannot be\n"
    "     reached or refuses the role)\n"
    "  4  the site is not in the store\n"
    "  5  a log could not be opened or read to its end\n"
    "  6  the store failed while working (locked for more than 5 s, disk\n"
    "     full, I/O error)\n"
    "  7  the output could not be written (an export file, standard output)\n"
    "  8  why: the URL is not listed and no verdict of it is kept\n";

static void usage_all(FILE *out)
{
    const command *cmd;

    fprintf(out, "Usage: %s COMMAND DB [OPTIONS] [ARGS]\n\n"
            "The administrator's command for mod_sitemap's store (DB, the\n"
            "SitemapDatabase file, or its postgresql:// URI).  A site is named\n"
            "by its base URL, as the module names it\n"
            "(--site https://www.example.com).\n\n"
            "Commands:\n", progname);
    for (cmd = commands; cmd->name; cmd++)
        fprintf(out, "  %s %s\n", progname, cmd->usage);
    fprintf(out, "\n%s COMMAND --help describes a command.  Safe to run "
            "while httpd uses the\nstore.\n\n%s", progname, exit_statuses);
}

static void usage_cmd(FILE *out, const command *cmd)
{
    fprintf(out, "Usage: %s %s\n\n%s\n%s", progname, cmd->usage, cmd->help,
            exit_statuses);
}

int usage_error(const command *cmd, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "%s: ", progname);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    if (cmd)
        fprintf(stderr, "Usage: %s %s\n", progname, cmd->usage);
    fprintf(stderr, "Try '%s %s%s--help'.\n", progname,
            cmd ? cmd->name : "", cmd ? " " : "");
    return EX_USAGE;
}

const command *find_command(const char *name)
{
    const command *cmd;
    for (cmd = commands; cmd->name; cmd++)
        if (strcmp(cmd->name, name) == 0)
            return cmd;
    return NULL;
}

/* ---- argument values ------------------------------------------------------ */

static int set_option(ctl *c, const command *cmd, const char *name,
                      const char *value)
{
    const char *err;
    apr_int64_t n;

    if (strcmp(name, "site") == 0) {
        if (!(c->site = sm_url_parse_base(c->pool, value, &err)))
            return usage_error(cmd, "--site '%s' is not a base URL: %s",
                               value, err);
    }
    else if (strcmp(name, "crawler") == 0) {
        if (!*value || strlen(value) > 32
            || strspn(value, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRS"
                      "TUVWXYZ0123456789-_") != strlen(value))
            return usage_error(cmd, "--crawler '%s': a SitemapCrawler's "
                               "NAME, 1 to 32 letters, digits, '-' or '_'",
                               value);
        c->crawler = value;
    }
    else if (strcmp(name, "page") == 0) {
        if (sm_parse_count(value, 1, APR_INT64_C(999999999), &n))
            return usage_error(cmd, "--page '%s': a page number, 1 or more",
                               value);
        c->page = n;
    }
    else if (strcmp(name, "exclude") == 0) {
        sm_regex *re = sm_regex_compile(c->pool, value, &err);
        if (!re)
            return usage_error(cmd, "--exclude: not a valid regular "
                               "expression: %s", err);
        APR_ARRAY_PUSH(c->excludes, sm_regex *) = re;
    }
    else if (strcmp(name, "allow-query") == 0) {
        if (!sm_is_param_name(value))
            return usage_error(cmd, "--allow-query '%s': a query parameter "
                               "name (no '&', '=', '#' or spaces)", value);
        if (!c->allow_query)
            c->allow_query = apr_array_make(c->pool, 4, sizeof(char *));
        APR_ARRAY_PUSH(c->allow_query, const char *) = value;
    }
    else if (strcmp(name, "older-than") == 0) {
        if ((err = sm_ctl_parse_duration(value, &c->older_than)) != NULL)
            return usage_error(cmd, "--older-than '%s': %s", value, err);
    }
    else if (strcmp(name, "lastmod") == 0) {
        if ((err = sm_ctl_parse_time(value, &c->lastmod)) != NULL)
            return usage_error(cmd, "--lastmod '%s': %s", value, err);
        if (!c->lastmod)
            c->lastmod = 1;     /* the epoch itself: still "given" */
    }
    else if (strcmp(name, "page-size") == 0) {
        if (sm_parse_count(value, 1, SM_PAGE_MAX_URLS, &n))
            return usage_error(cmd, "--page-size '%s': a whole number from 1 "
                               "to %d", value, SM_PAGE_MAX_URLS);
        c->page_size = (int)n;
    }
    return EX_OK;
}

/* export's documents beyond the sitemap (see --help export). */
static int set_export_option(ctl *c, const command *cmd, const char *name,
                             const char *value)
{
    sm_export_news *x = &c->news;
    const char *err = NULL, *sp;
    apr_int64_t n;

    if (strcmp(name, "news-path") == 0 || strcmp(name, "llms-path") == 0) {
        const char *ext = name[0] == 'n' ? ".xml" : ".txt";
        apr_size_t len = strlen(value);
        if (value[0] != '/' || len < 5 || strcmp(value + len - 4, ext) != 0
            || strstr(value, "/.") || strstr(value, "//"))
            return usage_error(cmd, "--%s '%s': a URL path such as /news%s "
                               "(starting with '/', ending in %s, no '//' "
                               "or '/.')", name, value, ext, ext);
        if (name[0] == 'n')
            x->news_path = value;
        else
            x->llms_path = value;
    }
    else if (strcmp(name, "news-publication") == 0) {
        char *lang, *l;
        if (!(sp = strrchr(value, ' ')) || sp == value)
            return usage_error(cmd, "--news-publication '%s': the name and "
                               "the language in one argument, such as 'The "
                               "Example Times en'", value);
        x->news_name = apr_pstrmemdup(c->pool, value,
                                      (apr_size_t)(sp - value));
        lang = apr_pstrdup(c->pool, sp + 1);
        for (l = lang; *l; l++)
            *l = (char)apr_tolower(*l);
        if ((err = sm_news_text_problem(x->news_name)) != NULL
            || (err = sm_news_language_problem(lang)) != NULL)
            return usage_error(cmd, "--news-publication '%s': %s (the name, "
                               "then an ISO 639 language code such as en, "
                               "or zh-cn, zh-tw)", value, err);
        x->news_lang = lang;
    }
    else if (strcmp(name, "llms-title") == 0
             || strcmp(name, "llms-summary") == 0) {
        if ((err = sm_news_text_problem(value)) != NULL)
            return usage_error(cmd, "--%s '%s': one line of text: it is %s",
                               name, value, err);
        if (name[5] == 't')
            x->llms_title = value;
        else
            x->llms_summary = value;
    }
    else if (strcmp(name, "llms-max") == 0) {
        if (sm_parse_count(value, 1, SM_LLMS_MAX_LIMIT, &n))
            return usage_error(cmd, "--llms-max '%s': a whole number from 1 "
                               "to %d", value, SM_LLMS_MAX_LIMIT);
        x->llms_max = (int)n;
    }
    return EX_OK;
}

static const struct {
    const char *name;
    int flag;
    int takes_value;
} options[] = {
    { "site", O_SITE, 1 }, { "page", O_PAGE, 1 },
    { "exclude", O_EXCLUDE, 1 }, { "allow-query", O_ALLOW_QUERY, 1 },
    { "older-than", O_OLDER_THAN, 1 }, { "lastmod", O_LASTMOD, 1 },
    { "page-size", O_PAGE_SIZE, 1 }, { "all-types", O_ALL_TYPES, 0 },
    { "all", O_ALL, 0 }, { "crawler", O_CRAWLER, 1 },
    { "never", O_COVERAGE, 0 }, { "stale", O_COVERAGE, 0 },
    { "unlisted", O_COVERAGE, 0 }, { "images", O_IMAGES, 0 },
    { "news-path", O_NEWS_PATH, 1 }, { "news-publication", O_NEWS_PUB, 1 },
    { "llms-path", O_LLMS_PATH, 1 }, { "llms-title", O_LLMS_TITLE, 1 },
    { "llms-summary", O_LLMS_SUMMARY, 1 }, { "llms-max", O_LLMS_MAX, 1 },
};

/* 0 to go on, or an exit status (EX_OK after --help). */
static int parse_args(ctl *c, const command *cmd, int argc,
                      const char *const *argv, int *done)
{
    int i, only_args = 0, seen = 0, rc;
    apr_size_t k;

    *done = 0;
    for (i = 0; i < argc; i++) {
        const char *a = argv[i];

        if (only_args || a[0] != '-' || strcmp(a, "-") == 0) {
            if (!c->db)
                c->db = a;
            else
                APR_ARRAY_PUSH(c->args, const char *) = a;
            continue;
        }
        if (strcmp(a, "--") == 0) {
            only_args = 1;
            continue;
        }
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            usage_cmd(stdout, cmd);
            *done = 1;
            return EX_OK;
        }
        if (a[1] == '-') {
            const char *eq = strchr(a, '=');
            const char *name = eq ? apr_pstrmemdup(c->pool, a + 2,
                                                   (apr_size_t)(eq - a - 2))
                                  : a + 2;
            const char *value = eq ? eq + 1 : NULL;

            for (k = 0; k < sizeof(options) / sizeof(options[0]); k++)
                if (strcmp(options[k].name, name) == 0)
                    break;
            if (k == sizeof(options) / sizeof(options[0])
                || !(cmd->opts & options[k].flag))
                return usage_error(cmd, "%s does not take the option --%s",
                                   cmd->name, name);
            if (!options[k].takes_value) {
                if (value)
                    return usage_error(cmd, "--%s takes no value", name);
                if (options[k].flag == O_ALL_TYPES)
                    c->all_types = 1;
                if (options[k].flag == O_ALL)
                    c->all = 1;
                if (options[k].flag == O_IMAGES)
                    c->images = 1;
                if (options[k].flag == O_COVERAGE) {
                    if (seen & O_COVERAGE)
                        return usage_error(cmd, "give one of --never, "
                                           "--stale and --unlisted");
                    c->coverage = strcmp(name, "never") == 0
                        ? SM_COVERAGE_NEVER
                        : strcmp(name, "stale") == 0 ? SM_COVERAGE_STALE
                                                     : SM_COVERAGE_UNLISTED;
                }
                seen |= options[k].flag;
                continue;
            }
            if (!value) {
                if (i + 1 >= argc)
                    return usage_error(cmd, "--%s needs a value", name);
                value = argv[++i];
            }
            if ((seen & options[k].flag)
                && options[k].flag != O_EXCLUDE
                && options[k].flag != O_ALLOW_QUERY)
                return usage_error(cmd, "--%s is given twice", name);
            seen |= options[k].flag;
            if ((rc = (options[k].flag & O_EXPORT_DOCS)
                      ? set_export_option(c, cmd, name, value)
                      : set_option(c, cmd, name, value)) != EX_OK)
                return rc;
            continue;
        }
        return usage_error(cmd, "unknown option '%s'", a);
    }
    if (!c->db)
        return usage_error(cmd, "no DB (the store file or a postgresql:// "
                           "URI) given");
    c->uri = c->db;
    c->db = sm_uri_mask(c->pool, c->uri);
    if (cmd->site_required && !c->site)
        return usage_error(cmd, "%s needs --site BASE (the site's base URL, "
                           "such as https://www.example.com)", cmd->name);
    if (c->news.news_path && !c->news.news_name)
        return usage_error(cmd, "--news-path needs --news-publication 'NAME "
                           "LANG' (SitemapNewsPublication's values)");
    if (!c->news.llms_path && (seen & (O_LLMS_TITLE | O_LLMS_SUMMARY
                                       | O_LLMS_MAX)))
        return usage_error(cmd, "--llms-title, --llms-summary and --llms-max "
                           "go with --llms-path");
    if ((cmd->opts & O_OLDER_THAN) && !c->older_than)
        return usage_error(cmd, "%s needs --older-than DURATION", cmd->name);
    if (c->args->nelts < cmd->min_args)
        return usage_error(cmd, "%s needs %s", cmd->name,
                           cmd->run == cmd_import ? "at least one LOG"
                           : cmd->run == cmd_export ? "a DIR"
                           : cmd->run == cmd_why ? "a URL"
                           : "at least one URL");
    if (cmd->max_args >= 0 && c->args->nelts > cmd->max_args)
        return usage_error(cmd, "unexpected argument '%s'",
                           APR_ARRAY_IDX(c->args, cmd->max_args,
                                         const char *));
    return EX_OK;
}

/* ---- main ------------------------------------------------------------------- */

/* What was printed must have reached standard output: stdio only reports a
 * full disk or a closed pipe at fflush/fclose, so a command that succeeded
 * fails with EX_WRITE when they do. */
static int finish_output(int rc)
{
    int failed = fflush(stdout) != 0 || ferror(stdout);

    if (fclose(stdout) != 0)
        failed = 1;
    if (failed && rc == EX_OK) {
        say("cannot write to standard output: %s", strerror(errno));
        return EX_WRITE;
    }
    return rc;
}

int main(int argc, const char *const *argv)
{
    const command *cmd;
    apr_pool_t *pool;
    ctl c;
    int rc, done;

    sm_store_init();
    /* A reader that went away (`sitemapctl list DB | head`) is a write
     * error like any other: status 7, said on stderr (finish_output), not
     * death by SIGPIPE. */
    signal(SIGPIPE, SIG_IGN);
    if (argc > 0 && argv[0] && strrchr(argv[0], '/'))
        progname = strrchr(argv[0], '/') + 1;
    else if (argc > 0 && argv[0] && *argv[0])
        progname = argv[0];
    if (argc < 2) {
        usage_all(stderr);
        return EX_USAGE;
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0
        || strcmp(argv[1], "help") == 0) {
        if (argc > 2 && (cmd = find_command(argv[2])) != NULL)
            usage_cmd(stdout, cmd);
        else
            usage_all(stdout);
        return finish_output(EX_OK);
    }
    if (strcmp(argv[1], "--version") == 0) {
        printf("sitemapctl (%s) %s\n", PACKAGE_NAME, PACKAGE_VERSION);
        /* what this build can do (configure --without-...) */
        printf("stores: %s\n", sm_store_backends());
        printf("indexnow: %s\n",
               sm_indexnow_endpoint_problem(NULL, SM_INDEXNOW_DEFAULT_ENDPOINT)
               ? "no" : "yes");
        return finish_output(EX_OK);
    }
    if (!(cmd = find_command(argv[1]))) {
        fprintf(stderr, "%s: unknown command '%s'\n\n", progname, argv[1]);
        usage_all(stderr);
        return EX_USAGE;
    }

    if (apr_app_initialize(&argc, &argv, NULL) != APR_SUCCESS) {
        fprintf(stderr, "%s: cannot initialise APR\n", progname);
        return EX_STORE;
    }
    apr_pool_create(&pool, NULL);
    memset(&c, 0, sizeof(c));
    c.pool = pool;
    c.command = cmd->name;
    c.excludes = apr_array_make(pool, 2, sizeof(sm_regex *));
    c.args = apr_array_make(pool, 4, sizeof(char *));

    rc = parse_args(&c, cmd, argc - 2, argv + 2, &done);
    if (rc == EX_OK && !done)
        rc = cmd->run(&c);
    rc = finish_output(rc);
    apr_pool_destroy(pool);
    apr_terminate();
    return rc;
}
