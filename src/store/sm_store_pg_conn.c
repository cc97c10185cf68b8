/* SPDX-License-Identifier: Apache-2.0 */
/* sm_store_pg_conn.c: the PostgreSQL store's connection, statements and
 * schema (see sm_store_pg.h). */
#include "store/sm_store_pg.h"

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>

/* The longest a statement goes unanswered before the connection is given
 * up: past the server's own statement_timeout (30 s), so a live server
 * always answers first.  A server that answers nothing at all (stopped,
 * its host frozen) while the kernel keeps the connection alive is noticed
 * by nothing else: keepalives and tcp_user_timeout see a healthy peer,
 * and libpq's PQexec waits forever. */
#define PG_ANSWER_WAIT apr_time_from_sec(35)
/* How often a wait looks at the writer's stop flag. */
#define PG_POLL_SLICE_MS 100

/* Schema steps: entry i upgrades schema_version i to i + 1. */
static const char *const schema_steps[SM_PG_SCHEMA_VERSION] = {
    /* 0 -> 1 */
    "CREATE TABLE sitemap_meta("
    "  key text PRIMARY KEY, value text NOT NULL);"
    "INSERT INTO sitemap_meta(key, value) VALUES"
    "  ('store_id', substr(md5(random()::text || clock_timestamp()::text),"
    "               1, 16)),"
    "  ('created', floor(extract(epoch FROM now()))::bigint::text),"
    "  ('schema_version', '0');"
    /* 2^22 sites: a URL id is site << 40 + n in a bigint. */
    "CREATE SEQUENCE sitemap_site_ids MAXVALUE 4194303;"
    "CREATE TABLE sitemap_sites("
    "  id bigint PRIMARY KEY,"
    "  base text NOT NULL UNIQUE,"
    "  page_size integer NOT NULL DEFAULT 50000,"
    "  last_page bigint NOT NULL DEFAULT 1,"
    "  url_count bigint NOT NULL DEFAULT 0,"
    "  next_id bigint NOT NULL,"
    "  settings text NOT NULL DEFAULT '',"
    "  index_changed bigint NOT NULL DEFAULT 0,"
    "  settings_changed bigint NOT NULL DEFAULT 0,"
    "  expiry_claimed bigint NOT NULL DEFAULT 0);"
    "CREATE TABLE sitemap_urls("
    "  id bigint PRIMARY KEY,"
    "  site_id bigint NOT NULL,"
    "  url text NOT NULL,"
    "  page bigint NOT NULL,"
    "  lastmod bigint NOT NULL,"
    "  etag text,"
    "  first_seen bigint NOT NULL,"
    "  last_seen bigint NOT NULL,"
    "  xml_len integer NOT NULL,"
    "  UNIQUE(site_id, url));"
    "CREATE TABLE sitemap_pages("
    "  site_id bigint NOT NULL,"
    "  page bigint NOT NULL,"
    "  url_count bigint NOT NULL DEFAULT 0,"
    "  xml_bytes bigint NOT NULL DEFAULT 0,"
    "  lastmod bigint NOT NULL DEFAULT 0,"
    "  changed bigint NOT NULL DEFAULT 0,"
    "  version bigint NOT NULL DEFAULT 0,"
    "  first_id bigint NOT NULL,"
    "  PRIMARY KEY(site_id, page));",
    /* 1 -> 2: IndexNow's pending list and per-site state (see
     * sm_store_pg_indexnow.c); times in microseconds. */
    "CREATE TABLE sitemap_indexnow_pending("
    "  site text NOT NULL,"
    "  url text NOT NULL,"
    "  queued bigint NOT NULL,"
    "  PRIMARY KEY(site, url));"
    "CREATE TABLE sitemap_indexnow_state("
    "  site text PRIMARY KEY,"
    "  claimed_until bigint NOT NULL DEFAULT 0,"
    "  next_try bigint NOT NULL DEFAULT 0,"
    "  backoff bigint NOT NULL DEFAULT 0,"
    "  sent bigint NOT NULL DEFAULT 0,"
    "  dropped bigint NOT NULL DEFAULT 0,"
    "  overflow bigint NOT NULL DEFAULT 0,"
    "  overflow_logged bigint NOT NULL DEFAULT 0,"
    "  last_sent bigint NOT NULL DEFAULT 0,"
    "  last_status integer NOT NULL DEFAULT 0,"
    "  last_reason text NOT NULL DEFAULT '');",
    /* 2 -> 3: the page's <title> for the HTML site map (NULL: not known) */
    "ALTER TABLE sitemap_urls ADD COLUMN title text;"
    /* and URLs removed per site and day (the status page's chart) */
    "CREATE TABLE sitemap_removed_days("
    "  site_id bigint NOT NULL, day bigint NOT NULL, n bigint NOT NULL,"
    "  PRIMARY KEY(site_id, day));",
    /* 3 -> 4: the page's hreflang alternates (sm_alternates.h: "hreflang
     * href" lines; NULL: none or not known).  A column, not a table, for
     * the reasons given in sm_store_sqlite.c (read and written whole with
     * their URL, nothing to keep in step on removals). */
    "ALTER TABLE sitemap_urls ADD COLUMN alternates text;",
    /* 4 -> 5: the latest verdict of URLs left out or removed, at most
     * SM_VERDICTS_MAX a site (see sm_store_sqlite_schema.c). */
    "CREATE TABLE sitemap_verdicts("
    "  site_id bigint NOT NULL,"
    "  url text NOT NULL,"
    "  seq bigint NOT NULL,"
    "  verdict text NOT NULL,"
    "  reason text NOT NULL,"
    "  detail text,"
    "  status integer NOT NULL DEFAULT 0,"
    "  at bigint NOT NULL,"
    "  PRIMARY KEY(site_id, url));"
    "CREATE INDEX sitemap_verdicts_by_seq ON sitemap_verdicts(site_id, seq);",
    /* 5 -> 6: IndexNow's corroboration (see sm_store_sqlite_schema.c):
     * held keeps a held URL's first day and client tag, 0: not held. */
    "ALTER TABLE sitemap_urls ADD COLUMN held bigint NOT NULL DEFAULT 0;",
    /* 6 -> 7: crawl coverage (see sm_store_sqlite_schema.c).  A URL's
     * fetches go with it by the foreign key (its trigger runs as the
     * table's owner: a role that removes URLs needs no grant on
     * sitemap_crawls for it). */
    "CREATE TABLE sitemap_crawls("
    "  url_id bigint NOT NULL REFERENCES sitemap_urls(id) ON DELETE CASCADE,"
    "  crawler text NOT NULL,"
    "  fetched bigint NOT NULL,"
    "  status integer NOT NULL DEFAULT 0,"
    "  PRIMARY KEY(url_id, crawler));"
    "CREATE TABLE sitemap_crawlers("
    "  site_id bigint NOT NULL,"
    "  crawler text NOT NULL,"
    "  unlisted_hits bigint NOT NULL DEFAULT 0,"
    "  sitemap_fetches bigint NOT NULL DEFAULT 0,"
    "  last_sitemap_fetch bigint NOT NULL DEFAULT 0,"
    "  PRIMARY KEY(site_id, crawler));"
    "CREATE TABLE sitemap_crawl_unlisted("
    "  site_id bigint NOT NULL,"
    "  crawler text NOT NULL,"
    "  url text NOT NULL,"
    "  seq bigint NOT NULL,"
    "  fetched bigint NOT NULL,"
    "  status integer NOT NULL DEFAULT 0,"
    "  PRIMARY KEY(site_id, crawler, url));"
    "CREATE INDEX sitemap_crawl_unlisted_by_seq"
    "  ON sitemap_crawl_unlisted(site_id, crawler, seq);",
    /* 7 -> 8: images per listed page (see sm_store_sqlite_schema.c); a page's
     * go with it by the foreign key. */
    "CREATE TABLE sitemap_images("
    "  url_id bigint NOT NULL REFERENCES sitemap_urls(id) ON DELETE CASCADE,"
    "  image text NOT NULL,"
    "  site_id bigint NOT NULL,"
    "  source integer NOT NULL,"
    "  last_seen bigint NOT NULL,"
    "  PRIMARY KEY(url_id, image));"
    "CREATE INDEX sitemap_images_by_image ON sitemap_images(site_id, image);"
    "CREATE INDEX sitemap_images_by_seen"
    "  ON sitemap_images(url_id, last_seen);",
    /* 8 -> 9: crawl coverage per UTC day, and SitemapIndexNowStale's
     * mark (see sm_store_sqlite_schema.c). */
    "CREATE TABLE sitemap_crawl_days("
    "  site_id bigint NOT NULL,"
    "  crawler text NOT NULL,"
    "  day bigint NOT NULL,"
    "  listed bigint NOT NULL,"
    "  crawled bigint NOT NULL,"
    "  PRIMARY KEY(site_id, crawler, day));"
    "ALTER TABLE sitemap_crawls ADD COLUMN stale_sent bigint NOT NULL"
    "  DEFAULT 0;",
    /* 9 -> 10: the news sitemap and llms.txt (see sm_store_sqlite_schema.c) */
    "ALTER TABLE sitemap_urls ADD COLUMN description text;"
    "ALTER TABLE sitemap_urls ADD COLUMN published bigint NOT NULL DEFAULT 0;"
    "CREATE INDEX sitemap_urls_published ON sitemap_urls(published)"
    "  WHERE published > 0;",
    /* 10 -> 11: the site's robots.txt (see sm_store_sqlite_schema.c). */
    "CREATE TABLE sitemap_robots("
    "  site_id bigint PRIMARY KEY,"
    "  body text NOT NULL,"
    "  hash bigint NOT NULL,"
    "  seen bigint NOT NULL,"
    "  sweep text);",
    /* 11 -> 12: each page's oldest last_seen, which expiry reads (see
     * sm_store_sqlite_schema.c; 0: not known, walked at the next
     * expiry).  A constant default: no row is rewritten. */
    ("ALTER TABLE sitemap_pages ADD COLUMN oldest_seen bigint NOT NULL"
     "  DEFAULT 0;"),
    /* 12 -> 13: URLs compared byte by byte ("C"), as SQLite compares them:
     * the (site_id, url) index is searched on every URL added or looked
     * up, each comparison in the database's collation a strcoll.  Equal
     * is equal in both (no row can clash); the index is rebuilt. */
    "ALTER TABLE sitemap_urls ALTER COLUMN url TYPE text COLLATE \"C\";",
};

/* ---- statements -------------------------------------------------------- */




void sm_pg_set_error(pg_store *s, const char *what, const PGresult *res)
{
    const char *msg = res ? PQresultErrorMessage(res) : "";
    apr_size_t len;

    if (!msg || !*msg)
        msg = s->conn ? PQerrorMessage(s->conn) : "out of memory";
    apr_snprintf(s->base.errmsg, sizeof(s->base.errmsg), "%s: %s", what,
                 msg && *msg ? msg : "unknown error");
    /* The first line: PostgreSQL's LINE/HINT lines quote the statement. */
    s->base.errmsg[strcspn(s->base.errmsg, "\n")] = '\0';
    len = strlen(s->base.errmsg);
    while (len && (s->base.errmsg[len - 1] == '\n'
                   || s->base.errmsg[len - 1] == ' '))
        s->base.errmsg[--len] = '\0';
}

/* Run sql with ps; the result on success (PQclear it), NULL (errmsg set)
 * otherwise. */
static PGresult *sm_pg_succeeded(pg_store *s, const char *what, PGresult *res)
{
    ExecStatusType st = res ? PQresultStatus(res) : PGRES_FATAL_ERROR;

    if (st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK)
        return res;
    sm_pg_set_error(s, what, res);
    PQclear(res);
    return NULL;
}

/* No result: errmsg says why.  A server that did not answer in time
 * (hung) has its connection given up: what a statement left open on the
 * server ends when the server sees the connection closed (PQcancel would
 * need the postmaster to answer a new connection, which a hung server
 * never does: libpq's PQcancel would then block with no timeout).  A
 * connection that broke is left to libpq (PQstatus says so): it is made
 * again at once, as after a restart of the server. */
static PGresult *give_up(pg_store *s, const char *what, PGresult *last,
                         const char *why, int hung)
{
    PQclear(last);
    apr_snprintf(s->base.errmsg, sizeof(s->base.errmsg), "%s: %s", what,
                 why && *why ? why : "connection lost");
    s->base.errmsg[strcspn(s->base.errmsg, "\n")] = '\0';
    if (hung) {
        PQfinish(s->conn);
        s->conn = NULL;
        s->gave_up = 1;
    }
    return NULL;
}

/* Is the writer stopping?  Then from the first time it is seen, every
 * wait ends within the busy timeout (s->stop_deadline). */
static int stop_seen(pg_store *s, apr_time_t now)
{
    if (!sm_store_stop_asked(&s->base))
        return 0;
    if (!s->stop_deadline)
        s->stop_deadline = now + apr_time_from_msec(s->lock_timeout_ms);
    return 1;
}

/* The result of the statement just sent (as PQexec: the last one, or the
 * first error), waiting at most PG_ANSWER_WAIT, and at most the busy
 * timeout once the writer stops.  NULL (errmsg set, the connection closed)
 * when there is none in time. */
static PGresult *await_result(pg_store *s, const char *what)
{
    apr_time_t now = apr_time_now(), deadline = now + PG_ANSWER_WAIT;
    PGresult *last = NULL, *res;

    for (;;) {
        struct pollfd pfd;
        apr_time_t end;
        int flushed = PQflush(s->conn), slice, r;

        if (flushed < 0)
            return give_up(s, what, last, PQerrorMessage(s->conn), 0);
        if (flushed == 0) {
            /* (a connection that broke gives an error result, as PQexec) */
            int ok = PQconsumeInput(s->conn);
            while (!PQisBusy(s->conn)) {
                if (!(res = PQgetResult(s->conn)))
                    return last ? last
                           : give_up(s, what, NULL, PQerrorMessage(s->conn),
                                     0);
                if (last && PQresultStatus(last) == PGRES_FATAL_ERROR) {
                    PQclear(res);
                    continue;
                }
                PQclear(last);
                last = res;
                /* COPY FROM STDIN: the data is the caller's to send
                 * (sm_pg_copy_in); libpq would hand this result again. */
                if (PQresultStatus(res) == PGRES_COPY_IN)
                    return res;
            }
            if (!ok)
                return give_up(s, what, last, PQerrorMessage(s->conn), 0);
        }
        now = apr_time_now();
        end = stop_seen(s, now) && s->stop_deadline < deadline
              ? s->stop_deadline : deadline;
        if (now >= end)
            return give_up(s, what, last, end != deadline
                           ? "no answer from the database before the stop's"
                             " deadline (the busy timeout); connection "
                             "closed"
                           : "no answer from the database within 35 s (it "
                             "hangs); connection closed", 1);
        slice = (int)apr_time_as_msec(end - now) + 1;
        if (slice > PG_POLL_SLICE_MS)
            slice = PG_POLL_SLICE_MS;
        pfd.fd = PQsocket(s->conn);
        pfd.events = POLLIN | (flushed ? POLLOUT : 0);
        pfd.revents = 0;
        r = poll(&pfd, 1, slice);
        if (r < 0 && errno != EINTR)
            return give_up(s, what, last, "poll failed", 1);
    }
}

PGresult *sm_pg_q(pg_store *s, const char *what, const char *sql,
                  const params *ps)
{
    PGresult *res;

    if (!s->conn || !PQsendQueryParams(s->conn, sql, ps ? ps->n : 0, NULL,
                                       ps ? ps->v : NULL, NULL, NULL, 0))
        return sm_pg_succeeded(s, what, NULL);
    res = await_result(s, what);
    return res ? sm_pg_succeeded(s, what, res) : NULL;
}

PGresult *sm_pg_q_binary(pg_store *s, const char *what, const char *sql,
                         int n, const char *const *values,
                         const int *lengths, const int *formats)
{
    PGresult *res;

    if (!s->conn || !PQsendQueryParams(s->conn, sql, n, NULL, values,
                                       lengths, formats, 0))
        return sm_pg_succeeded(s, what, NULL);
    res = await_result(s, what);
    return res ? sm_pg_succeeded(s, what, res) : NULL;
}

/* A statement without a result worth keeping. */
int sm_pg_run(pg_store *s, const char *what, const char *sql,
              const params *ps, apr_int64_t *changed)
{
    PGresult *res = sm_pg_q(s, what, sql, ps);

    if (!res)
        return -1;
    if (changed)
        *changed = apr_atoi64(PQcmdTuples(res));
    PQclear(res);
    return 0;
}


/* COPY ... FROM STDIN with data, its len bytes whole (libpq queues them
 * all in non-blocking mode: only memory bounds it), the waits those of
 * every statement; *rows (when not NULL) gets the rows it added. */
int sm_pg_copy_in(pg_store *s, const char *what, const char *sql,
                  const char *data, apr_size_t len, apr_int64_t *rows)
{
    PGresult *res;

    if (!s->conn || !PQsendQuery(s->conn, sql))
        return sm_pg_succeeded(s, what, NULL) ? 0 : -1;
    if (!(res = await_result(s, what)))
        return -1;
    if (PQresultStatus(res) != PGRES_COPY_IN) {
        if ((res = sm_pg_succeeded(s, what, res))) {
            PQclear(res);
            apr_snprintf(s->base.errmsg, sizeof(s->base.errmsg),
                         "%s: no COPY in progress", what);
        }
        return -1;
    }
    PQclear(res);
    if (len > INT_MAX || PQputCopyData(s->conn, data, (int)len) != 1
        || PQputCopyEnd(s->conn, NULL) != 1) {
        /* The connection is mid-COPY: closed, made again on next use. */
        give_up(s, what, NULL, len > INT_MAX ? "too much data"
                : PQerrorMessage(s->conn), 1);
        return -1;
    }
    if (!(res = await_result(s, what)) || !(res = sm_pg_succeeded(s, what,
                                                                  res)))
        return -1;
    if (rows)
        *rows = apr_atoi64(PQcmdTuples(res));
    PQclear(res);
    return 0;
}

/* Simple-protocol text (several statements, no parameters). */
PGresult *sm_pg_exec(pg_store *s, const char *what, const char *sql)
{
    PGresult *res;

    if (!s->conn || !PQsendQuery(s->conn, sql))
        return sm_pg_succeeded(s, what, NULL);
    res = await_result(s, what);
    return res ? sm_pg_succeeded(s, what, res) : NULL;
}

/* Start a transaction with bounded waits; *now (when not NULL) gets the
 * database's time in seconds. */
int sm_pg_begin(pg_store *s, const char *mode, apr_int64_t *now)
{
    char sql[256];
    PGresult *res;

    apr_snprintf(sql, sizeof(sql), "BEGIN %s; SET LOCAL lock_timeout = %d;"
                 " SET LOCAL statement_timeout = '" STATEMENT_TIMEOUT "';"
                 " SELECT floor(extract(epoch FROM now()))::bigint", mode,
                 s->lock_timeout_ms);
    if (!(res = sm_pg_exec(s, "cannot start a transaction", sql)))
        return -1;
    if (now)
        *now = i64(res, 0, 0);
    PQclear(res);
    return 0;
}

void sm_pg_rollback(pg_store *s)
{
    char keep[sizeof(s->base.errmsg)];

    if (s->conn && PQtransactionStatus(s->conn) != PQTRANS_IDLE) {
        /* (the failure that made it roll back is what is reported) */
        memcpy(keep, s->base.errmsg, sizeof(keep));
        PQclear(sm_pg_exec(s, "cannot roll back", "ROLLBACK"));
        memcpy(s->base.errmsg, keep, sizeof(keep));
    }
}

/* The connection, made again when it broke (a restarted or unreachable
 * database: connect_timeout bounds the wait). */
int sm_pg_connection(pg_store *s)
{
    apr_time_t now = apr_time_now();

    if (stop_seen(s, now) && now >= s->stop_deadline) {
        apr_cpystrn(s->base.errmsg, "stopping: no time left to reconnect",
                    sizeof(s->base.errmsg));
        return -1;
    }
    /* given up on (await_result), or broken: a new connection */
    if ((!s->conn || PQstatus(s->conn) != CONNECTION_OK)
        && sm_pg_connect(s) != 0)
        return -1;
    s->gave_up = 0;
    sm_pg_rollback(s);        /* a transaction a failure left open */
    return 0;
}

int sm_pg_table_allowed(pg_store *s, int *ok, const char *table,
                        const char *privileges, const char *without)
{
    params ps = { .n = 0 };
    PGresult *res;

    if (*ok)
        return *ok > 0;
    p_str(&ps, table);
    p_str(&ps, privileges);
    if (!(res = sm_pg_q(s, "cannot read the role's privileges", "SELECT"
                        " to_regclass($1) IS NOT NULL AND"
                        " has_table_privilege($1, $2)", &ps)))
        return -1;
    *ok = PQntuples(res) == 1 && strcmp(PQgetvalue(res, 0, 0), "t") == 0
          ? 1 : -1;
    PQclear(res);
    if (*ok < 0)
        sm_log(s->base.log, SM_LOG_WARN, 0, "store %s: this role may not "
               "%s %s: %s (see docs/operations.md for the grants)",
               s->base.path, strchr(privileges, ',') ? "write" : "read",
               table, without);
    return *ok > 0;
}

int sm_pg_connected(pg_store *s)
{
    PGTransactionStatusType t = s->conn ? PQtransactionStatus(s->conn)
                                        : PQTRANS_UNKNOWN;

    return t == PQTRANS_IDLE || t == PQTRANS_UNKNOWN
           ? sm_pg_connection(s) : 0;
}

int sm_pg_start(pg_store *s, const char *mode, apr_int64_t *now)
{
    if (sm_pg_connection(s) != 0)
        return -1;
    if (sm_pg_begin(s, mode, now) == 0)
        return 0;
    /* (not after a server that did not answer: it would not now either) */
    if (PQstatus(s->conn) == CONNECTION_OK || s->gave_up)
        return -1;
    /* The server closed the connection (it restarted): once more, on a
     * new one, rather than fail once per connection after every restart. */
    return sm_pg_connection(s) == 0 && sm_pg_begin(s, mode, now) == 0
           ? 0 : -1;
}

/* ---- opening --------------------------------------------------------- */

/* The schema's version; 0 when its tables are not there. */
int sm_pg_ready(pg_store *s, int since, int *has)
{
    int version = 0;

    *has = 0;
    if ((sm_pg_connected(s) != 0)
        || sm_pg_schema_version(s, &version) != 0)
        return -1;
    *has = version >= since;
    return 0;
}

int sm_pg_schema_version(pg_store *s, int *version)
{
    PGresult *res = sm_pg_q(s, "cannot read the schema version", "SELECT"
                            " to_regclass('sitemap_meta') IS NULL", NULL);
    int missing;

    /* (asked first: a query naming a missing table fails as a whole) */
    if (!res)
        return -1;
    missing = strcmp(PQgetvalue(res, 0, 0), "t") == 0;
    PQclear(res);
    *version = 0;
    if (missing)
        return 0;
    if (!(res = sm_pg_q(s, "cannot read the schema version",
                        "SELECT value FROM"
                        " sitemap_meta WHERE key = 'schema_version'", NULL)))
        return -1;
    if (PQntuples(res) == 1)
        *version = atoi(PQgetvalue(res, 0, 0));
    PQclear(res);
    return 0;
}

int sm_pg_migrate(pg_store *s, int create)
{
    PGresult *res;
    int version;

    if (sm_pg_schema_version(s, &version) != 0)
        return -1;
    if (version == SM_PG_SCHEMA_VERSION)
        return 0;
    if (version > SM_PG_SCHEMA_VERSION) {
        apr_snprintf(s->base.errmsg, sizeof(s->base.errmsg), "schema version "
                     "%d is newer than this mod_sitemap understands (%d)",
                     version, SM_PG_SCHEMA_VERSION);
        return -1;
    }
    if (!create) {
        apr_snprintf(s->base.errmsg, sizeof(s->base.errmsg), version
                     ? "schema version %d needs an upgrade to %d; let the "
                       "module or a sitemapctl command that writes open it"
                     : "not a mod_sitemap store yet (no table sitemap_meta; "
                       "the module creates the tables on first use)",
                     version, SM_PG_SCHEMA_VERSION);
        return -1;
    }
    /* One server at a time: a lock for the transaction (pooler-safe). */
    if (sm_pg_begin(s, "", NULL) != 0)
        return -1;
    if (!(res = sm_pg_exec(s, "cannot lock the schema",
                           "SELECT pg_advisory_xact_lock"
                           "(" SCHEMA_LOCK_KEY ")")))
        goto fail;
    PQclear(res);
    if (sm_pg_schema_version(s, &version) != 0)
        goto fail;
    for (; version < SM_PG_SCHEMA_VERSION; version++) {
        char sql[96];
        if (!(res = sm_pg_exec(s, "cannot create the schema",
                               schema_steps[version])))
            goto denied;
        PQclear(res);
        apr_snprintf(sql, sizeof(sql), "UPDATE sitemap_meta SET value = '%d'"
                     " WHERE key = 'schema_version'", version + 1);
        if (!(res = sm_pg_exec(s, "cannot set the schema version", sql)))
            goto fail;
        PQclear(res);
    }
    if (!(res = sm_pg_exec(s, "cannot commit the schema", "COMMIT")))
        goto fail;
    PQclear(res);
    return 0;

denied:
    /* Say what to do when the role may not create tables. */
    if (strstr(s->base.errmsg, "permission denied")) {
        apr_size_t len = strlen(s->base.errmsg);
        apr_snprintf(s->base.errmsg + len, sizeof(s->base.errmsg) - len,
                     " (the role needs CREATE on the schema once, or the "
                     "tables created by their owner: see docs/operations.md, "
                     "\"A farm of servers: PostgreSQL\")");
    }
fail:
    sm_pg_rollback(s);
    return -1;
}

const char *sm_store_pg_uri_check(apr_pool_t *p, const char *uri)
{
    char *err = NULL;
    PQconninfoOption *opts = PQconninfoParse(uri, &err);
    const char *why;
    apr_size_t len;

    if (opts) {
        PQconninfoFree(opts);
        return NULL;
    }
    why = apr_pstrdup(p, err ? err : "out of memory");
    PQfreemem(err);
    len = strlen(why);
    while (len && why[len - 1] == '\n')
        len--;
    why = apr_pstrmemdup(p, why, len);
    /* libpq quotes the token it rejects, which may be the password. */
    if (strcmp(sm_uri_mask(p, uri), uri) != 0 && strchr(why, '"'))
        why = apr_pstrcat(p, apr_pstrmemdup(p, why, (apr_size_t)
                                            (strchr(why, '"') - why)),
                          "(the value is not shown: the URI holds a "
                          "password)", NULL);
    return why;
}

/* libpq's connect_timeout for conn (the URI may set it): the longest a
 * connection attempt to one address may take; 0 or none: PG_ANSWER_WAIT. */
static apr_interval_time_t connect_wait(PGconn *conn)
{
    PQconninfoOption *opts = PQconninfo(conn), *o;
    apr_interval_time_t wait = PG_ANSWER_WAIT;

    for (o = opts; o && o->keyword; o++)
        if (strcmp(o->keyword, "connect_timeout") == 0 && o->val
            && atoi(o->val) > 0)
            /* libpq takes at least 2 s */
            wait = apr_time_from_sec(atoi(o->val) < 2 ? 2 : atoi(o->val));
    PQconninfoFree(opts);
    return wait < PG_ANSWER_WAIT ? wait : PG_ANSWER_WAIT;
}

static int connect_failed(pg_store *s, const char *why)
{
    if (why)
        apr_snprintf(s->base.errmsg, sizeof(s->base.errmsg),
                     "cannot connect: %s", why);
    else
        sm_pg_set_error(s, "cannot connect", NULL);
    PQfinish(s->conn);
    s->conn = NULL;
    return -1;
}

int sm_pg_connect(pg_store *s)
{
    /* Defaults the URI may override (it is expanded last): bounded waits
     * for connecting and for a peer that vanished mid-query. */
    const char *keys[] = {
        "connect_timeout", "keepalives_idle", "keepalives_interval",
        "keepalives_count", "tcp_user_timeout", "fallback_application_name",
        "client_encoding", "dbname", NULL
    };
    const char *vals[] = {
        "5", "10", "5", "3", "30000", "mod_sitemap", "UTF8", s->uri, NULL
    };
    PostgresPollingStatusType st = PGRES_POLLING_WRITING;
    apr_time_t now = apr_time_now(), deadline;
    apr_interval_time_t wait;
    int fd = -1;

    if (s->conn)
        PQfinish(s->conn);
    /* Not PQconnectdbParams: it blocks for connect_timeout per address,
     * whatever a stop says (a hung postmaster accepts the connection and
     * never answers), and a first open would hold up the stop for that
     * long.  So the same waits as await_result's. */
    if (!(s->conn = PQconnectStartParams(keys, vals, 1)))
        return connect_failed(s, "out of memory");
    if (PQstatus(s->conn) == CONNECTION_BAD)
        return connect_failed(s, NULL);
    wait = connect_wait(s->conn);
    deadline = now + wait;
    for (;;) {
        struct pollfd pfd;
        apr_time_t end;
        int slice, r;

        if (st == PGRES_POLLING_OK) {
            PQsetnonblocking(s->conn, 1);
            return 0;
        }
        if (st == PGRES_POLLING_FAILED)
            return connect_failed(s, NULL);
        /* libpq moved on to another address (of a name, or of a URI's
         * hosts): connect_timeout is per address, as libpq has it. */
        if (PQsocket(s->conn) != fd) {
            fd = PQsocket(s->conn);
            deadline = apr_time_now() + wait;
        }
        now = apr_time_now();
        end = stop_seen(s, now) && s->stop_deadline < deadline
              ? s->stop_deadline : deadline;
        if (now >= end)
            return connect_failed(s, end != deadline
                                  ? "no answer from the database before the"
                                    " stop's deadline (the busy timeout)"
                                  : "no answer from the database in time"
                                    " (connect_timeout)");
        slice = (int)apr_time_as_msec(end - now) + 1;
        if (slice > PG_POLL_SLICE_MS)
            slice = PG_POLL_SLICE_MS;
        pfd.fd = fd;
        pfd.events = st == PGRES_POLLING_READING ? POLLIN : POLLOUT;
        pfd.revents = 0;
        r = poll(&pfd, 1, slice);
        if (r < 0 && errno != EINTR)
            return connect_failed(s, "poll failed");
        if (r > 0)
            st = PQconnectPoll(s->conn);
    }
}

/* By hand: libpq has no array builder (PQescapeLiteral makes one string
 * literal, not an array's elements). */
const char *sm_pg_text_array(apr_pool_t *p, const char *const *v, int n)
{
    apr_size_t len = 3, k = 0;
    const char *u;
    char *out;
    int i;

    for (i = 0; i < n; i++)
        len += 5 + (v[i] ? 2 * strlen(v[i]) : 4);
    out = apr_palloc(p, len);
    out[k++] = '{';
    for (i = 0; i < n; i++) {
        if (i)
            out[k++] = ',';
        if (!v[i]) {
            memcpy(out + k, "NULL", 4);
            k += 4;
            continue;
        }
        out[k++] = '"';
        for (u = v[i]; *u; u++) {
            if (*u == '"' || *u == '\\')
                out[k++] = '\\';
            out[k++] = *u;
        }
        out[k++] = '"';
    }
    out[k++] = '}';
    out[k] = '\0';
    return out;
}

const char *sm_pg_int_array(apr_pool_t *p, const apr_int64_t *v, int n)
{
    char *out = apr_palloc(p, 3 + 22 * (apr_size_t)(n + 1));
    apr_size_t k = 0;
    int i;

    out[k++] = '{';
    for (i = 0; i < n; i++)
        k += (apr_size_t)apr_snprintf(out + k, 23, "%s%" APR_INT64_T_FMT,
                                      i ? "," : "", v[i]);
    out[k++] = '}';
    out[k] = '\0';
    return out;
}
