/* SPDX-License-Identifier: Apache-2.0 */
/* mod_sitemap_config_site.c: the directives that say where the site is and
 * where it is kept: its store, the state directory, its base URL, the
 * host names of a mass-hosting vhost, the renditions' directory and the
 * stylesheet.  Each of its own kind (the common kinds are read in
 * mod_sitemap_config.c). */
#include "mod_sitemap_config.h"

#include "http_core.h"

#include <apr_strings.h>
#include <sys/stat.h>

#include "serve/sm_sitemap.h"

/* Does the nearest existing ancestor of path look usable for the store?
 * Creating it and handing it to User/Group happens in post_config. */
const char *sitemap_db_location_problem(apr_pool_t *p, const char *path)
{
    struct stat sb;
    char *dir = apr_pstrdup(p, path);
    char *slash;

    if (stat(path, &sb) == 0 && !S_ISREG(sb.st_mode))
        return apr_psprintf(p, "SitemapDatabase: '%s' exists and is not a "
                            "regular file; give the path of an SQLite file "
                            "(it is created if missing)", path);
    while ((slash = strrchr(dir, '/')) != NULL) {
        *slash = '\0';
        if (!*dir)
            return NULL;            /* reached "/" */
        if (stat(dir, &sb) == 0) {
            if (!S_ISDIR(sb.st_mode))
                return apr_psprintf(p, "SitemapDatabase: '%s' cannot be "
                                    "created: '%s' is not a directory",
                                    path, dir);
            return NULL;
        }
    }
    return NULL;
}

/* SitemapStateDir: the main server's only (every vhost's default store
 * and every URI store's spills are there). */
const char *sitemap_set_state_dir(cmd_parms *cmd, void *dconf,
                                  const char *arg)
{
    const char *err = ap_check_cmd_context(cmd, GLOBAL_ONLY);
    char *path;
    apr_size_t n;
    (void)dconf;

    if (err)
        return err;
    if (!*arg || !(path = ap_server_root_relative(cmd->pool, arg)))
        return apr_psprintf(cmd->pool, "SitemapStateDir: '%s' is not "
                            "allowed: give a directory, absolute or relative "
                            "to ServerRoot", arg);
    for (n = strlen(path); n > 1 && path[n - 1] == '/'; n--)
        path[n - 1] = '\0';
    SITEMAP_CONF(cmd->server)->state_dir = path;
    return NULL;
}

const char *sitemap_set_database(cmd_parms *cmd, void *dconf, const char *arg)
{
    const char *err = sitemap_in_server_only(cmd);
    const char *path;
    (void)dconf;

    if (err)
        return err;
    if (!*arg)
        return "SitemapDatabase: '' is not allowed: give the path of an "
               "SQLite file or a postgresql:// URI";
    if ((err = sm_store_location_problem(cmd->pool, arg)) != NULL)
        return apr_psprintf(cmd->pool, "SitemapDatabase: '%s' cannot be "
                            "used: %s", sm_uri_mask(cmd->pool, arg), err);
    if (!sm_store_is_file(arg)) {
        /* a database server's: no place on this machine */
        SITEMAP_CONF(cmd->server)->db_path = arg;
        return NULL;
    }
    path = ap_server_root_relative(cmd->pool, arg);
    if (!path)
        return apr_psprintf(cmd->pool, "SitemapDatabase: '%s' is not a valid "
                            "path", arg);
    /* What is at the path is the state of the store, not configuration:
     * checked here only by a configuration test (-t).  `-k stop` and
     * `-k graceful` read the configuration too, and must work whatever
     * became of the store meanwhile; a start checks it in post_config. */
    if (ap_state_query(AP_SQ_RUN_MODE) == AP_SQ_RM_CONFIG_TEST
        && (err = sitemap_db_location_problem(cmd->pool, path)) != NULL)
        return err;
    SITEMAP_CONF(cmd->server)->db_path = path;
    return NULL;
}

const char *sitemap_set_base_url(cmd_parms *cmd, void *dconf, const char *arg)
{
    const char *err = sitemap_in_server_only(cmd);
    const char *base, *path = NULL, *origin = arg, *sep;
    (void)dconf;

    if (err)
        return err;
    /* A site under a path: scheme://host[:port]/dir/ (the path ends in
     * "/", and holds what SitemapPath may). */
    if ((sep = ap_strstr_c(arg, "://")) != NULL
        && (sep = strchr(sep + 3, '/')) != NULL && strcmp(sep, "/") != 0
        && !strpbrk(sep, "?#")) {
        origin = apr_pstrmemdup(cmd->temp_pool, arg, (apr_size_t)(sep - arg));
        path = sep;
        if (path[strlen(path) - 1] != '/'
            || sm_sitemap_path_check(apr_pstrcat(cmd->temp_pool, path,
                                                 "sitemap.xml", NULL)))
            return apr_psprintf(cmd->pool, "SitemapBaseURL: '%s' is not "
                                "allowed: the path of a site must be a "
                                "directory ending in '/' (such as "
                                "https://example.com/blog/), of the "
                                "characters a URL path holds literally, "
                                "without empty, '.' or '..' segments", arg);
    }
    if (!(base = sm_url_parse_base(cmd->pool, origin, &err)))
        return apr_psprintf(cmd->pool, "SitemapBaseURL: '%s' is not allowed: "
                            "%s", arg, err);
    SITEMAP_CONF(cmd->server)->base_url = base;
    SITEMAP_CONF(cmd->server)->base_path = path ? apr_pstrdup(cmd->pool, path)
                                                : NULL;
    return NULL;
}

/* SitemapSiteFromHost: the pattern must match the whole normal name. */
const char *sitemap_set_site_from_host(cmd_parms *cmd, void *dconf,
                                       const char *arg)
{
    const char *err = sitemap_in_server_only(cmd);
    sm_regex *re;
    (void)dconf;

    if (err)
        return err;
    /* Alone first: a pattern such as "a)|(b" must not balance the
     * anchoring group. */
    if (!*arg || !sm_regex_compile(cmd->temp_pool, arg, &err)
        || !(re = sm_regex_compile(cmd->pool, apr_pstrcat(cmd->temp_pool,
                                   "^(?:", arg, ")$", NULL), &err)))
        return apr_psprintf(cmd->pool, "SitemapSiteFromHost: '%s' is not a "
                            "valid regular expression: %s", arg,
                            *arg ? err : "empty");
    SITEMAP_CONF(cmd->server)->host_re = re;
    return NULL;
}

/* SitemapCache On|Off|DIR: a directory (relative to ServerRoot; httpd
 * resolves "." and ".." segments) turns it on there; no trailing "/", so
 * one directory has one spelling. */
const char *sitemap_set_cache(cmd_parms *cmd, void *dconf, const char *arg)
{
    sitemap_server_conf *conf = SITEMAP_CONF(cmd->server);
    const char *err = sitemap_in_server_only(cmd);
    const char *path;
    (void)dconf;

    if (err)
        return err;
    if (strcasecmp(arg, "On") == 0 || strcasecmp(arg, "Off") == 0) {
        conf->cache = strcasecmp(arg, "On") == 0;
        conf->cache_dir = NULL;
        return NULL;
    }
    path = *arg ? ap_server_root_relative(cmd->pool, arg) : NULL;
    if (!path || strlen(path) < 2 || path[strlen(path) - 1] == '/'
        || strstr(path, "//"))
        return apr_psprintf(cmd->pool, "SitemapCache: '%s' is not allowed: "
                            "On, Off, or the path of a directory (relative "
                            "to ServerRoot; no trailing '/')", arg);
    conf->cache = 1;
    conf->cache_dir = path;
    return NULL;
}

/* On, Off, or the URL of the administrator's own stylesheet. */
const char *sitemap_set_stylesheet(cmd_parms *cmd, void *dconf,
                                   const char *arg)
{
    const char *err = sitemap_in_server_only(cmd);
    sitemap_server_conf *conf = SITEMAP_CONF(cmd->server);
    (void)dconf;

    if (err)
        return err;
    if (strcasecmp(arg, "On") == 0 || strcasecmp(arg, "Off") == 0) {
        conf->stylesheet_on = strcasecmp(arg, "On") == 0;
        conf->stylesheet_url = NULL;
        return NULL;
    }
    if ((err = sm_stylesheet_url_check(arg)) != NULL)
        return apr_psprintf(cmd->pool, "SitemapStylesheet: '%s' is not "
                            "allowed: the URL %s; wanted On, Off or a URL "
                            "such as /styles/sitemap.css or "
                            "https://www.example.com/sitemap.css", arg, err);
    conf->stylesheet_on = 2;
    conf->stylesheet_url = arg;
    return NULL;
}
