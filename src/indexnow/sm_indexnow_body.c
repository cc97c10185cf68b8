/* SPDX-License-Identifier: Apache-2.0 */
/* sm_indexnow_body.c: what IndexNow sends and with which key (see
 * sm_indexnow.h): no libcurl, so a build without IndexNow
 * (configure --without-indexnow) still checks keys the same way. */
#include "indexnow/sm_indexnow.h"

#include <apr_lib.h>
#include <apr_strings.h>
#include <string.h>

const char *sm_indexnow_key_problem(const char *key)
{
    apr_size_t len = strlen(key), i;

    if (len < SM_INDEXNOW_KEY_MIN || len > SM_INDEXNOW_KEY_MAX)
        return "it must have 8 to 128 characters";
    for (i = 0; i < len; i++)
        if (!apr_isalnum(key[i]) && key[i] != '-')
            return "it may hold only a-z, A-Z, 0-9 and '-'";
    return NULL;
}

/* ---- the JSON body ---------------------------------------------------------
 * By hand: four fields of strings, no JSON library among the project's
 * dependencies, and stored URLs are ASCII (sm_url canonical forms). */

static void json_string(apr_pool_t *p, apr_array_header_t *out,
                        const char *s)
{
    static const char hex[] = "0123456789abcdef";

    APR_ARRAY_PUSH(out, char) = '"';
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') {
            APR_ARRAY_PUSH(out, char) = '\\';
            APR_ARRAY_PUSH(out, char) = (char)c;
        }
        else if (c < 0x20) {
            APR_ARRAY_PUSH(out, char) = '\\';
            APR_ARRAY_PUSH(out, char) = 'u';
            APR_ARRAY_PUSH(out, char) = '0';
            APR_ARRAY_PUSH(out, char) = '0';
            APR_ARRAY_PUSH(out, char) = hex[c >> 4];
            APR_ARRAY_PUSH(out, char) = hex[c & 15];
        }
        else
            APR_ARRAY_PUSH(out, char) = (char)c;
    }
    APR_ARRAY_PUSH(out, char) = '"';
    (void)p;
}

static void json_raw(apr_array_header_t *out, const char *s)
{
    for (; *s; s++)
        APR_ARRAY_PUSH(out, char) = *s;
}

/* The host of a base URL, without its port: IndexNow names hosts. */
static const char *base_host(apr_pool_t *p, const char *base)
{
    const char *h = strstr(base, "://");
    const char *end;

    h = h ? h + 3 : base;
    if (*h == '[')
        end = strchr(h, ']') ? strchr(h, ']') + 1 : h + strlen(h);
    else
        end = strchr(h, ':') ? strchr(h, ':') : h + strlen(h);
    return apr_pstrmemdup(p, h, (apr_size_t)(end - h));
}

const char *sm_indexnow_json(apr_pool_t *p, const sm_indexnow_site *site,
                             const apr_array_header_t *items)
{
    apr_array_header_t *out = apr_array_make(p, 256 + items->nelts * 64, 1);
    int i;

    json_raw(out, "{\"host\":");
    json_string(p, out, base_host(p, site->base));
    json_raw(out, ",\"key\":");
    json_string(p, out, site->key);
    json_raw(out, ",\"keyLocation\":");
    json_string(p, out, apr_pstrcat(p, site->base, "/", site->key, ".txt",
                                    NULL));
    json_raw(out, ",\"urlList\":[");
    for (i = 0; i < items->nelts; i++) {
        const sm_indexnow_item *it =
            &APR_ARRAY_IDX(items, i, sm_indexnow_item);
        if (i)
            APR_ARRAY_PUSH(out, char) = ',';
        json_string(p, out, apr_pstrcat(p, site->base, it->url, NULL));
    }
    json_raw(out, "]}");
    APR_ARRAY_PUSH(out, char) = '\0';
    return out->elts;
}

/* ---- the sender ------------------------------------------------------------ */

