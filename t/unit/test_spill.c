/* SPDX-License-Identifier: Apache-2.0 */
/* Unit tests of the spill files (sm_spill): what is written is read back
 * exactly, once, and anything that is not a complete spill of ours is
 * left alone. */
#include "unit.h"

#include "record/sm_spill.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

static sm_site_conf site = { "http://s.example", 50000, 0, 0, NULL, 0 };

typedef struct {
    apr_pool_t *pool;
    int n;
    sm_change got[8];
    const char *base[8];
} taken;

static void take_one(void *baton, const char *base, const sm_change *c)
{
    taken *t = baton;
    assert_true(t->n < 8);
    t->got[t->n] = *c;
    t->got[t->n].url = apr_pstrdup(t->pool, c->url);
    t->got[t->n].etag = c->etag ? apr_pstrdup(t->pool, c->etag) : NULL;
    t->got[t->n].title = c->title ? apr_pstrdup(t->pool, c->title) : NULL;
    t->got[t->n].alternates = c->alternates
                              ? apr_pstrdup(t->pool, c->alternates) : NULL;
    t->base[t->n] = apr_pstrdup(t->pool, base);
    t->n++;
}

static int count_files(const char *dir, const char *part)
{
    apr_pool_t *p;
    apr_dir_t *d;
    apr_finfo_t fi;
    int n = 0;

    apr_pool_create(&p, NULL);
    assert_int_equal(apr_dir_open(&d, dir, p), APR_SUCCESS);
    while (apr_dir_read(&fi, APR_FINFO_NAME, d) == APR_SUCCESS)
        if (strstr(fi.name, part))
            n++;
    apr_dir_close(d);
    apr_pool_destroy(p);
    return n;
}

static void put(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void test_round_trip(void **state)
{
    unit_ctx *u = *state;
    char *db = apr_pstrcat(u->pool, u->dir, "/s.db", NULL);
    sm_change in[5] = {
        { SM_CHANGE_RECORD, &site, "/a?b=%20c", 1234000000, "W/\"x\ty%\n\"",
          1700000000123456, "Caf\xc3\xa9 & \"tabs\"\there, 100%",
          "de https://s.example/de/a?b=%20c\nx-default https://t.example/a", NULL, NULL, NULL, 0, 65535, NULL, 0, NULL, NULL, NULL, 0, 0 },
        { SM_CHANGE_FORGET, &site, "/gone", 0, NULL, 1700000000000001, NULL,
          NULL, NULL, NULL, NULL, 0, 0, NULL, 0, NULL, NULL, NULL, 0, 0 },
        { SM_CHANGE_SEED, &site, "/empty-etag", 0, "", 1700000000000002, "",
          NULL, NULL, NULL, NULL, 0, 0, NULL, 0, NULL, NULL, NULL, 0, 0 },
        /* alternates without a title; read and found none */
        { SM_CHANGE_RECORD, &site, "/no-title", 0, NULL, 1700000000000003,
          NULL, "en-gb http://s.example:8080/x&y='z'", NULL, NULL, NULL, 0, 17, NULL, 0, NULL, NULL, NULL, 0, 0 },
        { SM_CHANGE_RECORD, &site, "/none", 0, NULL, 1700000000000004, "",
          "", NULL, NULL, NULL, 0, 0, NULL, 0, NULL, NULL, NULL, 0, 0 },
    };
    taken t = { u->pool, 0, { { 0 } }, { 0 } };
    char err[256];
    int files, changes, i;
    struct stat sb;

    assert_int_equal(sm_spill_write(u->pool, db, in, 5, err, sizeof(err)),
                     APR_SUCCESS);
    assert_int_equal(count_files(u->dir, ".spill-"), 1);
    assert_int_equal(count_files(u->dir, ".spilling-"), 0);
    {
        char *name = apr_psprintf(u->pool, "%s/*.spill-*", u->dir);
        char *cmd = apr_psprintf(u->pool, "test \"$(stat -c %%a %s)\" = 600",
                                 name);
        assert_int_equal(system(cmd), 0);
    }
    assert_int_equal(sm_spill_take(u->pool, db, 100, take_one, &t, NULL,
                                   &files, &changes), APR_SUCCESS);
    assert_int_equal(files, 1);
    assert_int_equal(changes, 5);
    assert_int_equal(t.n, 5);
    for (i = 0; i < 5; i++) {
        assert_string_equal(t.base[i], site.base);
        assert_int_equal(t.got[i].op, in[i].op);
        assert_string_equal(t.got[i].url, in[i].url);
        assert_true(t.got[i].seen == in[i].seen);
        assert_true(t.got[i].last_modified == in[i].last_modified);
        /* the client's tag (IndexNow's corroboration) */
        assert_int_equal(t.got[i].client, in[i].client);
        if (in[i].etag)
            assert_string_equal(t.got[i].etag, in[i].etag);
        else
            assert_null(t.got[i].etag);
        if (in[i].title)
            assert_string_equal(t.got[i].title, in[i].title);
        else
            assert_null(t.got[i].title);
        if (in[i].alternates)
            assert_string_equal(t.got[i].alternates, in[i].alternates);
        else
            assert_null(t.got[i].alternates);
    }
    /* Taken once: the file is gone. */
    assert_int_equal(count_files(u->dir, ".spill"), 0);
    assert_int_equal(count_files(u->dir, ".replaying"), 0);
    assert_int_equal(sm_spill_take(u->pool, db, 100, take_one, &t, NULL,
                                   &files, &changes), APR_SUCCESS);
    assert_int_equal(files, 0);
    assert_int_equal(t.n, 5);
    assert_int_equal(stat(db, &sb), -1);        /* the store not touched */
}

/* Spills of the module before alternates (six fields and a title) are
 * still read; alternates that no writer could make are not. */
static void test_alternates_field(void **state)
{
    unit_ctx *u = *state;
    char *db = apr_pstrcat(u->pool, u->dir, "/s.db", NULL);
    taken t = { u->pool, 0, { { 0 } }, { 0 } };
    int files, changes;
    static const char *bad[] = {
        /* A before T */
        "mod_sitemap spill 1\nR\t1700000000000000\t0\thttp://s.example\t/a"
        "\t-\tAde%20https://s.example/de\tTtitle\nend 1\n",
        /* an hreflang in capitals (stored lowercased) */
        "mod_sitemap spill 1\nR\t1700000000000000\t0\thttp://s.example\t/a"
        "\t-\tADE%20https://s.example/de\nend 1\n",
        /* an href not in the stored form */
        "mod_sitemap spill 1\nR\t1700000000000000\t0\thttp://s.example\t/a"
        "\t-\tAde%20https://s.example/\"<x>\nend 1\n",
        /* an unknown field */
        "mod_sitemap spill 1\nR\t1700000000000000\t0\thttp://s.example\t/a"
        "\t-\tXwhat\nend 1\n",
    };
    int i;

    put(apr_pstrcat(u->pool, db, ".spill-old", NULL),
        "mod_sitemap spill 1\n"
        "R\t1700000000000000\t0\thttp://s.example\t/a\t-\tTOld%20title\n"
        "R\t1700000000000001\t0\thttp://s.example\t/b\t=\"e\"\n"
        "end 2\n");
    assert_int_equal(sm_spill_take(u->pool, db, 100, take_one, &t, NULL,
                                   &files, &changes), APR_SUCCESS);
    assert_int_equal(files, 1);
    assert_int_equal(t.n, 2);
    assert_string_equal(t.got[0].title, "Old title");
    assert_null(t.got[0].alternates);
    assert_null(t.got[1].title);
    assert_null(t.got[1].alternates);

    for (i = 0; i < 4; i++)
        put(apr_psprintf(u->pool, "%s.spill-bad%d", db, i), bad[i]);
    assert_int_equal(sm_spill_take(u->pool, db, 100, take_one, &t, NULL,
                                   &files, &changes), APR_SUCCESS);
    assert_int_equal(files, 0);
    assert_int_equal(t.n, 2);
}

static void test_incomplete_and_foreign_files_are_left(void **state)
{
    unit_ctx *u = *state;
    char *db = apr_pstrcat(u->pool, u->dir, "/s.db", NULL);
    taken t = { u->pool, 0, { { 0 } }, { 0 } };
    static const char *bad[] = {
        /* no closing line (cut short) */
        "mod_sitemap spill 1\nR\t1700000000000000\t0\thttp://s.example\t/a\t-\n",
        /* the count does not match */
        "mod_sitemap spill 1\nR\t1700000000000000\t0\thttp://s.example\t/a\t-\nend 2\n",
        /* a raw blank in a field */
        "mod_sitemap spill 1\nR\t1700000000000000\t0\thttp://s.example\t/a b\t-\nend 1\n",
        /* another format */
        "something else\n",
    };
    int files, changes, i;

    for (i = 0; i < 4; i++)
        put(apr_psprintf(u->pool, "%s.spill-bad%d", db, i), bad[i]);
    assert_int_equal(symlink("/etc/hostname",
                             apr_pstrcat(u->pool, db, ".spill-link", NULL)),
                     0);
    assert_int_equal(sm_spill_take(u->pool, db, 100, take_one, &t, NULL,
                                   &files, &changes), APR_SUCCESS);
    assert_int_equal(files, 0);
    assert_int_equal(t.n, 0);
    assert_int_equal(count_files(u->dir, ".spill-bad-"), 5);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_alternates_field, unit_setup,
                                        unit_teardown),
        cmocka_unit_test_setup_teardown(test_round_trip, unit_setup,
                                        unit_teardown),
        cmocka_unit_test_setup_teardown(
            test_incomplete_and_foreign_files_are_left, unit_setup,
            unit_teardown),
    };
    apr_initialize();
    atexit(apr_terminate);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
