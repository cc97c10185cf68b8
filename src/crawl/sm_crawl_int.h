/* SPDX-License-Identifier: Apache-2.0 */
/* sm_crawl_int.h: what sm_crawl.c and sm_crawl_precheck.c share (private
 * to src/crawl; callers use sm_crawl.h). */
#ifndef SM_CRAWL_INT_H
#define SM_CRAWL_INT_H

#include "crawl/sm_crawl.h"

#define SM_NEEDLE_MAX 8

/* A piece of a crawler's literal the pre-check looks for, compared ASCII
 * case-insensitively: (byte | mask) == text, mask 0x20 for a letter. */
typedef struct {
    unsigned char text[SM_NEEDLE_MAX];  /* lowercase */
    unsigned char mask[SM_NEEDLE_MAX];
    int len;                            /* 2 or more */
} sm_needle;

struct sm_crawl_list {
    apr_array_header_t *crawlers;       /* sm_crawler */
    int always;                         /* a crawler without a literal */
    int avx2;                           /* the CPU has AVX2 */
    sm_needle needles[SM_CRAWL_MAX];
    int n_needles;
    /* The needles' distinct first two bytes (the keys the scan looks for,
     * with their masks); needles[key_from[k] .. key_from[k + 1]) start
     * with key k. */
    unsigned char key0[SM_CRAWL_MAX], key1[SM_CRAWL_MAX];
    unsigned char mask0[SM_CRAWL_MAX], mask1[SM_CRAWL_MAX];
    int key_from[SM_CRAWL_MAX + 1];
    int n_keys;
    /* One key (the usual case: Googlebot and Bingbot share "bot") on a
     * CPU with AVX2: the single-pass scan (fast), with the key's bytes
     * and masks each repeated 32 times (key0, mask0, key1, mask1), loaded
     * rather than built per request. */
    int fast;
    unsigned char vec[4][32];
};

/* Choose the needles again from the crawlers' literals (after each
 * SitemapCrawler). */
void sm_crawl_choose_needles(sm_crawl_list *l);

#endif
