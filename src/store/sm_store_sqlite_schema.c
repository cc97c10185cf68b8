/* SPDX-License-Identifier: Apache-2.0 */
/* sm_store_sqlite_schema.c: the SQLite store's schema, step by step from
 * an empty file to SM_SCHEMA_VERSION, and the upgrade of an older file in
 * place (sm_sqlite_migrate, run by sm_store_open_sqlite). */
#include "store/sm_store_sqlite.h"

#include <apr_strings.h>
#include <sqlite3.h>
#include <string.h>

/* Schema steps: entry i upgrades user_version i to i + 1. */
static const char *const schema_steps[SM_SCHEMA_VERSION] = {
    /* 0 -> 1 */
    "CREATE TABLE meta("
    "  key TEXT PRIMARY KEY, value TEXT NOT NULL);"
    "INSERT INTO meta(key, value) VALUES"
    "  ('store_id', lower(hex(randomblob(8)))),"
    "  ('created', CAST(strftime('%s','now') AS INTEGER));"
    "CREATE TABLE sites("
    "  id INTEGER PRIMARY KEY,"
    "  base TEXT NOT NULL UNIQUE,"
    "  page_size INTEGER NOT NULL DEFAULT 50000,"
    "  last_page INTEGER NOT NULL DEFAULT 1,"
    "  url_count INTEGER NOT NULL DEFAULT 0,"
    "  settings TEXT NOT NULL DEFAULT '',"
    /* When the sitemap index's bytes last changed (a page's lastmod, a
     * page emptied or filled), and when the settings did: the
     * Last-Modified of the index and, with the page's own time, of pages. */
    "  index_changed INTEGER NOT NULL DEFAULT 0,"
    "  settings_changed INTEGER NOT NULL DEFAULT 0);"
    "CREATE TABLE urls("
    "  id INTEGER PRIMARY KEY,"
    "  site_id INTEGER NOT NULL,"
    "  url TEXT NOT NULL,"
    "  page INTEGER NOT NULL,"
    "  lastmod INTEGER NOT NULL,"
    "  etag TEXT,"
    "  first_seen INTEGER NOT NULL,"
    "  last_seen INTEGER NOT NULL,"
    "  xml_len INTEGER NOT NULL,"
    "  UNIQUE(site_id, url));"
    "CREATE INDEX urls_by_page ON urls(site_id, page);"
    "CREATE INDEX urls_by_seen ON urls(site_id, last_seen);"
    "CREATE TABLE pages("
    "  site_id INTEGER NOT NULL,"
    "  page INTEGER NOT NULL,"
    "  url_count INTEGER NOT NULL DEFAULT 0,"
    "  xml_bytes INTEGER NOT NULL DEFAULT 0,"
    "  lastmod INTEGER NOT NULL DEFAULT 0,"
    "  changed INTEGER NOT NULL DEFAULT 0,"
    "  version INTEGER NOT NULL DEFAULT 0,"
    "  PRIMARY KEY(site_id, page)) WITHOUT ROWID;"
    /* A page's lastmod never goes back: a removal moves it to the time of
     * the removal, so crawlers re-fetch the page and see the URL gone. */
    "CREATE TRIGGER urls_added AFTER INSERT ON urls BEGIN"
    "  INSERT INTO pages(site_id, page, url_count, xml_bytes, lastmod,"
    "                    changed, version)"
    "  VALUES (new.site_id, new.page, 1, new.xml_len, new.lastmod,"
    "          CAST(strftime('%s','now') AS INTEGER), 1)"
    "  ON CONFLICT(site_id, page) DO UPDATE SET"
    "    url_count = url_count + 1,"
    "    xml_bytes = xml_bytes + excluded.xml_bytes,"
    "    lastmod = max(lastmod, excluded.lastmod),"
    "    changed = excluded.changed,"
    "    version = version + 1;"
    "  UPDATE sites SET url_count = url_count + 1 WHERE id = new.site_id;"
    "END;"
    "CREATE TRIGGER urls_removed AFTER DELETE ON urls BEGIN"
    "  UPDATE pages SET"
    "    url_count = url_count - 1,"
    "    xml_bytes = xml_bytes - old.xml_len,"
    "    lastmod = max(lastmod, CAST(strftime('%s','now') AS INTEGER)),"
    "    changed = CAST(strftime('%s','now') AS INTEGER),"
    "    version = version + 1"
    "  WHERE site_id = old.site_id AND page = old.page;"
    "  UPDATE sites SET url_count = url_count - 1 WHERE id = old.site_id;"
    "END;"
    "CREATE TRIGGER pages_new AFTER INSERT ON pages"
    "  WHEN new.url_count > 0 BEGIN"
    "  UPDATE sites SET index_changed = CAST(strftime('%s','now') AS INTEGER)"
    "  WHERE id = new.site_id;"
    "END;"
    "CREATE TRIGGER pages_index AFTER UPDATE ON pages"
    "  WHEN new.lastmod IS NOT old.lastmod"
    "    OR (new.url_count > 0) IS NOT (old.url_count > 0) BEGIN"
    "  UPDATE sites SET index_changed = CAST(strftime('%s','now') AS INTEGER)"
    "  WHERE id = new.site_id;"
    "END;"
    "CREATE TRIGGER sites_settings AFTER UPDATE OF settings ON sites"
    "  WHEN new.settings IS NOT old.settings BEGIN"
    "  UPDATE sites SET"
    "    settings_changed = CAST(strftime('%s','now') AS INTEGER)"
    "  WHERE id = new.id;"
    "END;"
    "CREATE TRIGGER urls_lastmod AFTER UPDATE OF lastmod ON urls"
    "  WHEN new.lastmod IS NOT old.lastmod BEGIN"
    "  UPDATE pages SET"
    "    lastmod = max(lastmod, new.lastmod),"
    "    changed = CAST(strftime('%s','now') AS INTEGER),"
    "    version = version + 1"
    "  WHERE site_id = new.site_id AND page = new.page;"
    "END;",
    /* 1 -> 2: summaries kept by the writer, once per transaction (see the
     * top of this file); expiry walks rowid ranges instead of an index
     * every insert and refresh had to update, and records when it last
     * ran so that one process a period does it. */
    "DROP TRIGGER urls_added;"
    "DROP TRIGGER urls_removed;"
    "DROP TRIGGER urls_lastmod;"
    "DROP TRIGGER pages_new;"
    "DROP TRIGGER pages_index;"
    "DROP INDEX urls_by_seen;"
    "ALTER TABLE sites ADD COLUMN expired INTEGER NOT NULL DEFAULT 0;",
    /* 2 -> 3: a URL's id is its site's id times 2^40 plus a number the
     * site hands out in order (sites.next_id), and a page is the range of
     * ids from its first_id to the next page's (or next_id): pages and
     * sites are rowid ranges, and the (site_id, page) index, which every
     * insert had to update, is gone.  The URLs are renumbered in page
     * order; a page's first id is 1 + the URLs on the site's earlier
     * pages.
     *
     * Writers of schema 2 may still run (the old generation of children
     * in a graceful restart that brings this code): their inserts would
     * take ids outside the ranges.  pages.first_id has no default, so every
     * schema-2 transaction that adds, changes or removes a URL fails on
     * its page summary and rolls back (the URLs are recorded again when
     * next served), and the expiry claim's column is renamed, so a schema-2
     * expiry, which would walk ids from 0 up, stops at once. */
    "CREATE TABLE urls_v3("
    "  id INTEGER PRIMARY KEY,"
    "  site_id INTEGER NOT NULL,"
    "  url TEXT NOT NULL,"
    "  page INTEGER NOT NULL,"
    "  lastmod INTEGER NOT NULL,"
    "  etag TEXT,"
    "  first_seen INTEGER NOT NULL,"
    "  last_seen INTEGER NOT NULL,"
    "  xml_len INTEGER NOT NULL);"
    "CREATE TEMP TABLE page_urls_v3 AS"
    "  SELECT site_id, page, count(*) AS n FROM urls GROUP BY site_id, page;"
    "INSERT INTO urls_v3"
    "  SELECT (site_id << " SITE_ID_SHIFT_SQL ") + row_number() OVER"
    "    (PARTITION BY site_id ORDER BY page, id),"
    "    site_id, url, page, lastmod, etag, first_seen, last_seen, xml_len"
    "  FROM urls ORDER BY site_id, page, id;"
    "DROP TABLE urls;"
    "ALTER TABLE urls_v3 RENAME TO urls;"
    "CREATE UNIQUE INDEX urls_by_url ON urls(site_id, url);"
    "ALTER TABLE sites ADD COLUMN next_id INTEGER NOT NULL DEFAULT 0;"
    "UPDATE sites SET next_id = (id << " SITE_ID_SHIFT_SQL ") + 1"
    "  + coalesce((SELECT sum(n) FROM temp.page_urls_v3 c"
    "              WHERE c.site_id = sites.id), 0);"
    "CREATE TABLE pages_v3("
    "  site_id INTEGER NOT NULL,"
    "  page INTEGER NOT NULL,"
    "  url_count INTEGER NOT NULL DEFAULT 0,"
    "  xml_bytes INTEGER NOT NULL DEFAULT 0,"
    "  lastmod INTEGER NOT NULL DEFAULT 0,"
    "  changed INTEGER NOT NULL DEFAULT 0,"
    "  version INTEGER NOT NULL DEFAULT 0,"
    "  first_id INTEGER NOT NULL,"
    "  PRIMARY KEY(site_id, page)) WITHOUT ROWID;"
    "INSERT INTO pages_v3"
    "  SELECT site_id, page, url_count, xml_bytes, lastmod, changed, version,"
    "    (site_id << " SITE_ID_SHIFT_SQL ") + 1"
    "    + coalesce((SELECT sum(n) FROM temp.page_urls_v3 c"
    "                WHERE c.site_id = p.site_id AND c.page < p.page), 0)"
    "  FROM pages p;"
    "DROP TABLE pages;"
    "ALTER TABLE pages_v3 RENAME TO pages;"
    "ALTER TABLE sites RENAME COLUMN expired TO expiry_claimed;"
    "DROP TABLE temp.page_urls_v3;",
    /* 3 -> 4: the page's <title> as the head reader saw it, for the HTML
     * site map (NULL: not known).  Writers of schema 3 still running (a
     * graceful restart) leave it NULL. */
    "ALTER TABLE urls ADD COLUMN title TEXT;"
    /* and URLs removed per site and day (the status page's chart; days
     * since the epoch, SM_REMOVED_DAYS kept) */
    "CREATE TABLE removed_days("
    "  site_id INTEGER NOT NULL, day INTEGER NOT NULL, n INTEGER NOT NULL,"
    "  PRIMARY KEY(site_id, day)) WITHOUT ROWID;",
    /* 4 -> 5: the page's hreflang alternates as the head reader saw them
     * (sm_alternates.h: "hreflang href" lines; NULL: none or not known).
     * A column, not a table of their own: they are always written and
     * read whole with their URL (64 at most), never looked up one by
     * one, so one row read per URL serves them, and removals, expiry and
     * pages need no second table kept in step.  Writers of schema 4 still
     * running (a graceful restart) leave it alone. */
    "ALTER TABLE urls ADD COLUMN alternates TEXT;",
    /* 5 -> 6: the latest verdict of URLs left out or removed (sitemapctl
     * why, the status page), one row a URL, at most SM_VERDICTS_MAX a
     * site: seq grows with each verdict written, and rows more than that
     * many behind the site's newest go (an index range).  A table of its
     * own: most URLs never have one, and urls stays as it is.  Writers of
     * schema 5 still running (a graceful restart) write none. */
    "CREATE TABLE verdicts("
    "  site_id INTEGER NOT NULL,"
    "  url TEXT NOT NULL,"
    "  seq INTEGER NOT NULL,"
    "  verdict TEXT NOT NULL,"
    "  reason TEXT NOT NULL,"
    "  detail TEXT,"
    "  status INTEGER NOT NULL DEFAULT 0,"
    "  at INTEGER NOT NULL,"
    "  PRIMARY KEY(site_id, url)) WITHOUT ROWID;"
    "CREATE INDEX verdicts_by_seq ON verdicts(site_id, seq);",
    /* 6 -> 7: IndexNow's corroboration (sm_store_tx.h): a URL recorded
     * with IndexNow on is held (not submitted) until a second client or a
     * later day serves it; held keeps the first day and client's tag, 0:
     * not held.  URLs stored before are not held.  Writers of schema 6
     * still running (a graceful restart) hold nothing. */
    "ALTER TABLE urls ADD COLUMN held INTEGER NOT NULL DEFAULT 0;",
    /* 7 -> 8: crawl coverage (SM_CHANGE_CRAWL).  Per listed URL and
     * crawler the last verified fetch, keyed by the URL's id so that a
     * site's rows are one range; a URL's rows go with it (the trigger: one
     * probe per URL removed, and removals are rare beside recording).  Per
     * site and crawler the counts of fetches of URLs not listed and of the
     * sitemap documents, and the newest SM_CRAWL_UNLISTED_MAX URLs not
     * listed that it fetched (seq as for verdicts).  Writers of schema 7
     * still running (a graceful restart) count no fetch; their removals
     * still take a URL's fetches with it. */
    "CREATE TABLE crawls("
    "  url_id INTEGER NOT NULL,"
    "  crawler TEXT NOT NULL,"
    "  fetched INTEGER NOT NULL,"
    "  status INTEGER NOT NULL DEFAULT 0,"
    "  PRIMARY KEY(url_id, crawler)) WITHOUT ROWID;"
    /* "urls" quoted as SQLite writes it back after an ALTER TABLE
     * RENAME, so a table renamed away and back leaves the trigger's text
     * as made (sm_sqlite_check_objects compares it). */
    "CREATE TRIGGER urls_crawls AFTER DELETE ON \"urls\" BEGIN"
    "  DELETE FROM crawls WHERE url_id = old.id;"
    "END;"
    "CREATE TABLE crawlers("
    "  site_id INTEGER NOT NULL,"
    "  crawler TEXT NOT NULL,"
    "  unlisted_hits INTEGER NOT NULL DEFAULT 0,"
    "  sitemap_fetches INTEGER NOT NULL DEFAULT 0,"
    "  last_sitemap_fetch INTEGER NOT NULL DEFAULT 0,"
    "  PRIMARY KEY(site_id, crawler)) WITHOUT ROWID;"
    "CREATE TABLE crawl_unlisted("
    "  site_id INTEGER NOT NULL,"
    "  crawler TEXT NOT NULL,"
    "  url TEXT NOT NULL,"
    "  seq INTEGER NOT NULL,"
    "  fetched INTEGER NOT NULL,"
    "  status INTEGER NOT NULL DEFAULT 0,"
    "  PRIMARY KEY(site_id, crawler, url)) WITHOUT ROWID;"
    "CREATE INDEX crawl_unlisted_by_seq"
    "  ON crawl_unlisted(site_id, crawler, seq);",
    /* 8 -> 9: images per listed page (SitemapImages): the head's (source 1)
     * and those browsers fetched with the page as Referer (source 2),
     * keyed by the page's id so that a page's images are one range and go
     * with it (the trigger, as for crawls); at most SM_IMAGES_MAX a page,
     * the oldest seen dropped (images_by_seen); an image that answers 404
     * or 410 leaves every page of its site (images_by_image).  Writers of
     * the schema before still running (a graceful restart) write none;
     * their removals still take a page's images with it. */
    "CREATE TABLE images("
    "  url_id INTEGER NOT NULL,"
    "  image TEXT NOT NULL,"
    "  site_id INTEGER NOT NULL,"
    "  source INTEGER NOT NULL,"
    "  last_seen INTEGER NOT NULL,"
    "  PRIMARY KEY(url_id, image)) WITHOUT ROWID;"
    "CREATE INDEX images_by_image ON images(site_id, image);"
    "CREATE INDEX images_by_seen ON images(url_id, last_seen);"
    "CREATE TRIGGER urls_images AFTER DELETE ON \"urls\" BEGIN"
    "  DELETE FROM images WHERE url_id = old.id;"
    "END;",
    /* 9 -> 10: crawl coverage per UTC day (sm_store_crawl_days_note): per
     * site, crawler and day (days since the epoch) the listed URLs and
     * those of them the crawler fetched within 30 days, as the writer's
     * first upkeep of the next day found them; crawler '' marks the day
     * as taken.  SM_CRAWL_DAYS days kept.  crawls.stale_sent: the
     * lastmod (seconds) of the URL when SitemapIndexNowStale queued it,
     * stale for that crawler (once a change).  Writers of schema 9 still
     * running (a graceful restart) take no day and queue nothing. */
    "CREATE TABLE crawl_days("
    "  site_id INTEGER NOT NULL,"
    "  crawler TEXT NOT NULL,"
    "  day INTEGER NOT NULL,"
    "  listed INTEGER NOT NULL,"
    "  crawled INTEGER NOT NULL,"
    "  PRIMARY KEY(site_id, crawler, day)) WITHOUT ROWID;"
    "ALTER TABLE crawls ADD COLUMN stale_sent INTEGER NOT NULL DEFAULT 0;",
    /* 10 -> 11: the news sitemap and llms.txt (issue 37): the page's <meta
     * name="description"> as the head reader saw it (NULL: none or not
     * known) and its publication time (seconds, 0: none), with an index
     * of the pages that have one (few: articles), which the news sitemap
     * reads newest first.  Writers of the schema before still running (a
     * graceful restart) leave both alone. */
    "ALTER TABLE urls ADD COLUMN description TEXT;"
    "ALTER TABLE urls ADD COLUMN published INTEGER NOT NULL DEFAULT 0;"
    "CREATE INDEX urls_published ON urls(published) WHERE published > 0;",
    /* 11 -> 12: the site's robots.txt as last handed over (SM_CHANGE_ROBOTS), so
     * that every process follows an application's robots.txt, and where
     * the sweep of the URLs it disallows got to (NULL: none due).
     * Writers of an older schema still running (a graceful restart)
     * neither store nor follow it. */
    "CREATE TABLE robots("
    "  site_id INTEGER PRIMARY KEY,"
    "  body TEXT NOT NULL,"
    "  hash INTEGER NOT NULL,"
    "  seen INTEGER NOT NULL,"
    "  sweep TEXT);",
    /* 12 -> 13: expiry reads each page's oldest last_seen (issue 35): no lower
     * than the oldest last_seen of its URLs, so a page whose figure is
     * not past the limit has nothing to expire and is not walked.  The
     * writer lowers it as it adds URLs (a refresh only raises a URL's
     * last_seen, so the figure may stay low: expiry walks the page once
     * and sets it again from what is left).  0: not known (pages of the
     * schema before, and pages that writers of the schema before still
     * running make in a graceful restart), walked at the next expiry.  An
     * ALTER with a constant default: no row is rewritten. */
    "ALTER TABLE pages ADD COLUMN oldest_seen INTEGER NOT NULL DEFAULT 0;",
};


/* SQLite's defences for a file another user may have written (README,
 * Threat model): no writes to the schema or shadow tables through SQL
 * (SQLITE_DBCONFIG_DEFENSIVE), no function with side effects or virtual
 * table called from the schema (trusted_schema off), and every b-tree
 * cell's size checked as it is read (cell_size_check). */
int sm_sqlite_harden(sqlite_store *s)
{
    int on = -1;

    if (sqlite3_db_config(s->db, SQLITE_DBCONFIG_DEFENSIVE, 1, &on)
            != SQLITE_OK || on != 1
        || sqlite3_db_config(s->db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, &on)
            != SQLITE_OK || on != 0) {
        apr_snprintf(s->base.errmsg, sizeof(s->base.errmsg),
                     "cannot turn on SQLite's defensive settings");
        return SQLITE_ERROR;
    }
    return sm_sqlite_exec(s, "cannot turn on SQLite's defensive settings",
                          "PRAGMA cell_size_check = ON");
}

/* Is the trigger whose SQLite text (as sqlite_master keeps it, without
 * the final ';') is sql, named name, one the schema steps below version
 * create and do not drop? */
static int our_trigger(sqlite3_int64 version, const char *name,
                       const char *sql)
{
    static const char create[] = "CREATE TRIGGER ", drop[] = "DROP TRIGGER ";
    size_t nlen = strlen(name), slen = strlen(sql);
    int found = 0;
    sqlite3_int64 v;

    for (v = 0; v < version && v < SM_SCHEMA_VERSION; v++) {
        const char *step = schema_steps[v], *at;

        for (at = step; (at = strstr(at, create)) != NULL; at++) {
            const char *n = at + sizeof(create) - 1;
            if (strncmp(n, name, nlen) == 0 && n[nlen] == ' '
                && strncmp(at, sql, slen) == 0 && at[slen] == ';')
                found = 1;
        }
        for (at = step; (at = strstr(at, drop)) != NULL; at++) {
            const char *n = at + sizeof(drop) - 1;
            if (strncmp(n, name, nlen) == 0 && n[nlen] == ';')
                found = 0;
        }
    }
    return found;
}

/* SQLITE_OK when every trigger and view in the file is one the schema of
 * version makes; else SQLITE_MISMATCH, naming the first other one.  A
 * trigger runs with the rights of whoever writes to its table (the module,
 * sitemapctl as root), a view with those of whoever reads it: a store
 * another user wrote may hold neither of theirs. */
int sm_sqlite_check_objects(sqlite_store *s, sqlite3_int64 version)
{
    sqlite3_stmt *q;
    int rc;

    rc = sqlite3_prepare_v2(s->db, "SELECT type, name, sql FROM"
                            " main.sqlite_master WHERE type IN"
                            " ('trigger', 'view') ORDER BY rowid", -1, &q,
                            NULL);
    if (rc != SQLITE_OK) {
        sm_sqlite_set_error(&s->base, "cannot read the schema", s->db);
        return rc;
    }
    while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
        const char *type = (const char *)sqlite3_column_text(q, 0);
        const char *name = (const char *)sqlite3_column_text(q, 1);
        const char *sql = (const char *)sqlite3_column_text(q, 2);

        if (!type || !name || !sql || strcmp(type, "trigger") != 0
            || !our_trigger(version, name, sql)) {
            apr_snprintf(s->base.errmsg, sizeof(s->base.errmsg),
                         "not a mod_sitemap store: it holds a %s %s that "
                         "mod_sitemap does not make (refused: it would run "
                         "with the rights of whoever writes or reads it)",
                         type ? type : "?", name ? name : "?");
            sqlite3_finalize(q);
            return SQLITE_MISMATCH;
        }
    }
    sqlite3_finalize(q);
    if (rc != SQLITE_DONE) {
        sm_sqlite_set_error(&s->base, "cannot read the schema", s->db);
        return rc;
    }
    return SQLITE_OK;
}


/* Create or upgrade the schema; one writer at a time does it.  probe: a
 * read-only look that accepts an older schema. */
int sm_sqlite_migrate(sqlite_store *s, int readonly, int probe)
{
    sqlite3_int64 version, app_id;
    int rc;

    if ((rc = sm_sqlite_int_pragma(s, "PRAGMA user_version", &version))
        != SQLITE_OK)
        return rc;
    if (version == SM_SCHEMA_VERSION)
        goto check_id;
    if (version > SM_SCHEMA_VERSION) {
        apr_snprintf(s->base.errmsg, sizeof(s->base.errmsg),
                     "schema version %" APR_INT64_T_FMT " is newer than this "
                     "mod_sitemap understands (%d)", (apr_int64_t)version,
                     SM_SCHEMA_VERSION);
        return SQLITE_MISMATCH;
    }
    if (readonly && version == 0) {
        /* Read-only (sitemapctl, the sitemap's readers): say what the
         * file is. */
        sqlite3_int64 tables = 0;
        if ((rc = sm_sqlite_int_pragma(s, "SELECT count(*) FROM sqlite_master",
                             &tables)) != SQLITE_OK)
            return rc;
        apr_snprintf(s->base.errmsg, sizeof(s->base.errmsg), tables
                     ? "not a mod_sitemap store (it holds other tables)"
                     : "not a mod_sitemap store (an empty database)");
        return SQLITE_MISMATCH;
    }
    if (readonly && probe)
        goto check_id;
    if (readonly) {
        apr_snprintf(s->base.errmsg, sizeof(s->base.errmsg),
                     "schema version %" APR_INT64_T_FMT " needs an upgrade "
                     "to %d; open it read-write once", (apr_int64_t)version,
                     SM_SCHEMA_VERSION);
        return SQLITE_MISMATCH;
    }
    if ((rc = sm_sqlite_exec(s, "cannot lock the store", "BEGIN IMMEDIATE"))
        != SQLITE_OK)
        return rc;
    /* Another process may have migrated while we waited for the lock. */
    if ((rc = sm_sqlite_int_pragma(s, "PRAGMA user_version", &version))
        != SQLITE_OK)
        goto fail;
    if (version <= SM_SCHEMA_VERSION
        && (rc = sm_sqlite_check_objects(s, version)) != SQLITE_OK)
        goto fail;
    if (version == 0) {
        sqlite3_int64 tables;
        if ((rc = sm_sqlite_int_pragma(s, "SELECT count(*) FROM sqlite_master",
                             &tables)) != SQLITE_OK)
            goto fail;
        if (tables != 0) {
            apr_snprintf(s->base.errmsg, sizeof(s->base.errmsg),
                         "not a mod_sitemap store (it holds other tables)");
            rc = SQLITE_MISMATCH;
            goto fail;
        }
    }
    /* A new file: the steps' result in one script (made once per
     * process, sm_store_sqlite_fresh.c). */
    if (version == 0 && sm_sqlite_fresh_schema()) {
        if ((rc = sm_sqlite_exec(s, "cannot make the schema",
                                 sm_sqlite_fresh_schema())) != SQLITE_OK)
            goto fail;
        version = SM_SCHEMA_VERSION;
    }
    for (; version < SM_SCHEMA_VERSION; version++) {
        if ((rc = sm_sqlite_exec(s, "cannot upgrade the schema",
                       schema_steps[version])) != SQLITE_OK)
            goto fail;
    }
    {
        char sql[96];
        apr_snprintf(sql, sizeof(sql),
                     "PRAGMA user_version = %d; PRAGMA application_id = %d",
                     SM_SCHEMA_VERSION, SM_APPLICATION_ID);
        if ((rc = sm_sqlite_exec(s, "cannot set the schema version", sql))
            != SQLITE_OK)
            goto fail;
    }
    if ((rc = sm_sqlite_exec(s, "cannot commit the schema", "COMMIT"))
        != SQLITE_OK)
        goto fail;
    return SQLITE_OK;

fail:
    sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
    return rc;

check_id:
    if ((rc = sm_sqlite_int_pragma(s, "PRAGMA application_id", &app_id))
        != SQLITE_OK)
        return rc;
    if (app_id != SM_APPLICATION_ID) {
        apr_snprintf(s->base.errmsg, sizeof(s->base.errmsg),
                     "not a mod_sitemap store (application_id %08x)",
                     (unsigned)app_id);
        return SQLITE_MISMATCH;
    }
    return SQLITE_OK;
}

const char *sm_sqlite_schema_step(int i)
{
    return i >= 0 && i < SM_SCHEMA_VERSION ? schema_steps[i] : NULL;
}
