/* SPDX-License-Identifier: Apache-2.0 */
/* bench/expire.c: time sm_store_expire on a store, as the module's writer
 * runs it (SitemapExpire of LIMIT seconds), without HTTP.
 *
 *   expire DB BASE LIMIT [RUNS]
 *
 * DB     the store file, or a postgresql:// URI
 * BASE   the site's base URL (as bench/fill was given it)
 * LIMIT  URLs not seen for LIMIT seconds leave (bench/fill's URL i of
 *        COUNT was seen 86400 + COUNT - i seconds ago: LIMIT 31536000
 *        expires nothing, 86400 + COUNT - N the N first URLs)
 * RUNS   how many checks, one after the other (default 3)
 *
 * Prints, per run, the URLs removed and the wall-clock milliseconds of the
 * call (the claim, the read of the pages' figures and the walk). */
#include "store/sm_store.h"
#include "util/sm_url.h"

#include <apr_general.h>
#include <apr_strings.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    apr_pool_t *p;
    sm_store *st;
    sm_site_conf site = { NULL, 50000, 0, 0, NULL, 0 };
    char err[512];
    int runs, i;

    if (argc < 4 || argc > 5) {
        fprintf(stderr, "usage: expire DB BASE LIMIT [RUNS]\n");
        return 2;
    }
    runs = argc > 4 ? atoi(argv[4]) : 3;
    apr_initialize();
    apr_pool_create(&p, NULL);
    site.base = argv[2];
    site.expire = apr_time_from_sec(apr_atoi64(argv[3]));
    if (sm_store_open(&st, p, argv[1], 0, 10000, NULL, err, sizeof(err))
        != APR_SUCCESS) {
        fprintf(stderr, "expire: %s\n", err);
        return 1;
    }
    for (i = 0; i < runs; i++) {
        apr_time_t t0 = apr_time_now(), t1;
        int removed = 0;

        if (sm_store_expire(st, &site, t0, 0, &removed) != APR_SUCCESS) {
            fprintf(stderr, "expire: %s\n", sm_store_error(st));
            return 1;
        }
        t1 = apr_time_now();
        printf("run %d: %d URLs removed in %.2f ms\n", i + 1, removed,
               (double)(t1 - t0) / 1000.0);
    }
    sm_store_close(st);
    apr_terminate();
    return 0;
}
