/* SPDX-License-Identifier: Apache-2.0 */
/* mod_sitemap_prepare.c: the store's directory and file, made ready at
 * start-up by httpd's parent (root, usually) for the children (httpd's
 * User/Group), who write them.
 *
 * - check_config (`apache2ctl -t`, restarts) and the start's dry run
 *   (sitemap_check_store_places): the User must be able to reach
 *   the store's directory (search permission on every directory above it)
 *   and write into it; asked of the kernel by a process running as the
 *   User (see as_server_user), not guessed from mode bits.
 * - post_config: missing directories are made and given to the User, and
 *   an existing store and its journals are given to the User, without
 *   following a link anyone but root could have planted (src/util/sm_fs.c); a
 *   missing store is created by a process running as the User, so that
 *   SQLite, which opens files by name, never creates one as root. */
#include "mod_sitemap.h"

#include "http_core.h"
#include "http_log.h"
#include "unixd.h"

#include <apr_hash.h>
#include <apr_strings.h>

#include "util/sm_fs.h"

#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <sys/wait.h>
#include <unistd.h>

APLOG_USE_MODULE(sitemap);

#define BUSY_TIMEOUT_MS 5000
/* Exit status of a helper process that could not become the User. */
#define NOT_THE_USER 127

typedef int user_task(void *baton);

/* The User's name, for initgroups() and messages ("#1001" names none). */
static const char *user_name(void)
{
    const char *name = ap_unixd_config.user_name;
    struct passwd *pw;

    if ((!name || name[0] == '#')
        && (pw = getpwuid(ap_unixd_config.user_id)) != NULL)
        return pw->pw_name;
    return name ? name : "?";
}

/* Run task as httpd's children will run: with the User, Group and the
 * User's supplementary groups, in a process of its own when we are root;
 * in this process otherwise (the children run as we do).  The task's
 * value (0..126), or -1 when no process could run it (logged).  What the
 * kernel answers that process is exact (ACLs, groups, mounts, LSMs), where
 * comparing mode bits would be a guess. */
static int as_server_user(server_rec *s, user_task *task, void *baton)
{
    pid_t pid;
    int status;

    if (geteuid() != 0)
        return task(baton);
    if ((pid = fork()) < 0) {
        ap_log_error(APLOG_MARK, APLOG_ERR, APR_FROM_OS_ERROR(errno), s,
                     "SitemapDatabase: cannot start a process as the "
                     "server's User");
        return -1;
    }
    if (pid == 0) {
        if (setgid(ap_unixd_config.group_id) != 0
            || initgroups(user_name(), ap_unixd_config.group_id) != 0
            || setuid(ap_unixd_config.user_id) != 0)
            _exit(NOT_THE_USER);
        _exit(task(baton) & 0x7f);
    }
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            return -1;
    if (!WIFEXITED(status) || WEXITSTATUS(status) == NOT_THE_USER) {
        ap_log_error(APLOG_MARK, APLOG_ERR, 0, s, "SitemapDatabase: a "
                     "process could not take the server's User %s (uid %ld, "
                     "gid %ld)", user_name(),
                     (long)ap_unixd_config.user_id,
                     (long)ap_unixd_config.group_id);
        return -1;
    }
    return WEXITSTATUS(status);
}

/* ---- can the User reach and write the directory? ------------------------ */

#define MAX_DEPTH 100

typedef struct {
    const char *dir[MAX_DEPTH + 1];     /* "/a", "/a/b", ... the directory */
    int n;
} reach_check;

/* 0: fine (or a directory still missing, which the parent makes and gives
 * to the User); i in 1..n: dir[i-1] cannot be searched; n+1: the
 * directory cannot be written. */
static int reach_task(void *baton)
{
    const reach_check *rc = baton;
    int i;

    for (i = 0; i < rc->n; i++) {
        if (access(rc->dir[i], X_OK) != 0)
            return errno == ENOENT ? 0 : i + 1;
    }
    return access(rc->dir[rc->n - 1], W_OK | X_OK) == 0 ? 0 : rc->n + 1;
}

static const char *who(apr_pool_t *p)
{
    if (geteuid() != 0)
        return apr_psprintf(p, "the server's user (uid %ld, which the "
                            "children keep)", (long)geteuid());
    return apr_psprintf(p, "the server's User %s (uid %ld, group gid %ld)",
                        user_name(), (long)ap_unixd_config.user_id,
                        (long)ap_unixd_config.group_id);
}

/* A problem with the store's place: fatal at start-up and with -t
 * (configuration generations 0 and 1), as a configuration error: a store
 * the children cannot use would only show later as a sitemap answering
 * 503.  An error in a running server's restart: the User, who owns the
 * directory, must not be able to stop the server by changing it. */
static int place_problem(void)
{
    return ap_state_query(AP_SQ_CONFIG_GEN) <= 1 ? APLOG_EMERG : APLOG_ERR;
}

static int place_status(int level)
{
    return level == APLOG_EMERG ? HTTP_INTERNAL_SERVER_ERROR : OK;
}

/* The walk post_config makes (sitemap_prepare_database), without making
 * anything: a link it would refuse, a file on the way, or a directory it
 * could not make (the nearest existing one not writable by this process,
 * which makes them, or on a read-only or kernel file system) shows at -t
 * already, with the message the start would give. */
static int probe_dir(server_rec *s, const char *path, const char *dir,
                     int level)
{
    char err[512];
    apr_status_t rv = sm_fs_probe_dir(dir, err, sizeof(err));

    if (rv == APR_SUCCESS)
        return OK;
    ap_log_error(APLOG_MARK, level, rv, s, "SitemapDatabase '%s': cannot "
                 "open or create its directory: %s", path, err);
    return place_status(level);
}

static int check_reach(apr_pool_t *p, server_rec *s, const char *path)
{
    int level = place_problem();
    const char *dir, *name;
    reach_check rc;
    char *walk;
    int res;

    sm_fs_split(p, path, &dir, &name);
    if ((res = probe_dir(s, path, dir, level)) != OK)
        return res;
    rc.n = 0;
    walk = apr_pstrdup(p, dir);
    if (*walk == '/') {
        char *c;
        for (c = walk + 1; *c && rc.n < MAX_DEPTH; c++)
            if (*c == '/' && c[-1] != '/')
                rc.dir[rc.n++] = apr_pstrmemdup(p, walk,
                                                (apr_size_t)(c - walk));
    }
    if (strcmp(dir, "/") != 0 && rc.n < MAX_DEPTH + 1
        && (rc.n == 0 || strcmp(rc.dir[rc.n - 1], dir) != 0))
        rc.dir[rc.n++] = dir;
    if (rc.n == 0)
        return OK;
    res = as_server_user(s, reach_task, &rc);
    if (res > 0 && res <= rc.n) {
        ap_log_error(APLOG_MARK, level, 0, s, "SitemapDatabase '%s' "
                     "is not allowed: %s cannot reach '%s' (it needs search "
                     "permission, x, on every directory above the store); "
                     "choose a directory the User can reach or change "
                     "the permissions", path, who(p), rc.dir[res - 1]);
        return place_status(level);
    }
    if (res == rc.n + 1) {
        ap_log_error(APLOG_MARK, level, 0, s, "SitemapDatabase '%s' "
                     "is not allowed: %s cannot write into the directory "
                     "'%s' (SQLite creates its journal files there)", path,
                     who(p), dir);
        return place_status(level);
    }
    return OK;
}

/* The command of `httpd -k CMD` (or -kCMD), NULL without one or when it
 * cannot be known.  httpd's MPM code takes -k out of process->argv
 * (ap_mpm_rewrite_args) before any loaded module runs, so the command
 * line is read from the kernel (Linux's /proc). */
static const char *dash_k(apr_pool_t *p)
{
    apr_file_t *f;
    char *buf = apr_palloc(p, 65536), *a, *end;
    apr_size_t n = 65535;

    if (apr_file_open(&f, "/proc/self/cmdline", APR_FOPEN_READ, 0, p)
        != APR_SUCCESS)
        return NULL;
    if (apr_file_read_full(f, buf, n, &n) != APR_SUCCESS && n == 0) {
        apr_file_close(f);
        return NULL;
    }
    apr_file_close(f);
    buf[n] = '\0';
    end = buf + n;
    for (a = buf + strlen(buf) + 1; a < end; a += strlen(a) + 1) {
        if (a[0] != '-' || a[1] != 'k')
            continue;
        if (a[2])
            return a + 2;
        a += strlen(a) + 1;
        return a < end ? a : NULL;
    }
    return NULL;
}

/* What the configuration alone decides beyond the sites' bases (IndexNow's
 * key, what SitemapSiteFromHost cannot go with, the crawlers' files): at
 * a restart these stop the running server, so `-k graceful` and `-k
 * restart` refuse them before they signal, as -t does. */
static int check_settings(apr_pool_t *ptemp, server_rec *main_s)
{
    server_rec *s;
    int rc;

    for (s = main_s; s; s = s->next) {
        sitemap_server_conf *conf = SITEMAP_CONF(s);

        if (conf->enabled != 1)
            continue;
        if ((rc = sitemap_indexnow_check(s, conf)) != OK
            || (rc = sitemap_hosts_check(s, conf)) != OK
            || (rc = sitemap_crawl_open(ptemp, s, conf)) != OK)
            return rc;
    }
    return OK;
}

int sitemap_check_config(apr_pool_t *pconf, apr_pool_t *plog,
                         apr_pool_t *ptemp, server_rec *main_s)
{
    (void)pconf; (void)plog;
    /* A command that only signals the running server (-k stop,
     * graceful-stop, graceful, restart) reads the configuration too, at
     * generation 0, before it signals: a stop must work whatever became
     * of the store's directory or the configuration.  A start checks in
     * post_config's dry run (still in the foreground, so the command
     * fails), -t and a restart here. */
    if (ap_state_query(AP_SQ_CONFIG_GEN) == 0
        && ap_state_query(AP_SQ_RUN_MODE) != AP_SQ_RM_CONFIG_TEST) {
        const char *k = dash_k(ptemp);
        /* What the configuration alone decides (the sites' bases and
         * scopes, limits) refuses `-k graceful` and `-k restart` before
         * they signal: the running server is not asked to re-read a
         * configuration it would exit on. */
        if (k && (strcmp(k, "graceful") == 0 || strcmp(k, "restart") == 0))
            return sitemap_check_sites(ptemp, main_s) == OK
                   ? check_settings(ptemp, main_s)
                   : HTTP_INTERNAL_SERVER_ERROR;
        return OK;
    }
    if (sitemap_check_sites(ptemp, main_s) != OK)
        return HTTP_INTERNAL_SERVER_ERROR;
    return sitemap_check_store_places(ptemp, main_s);
}

int sitemap_check_store_places(apr_pool_t *ptemp, server_rec *main_s)
{
    apr_hash_t *checked = apr_hash_make(ptemp);
    server_rec *s;
    const char *dir, *name;
    int rc;

    if ((rc = check_settings(ptemp, main_s)) != OK)
        return rc;
    for (s = main_s; s; s = s->next) {
        sitemap_server_conf *conf = SITEMAP_CONF(s);
        const char *path;

        if (conf->enabled != 1)
            continue;
        path = conf->db_path ? conf->db_path
                             : sitemap_default_db(ptemp, conf);
        /* A PostgreSQL URI names no place on this machine. */
        if (!sm_store_is_file(path))
            continue;
        /* Once per directory: a thousand vhosts with a store file each in
         * one directory cost one check (a process as the User), not a
         * thousand. */
        sm_fs_split(ptemp, path, &dir, &name);
        if (apr_hash_get(checked, dir, APR_HASH_KEY_STRING))
            continue;
        apr_hash_set(checked, dir, APR_HASH_KEY_STRING, "");
        if ((rc = check_reach(ptemp, s, path)) != OK)
            return rc;
    }
    return OK;
}

/* ---- making the store ----------------------------------------------------- */

typedef struct {
    apr_pool_t *pool;
    server_rec *s;
    const char *path;
    const sm_logger *log;
} create_store;

static int create_one(create_store *cs)
{
    sm_store *st;
    char err[512];
    apr_status_t rv;

    rv = sm_store_open(&st, cs->pool, cs->path, SM_STORE_CREATE,
                       BUSY_TIMEOUT_MS, cs->log, err, sizeof(err));
    if (rv != APR_SUCCESS) {
        /* Not fatal: a store fault must never stop the site.  The children
         * keep trying and log it. */
        ap_log_error(APLOG_MARK, APLOG_ERR, rv, cs->s, "SitemapDatabase: "
                     "'%s': %s; pages are served, recording waits for the "
                     "store", cs->path, err);
        return 1;
    }
    sm_store_close(st);
    return 0;
}

/* Every missing store of this start, in one process as the User: made
 * together (one sync for all), and any that could not be opened one by
 * one, which logs why. */
static int create_task(void *baton)
{
    const apr_array_header_t *missing = baton;
    const char **paths;
    char *made;
    apr_pool_t *p;
    int i, n = missing->nelts, failed = 0;

    if (n == 0)
        return 0;
    p = APR_ARRAY_IDX(missing, 0, create_store).pool;
    paths = apr_palloc(p, sizeof(*paths) * (apr_size_t)n);
    made = apr_palloc(p, (apr_size_t)n);
    for (i = 0; i < n; i++)
        paths[i] = APR_ARRAY_IDX(missing, i, create_store).path;
    sm_store_make_new(p, paths, n, made);
    for (i = 0; i < n; i++)
        if (!made[i])
            failed |= create_one(&APR_ARRAY_IDX(missing, i, create_store));
    return failed;
}

apr_array_header_t *sitemap_missing_stores(apr_pool_t *p)
{
    return apr_array_make(p, 4, sizeof(create_store));
}

/* Stores created before the children start: the rest, the children's
 * writers create as they start (in the background).  Made together from
 * the schema's template with one sync (sm_store_make_new), a store costs
 * about 0.35 ms (bench/RESULTS.md), so 1,000 new vhosts start in well
 * under a second and errors show at start; made one by one it cost 5 ms,
 * mostly fsync, and only 64 were made here. */
#define CREATE_AT_START 2000

void sitemap_create_stores(server_rec *s, apr_array_header_t *missing)
{
    if (missing->nelts > CREATE_AT_START) {
        ap_log_error(APLOG_MARK, APLOG_NOTICE, 0, s, "SitemapDatabase: %d "
                     "stores are missing; %d are created now, the others by "
                     "the children as they start", missing->nelts,
                     CREATE_AT_START);
        missing->nelts = CREATE_AT_START;
    }
    if (missing->nelts)
        as_server_user(s, create_task, missing);
}

int sitemap_prepare_database(apr_pool_t *p, server_rec *s, const char *path,
                             const sm_logger *log,
                             apr_array_header_t *missing_out)
{
    static const char *const journals[] = { "", "-wal", "-shm" };
    int root = geteuid() == 0;
    uid_t uid = root ? ap_unixd_config.user_id : SM_FS_KEEP_ID;
    gid_t gid = root ? ap_unixd_config.group_id : (gid_t)SM_FS_KEEP_ID;
    const char *dir, *name;
    create_store cs = { p, s, path, log };
    char err[512];
    int dirfd, missing = 0;
    apr_status_t rv;
    apr_size_t i;

    sm_fs_split(p, path, &dir, &name);
    rv = sm_fs_open_dir(dir, 1, uid, gid, &dirfd, err, sizeof(err));
    if (rv != APR_SUCCESS) {
        int level = place_problem();
        ap_log_error(APLOG_MARK, level, rv, s, "SitemapDatabase '%s': "
                     "cannot open or create its directory: %s", path, err);
        return place_status(level);
    }
    /* An existing store is left to the children: opening it here while
     * children of the old generation write to it (a graceful restart)
     * is not ours to do.  It and its journals only change owner, when
     * they are what they should be. */
    for (i = 0; root && i < sizeof(journals) / sizeof(journals[0]); i++) {
        const char *file = apr_pstrcat(p, name, journals[i], NULL);

        rv = sm_fs_give_file(dirfd, file, uid, gid, err, sizeof(err));
        if (APR_STATUS_IS_ENOENT(rv))
            missing |= i == 0;
        else if (rv != APR_SUCCESS)
            /* Not fatal: the User who planted it could stop the server at
             * every restart otherwise. */
            ap_log_error(APLOG_MARK, APLOG_ERR, rv, s, "SitemapDatabase: "
                         "'%s%s' is left as it is, not given to the server's "
                         "User: %s", path, journals[i], err);
    }
    close(dirfd);
    if (!root) {
        apr_finfo_t fi;
        missing = apr_stat(&fi, path, APR_FINFO_LINK, p) != APR_SUCCESS;
    }
    if (missing)
        APR_ARRAY_PUSH(missing_out, create_store) = cs;
    return OK;
}

apr_status_t sitemap_prepare_dir(const char *dir, char *err, apr_size_t len)
{
    int root = geteuid() == 0, fd;
    apr_status_t rv = sm_fs_open_dir(dir, 1,
                                     root ? ap_unixd_config.user_id
                                          : SM_FS_KEEP_ID,
                                     root ? ap_unixd_config.group_id
                                          : (gid_t)SM_FS_KEEP_ID,
                                     &fd, err, len);
    if (rv == APR_SUCCESS)
        close(fd);
    return rv;
}
