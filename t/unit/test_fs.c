/* SPDX-License-Identifier: Apache-2.0 */
/* Unit tests of sm_fs: walking to a directory without following links
 * others could plant, and handing over store files only when they are
 * plain files. */
#include "unit.h"

#include "util/sm_fs.h"

#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>

static char *at(unit_ctx *u, const char *rel)
{
    return apr_pstrcat(u->pool, u->dir, "/", rel, NULL);
}

static void touch(const char *path, mode_t mode)
{
    int fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, mode);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, "x", 1), 1);
    close(fd);
}

static void test_open_dir_makes_missing_dirs(void **state)
{
    unit_ctx *u = *state;
    char err[256];
    struct stat sb;
    int fd;

    assert_int_equal(sm_fs_open_dir(at(u, "a/b//c/"), 1, SM_FS_KEEP_ID,
                                    SM_FS_KEEP_ID, &fd, err, sizeof(err)),
                     APR_SUCCESS);
    assert_int_equal(fstat(fd, &sb), 0);
    assert_true(S_ISDIR(sb.st_mode));
    assert_int_equal(sb.st_mode & 0027, 0);     /* 0750 less the umask */
    close(fd);
    assert_int_equal(stat(at(u, "a/b/c"), &sb), 0);
    /* Without create, a missing one is an error naming it. */
    assert_int_equal(sm_fs_open_dir(at(u, "a/nope/d"), 0, SM_FS_KEEP_ID,
                                    SM_FS_KEEP_ID, &fd, err, sizeof(err)),
                     APR_ENOENT);
    assert_non_null(strstr(err, "a/nope': No such file"));
    /* A file on the way. */
    touch(at(u, "file"), 0600);
    assert_int_equal(sm_fs_open_dir(at(u, "file/d"), 1, SM_FS_KEEP_ID,
                                    SM_FS_KEEP_ID, &fd, err, sizeof(err)),
                     APR_ENOTDIR);
}

static void test_open_dir_and_links(void **state)
{
    unit_ctx *u = *state;
    char err[256];
    int fd;

    assert_int_equal(mkdir(at(u, "target"), 0700), 0);
    assert_int_equal(mkdir(at(u, "safe"), 0755), 0);
    assert_int_equal(mkdir(at(u, "open"), 0777), 0);
    assert_int_equal(chmod(at(u, "open"), 0777), 0);
    assert_int_equal(symlink(at(u, "target"), at(u, "safe/link")), 0);
    assert_int_equal(symlink(at(u, "target"), at(u, "open/link")), 0);

    /* A link in a directory only we can write: followed. */
    assert_int_equal(sm_fs_open_dir(at(u, "safe/link/new"), 1, SM_FS_KEEP_ID,
                                    SM_FS_KEEP_ID, &fd, err, sizeof(err)),
                     APR_SUCCESS);
    close(fd);
    assert_int_equal(access(at(u, "target/new"), F_OK), 0);
    /* In a directory others can write: refused, nothing made. */
    assert_int_equal(sm_fs_open_dir(at(u, "open/link/other"), 1,
                                    SM_FS_KEEP_ID, SM_FS_KEEP_ID, &fd, err,
                                    sizeof(err)), APR_EACCES);
    assert_non_null(strstr(err, "open/link' is a symbolic link in a "
                                "directory other users can write"));
    assert_int_not_equal(access(at(u, "target/other"), F_OK), 0);
}

/* The dry run: what sm_fs_open_dir(create 1) would meet, nothing made. */
static void test_probe_dir(void **state)
{
    unit_ctx *u = *state;
    char err[256];
    struct stat before, after;

    assert_int_equal(mkdir(at(u, "have"), 0755), 0);
    assert_int_equal(stat(at(u, "have"), &before), 0);
    /* Existing, or missing below a directory we can write: fine, and
     * nothing is made. */
    assert_int_equal(sm_fs_probe_dir(at(u, "have"), err, sizeof(err)),
                     APR_SUCCESS);
    assert_int_equal(sm_fs_probe_dir(at(u, "have/x/y"), err, sizeof(err)),
                     APR_SUCCESS);
    assert_int_not_equal(access(at(u, "have/x"), F_OK), 0);
    assert_int_equal(stat(at(u, "have"), &after), 0);
    assert_int_equal(after.st_mtime, before.st_mtime);
    /* A file on the way, as sm_fs_open_dir says it. */
    touch(at(u, "file"), 0600);
    assert_int_equal(sm_fs_probe_dir(at(u, "file/d"), err, sizeof(err)),
                     APR_ENOTDIR);
    assert_non_null(strstr(err, "file': Not a directory"));
    /* A link in a directory others can write: refused as the walk does. */
    assert_int_equal(mkdir(at(u, "open"), 0777), 0);
    assert_int_equal(chmod(at(u, "open"), 0777), 0);
    assert_int_equal(symlink(at(u, "have"), at(u, "open/link")), 0);
    assert_int_equal(sm_fs_probe_dir(at(u, "open/link/new"), err,
                                     sizeof(err)), APR_EACCES);
#ifdef __linux__
    /* A kernel file system takes no directory, not even from root. */
    assert_int_equal(sm_fs_probe_dir("/proc/sm-probe/d", err, sizeof(err)),
                     APR_ENOENT);
    assert_non_null(strstr(err, "'/proc/sm-probe': No such file or "
                                "directory, and no directory can be made "
                                "there (a proc file system)"));
#endif
    /* A directory we cannot write (root can write any). */
    if (geteuid() != 0) {
        assert_int_equal(chmod(at(u, "have"), 0555), 0);
        assert_int_equal(sm_fs_probe_dir(at(u, "have/x"), err, sizeof(err)),
                         APR_EACCES);
        assert_non_null(strstr(err, "have/x': Permission denied"));
        assert_int_equal(chmod(at(u, "have"), 0755), 0);
    }
}

static void test_give_file(void **state)
{
    unit_ctx *u = *state;
    char err[256];
    struct stat sb;
    int dirfd;

    touch(at(u, "store.db"), 0600);
    touch(at(u, "victim"), 0600);
    assert_int_equal(symlink(at(u, "victim"), at(u, "store.db-wal")), 0);
    assert_int_equal(link(at(u, "victim"), at(u, "store.db-shm")), 0);
    assert_int_equal(mkfifo(at(u, "fifo"), 0600), 0);
    assert_int_equal(mkdir(at(u, "dir"), 0700), 0);
    dirfd = open(u->dir, O_RDONLY | O_DIRECTORY);
    assert_true(dirfd >= 0);

    assert_int_equal(sm_fs_give_file(dirfd, "store.db", getuid(), getgid(),
                                     err, sizeof(err)), APR_SUCCESS);
    assert_int_equal(sm_fs_give_file(dirfd, "missing", getuid(), getgid(),
                                     err, sizeof(err)), APR_ENOENT);
    assert_int_equal(sm_fs_give_file(dirfd, "store.db-wal", getuid(),
                                     getgid(), err, sizeof(err)), APR_EACCES);
    assert_string_equal(err, "it is a symbolic link");
    assert_int_equal(sm_fs_give_file(dirfd, "store.db-shm", SM_FS_KEEP_ID,
                                     SM_FS_KEEP_ID, err, sizeof(err)),
                     APR_EACCES);
    assert_non_null(strstr(err, "2 hard links"));
    /* A FIFO is refused without being opened (which would block). */
    assert_int_equal(sm_fs_give_file(dirfd, "fifo", getuid(), getgid(),
                                     err, sizeof(err)), APR_EACCES);
    assert_string_equal(err, "it is not a regular file");
    assert_int_equal(sm_fs_give_file(dirfd, "dir", getuid(), getgid(),
                                     err, sizeof(err)), APR_EACCES);
    if (geteuid() == 0) {
        /* Owned by neither root nor the user it is for: left alone. */
        assert_int_equal(chown(at(u, "store.db"), 4242, 4242), 0);
        assert_int_equal(sm_fs_give_file(dirfd, "store.db", 33, 33, err,
                                         sizeof(err)), APR_EACCES);
        assert_non_null(strstr(err, "belongs to uid 4242"));
        assert_int_equal(chown(at(u, "store.db"), 0, 0), 0);
        assert_int_equal(sm_fs_give_file(dirfd, "store.db", 33, 33, err,
                                         sizeof(err)), APR_SUCCESS);
        assert_int_equal(stat(at(u, "store.db"), &sb), 0);
        assert_int_equal(sb.st_uid, 33);
        assert_int_equal(stat(at(u, "victim"), &sb), 0);
        assert_int_equal(sb.st_uid, 0);
    }
    close(dirfd);
}

static void test_split(void **state)
{
    unit_ctx *u = *state;
    const char *d, *n;

    sm_fs_split(u->pool, "/var/lib/x.db", &d, &n);
    assert_string_equal(d, "/var/lib");
    assert_string_equal(n, "x.db");
    sm_fs_split(u->pool, "/x.db", &d, &n);
    assert_string_equal(d, "/");
    sm_fs_split(u->pool, "x.db", &d, &n);
    assert_string_equal(d, ".");
    assert_string_equal(n, "x.db");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_open_dir_makes_missing_dirs,
                                        unit_setup, unit_teardown),
        cmocka_unit_test_setup_teardown(test_open_dir_and_links, unit_setup,
                                        unit_teardown),
        cmocka_unit_test_setup_teardown(test_probe_dir, unit_setup,
                                        unit_teardown),
        cmocka_unit_test_setup_teardown(test_give_file, unit_setup,
                                        unit_teardown),
        cmocka_unit_test_setup_teardown(test_split, unit_setup,
                                        unit_teardown),
    };
    apr_initialize();
    atexit(apr_terminate);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
