/* SPDX-License-Identifier: Apache-2.0 */
/* sm_sitemap.c: see sm_sitemap.h. */
#include "serve/sm_sitemap.h"
#include "util/sm_hot.h"
#include "util/sm_url.h"

#include <apr_lib.h>
#include <apr_strings.h>
#include <stdlib.h>
#include <string.h>

const char *sm_sitemap_path_check(const char *path)
{
    return sm_doc_path_check(path, ".xml");
}

/* Where the extension of a document path starts (its last '.'). */
static apr_size_t ext_at(const char *path)
{
    const char *dot = strrchr(path, '.');
    return dot ? (apr_size_t)(dot - path) : strlen(path);
}

const char *sm_doc_path_check(const char *path, const char *ext)
{
    apr_size_t len = strlen(path), elen = strlen(ext);

    if (path[0] != '/')
        return "must start with '/'";
    if (len < elen + 2 || strcmp(path + len - elen, ext) != 0
        || path[len - elen - 1] == '/')
        return ext[1] == 'x' && ext[2] == 'm'
               ? "must end in a file name with '.xml'"
               : ext[1] == 't' ? "must end in a file name with '.txt'"
               : "must end in a file name with '.html'";
    /* Only what a stored path holds literally (sm_url.c): so the path is
     * the same in a request's r->uri (decoded) as in the <loc>, and every
     * crawler requests it as written.  '%' is refused too: an escape in
     * the directive would never match the decoded r->uri. */
    if (strpbrk(path, "%?") || !sm_url_is_stored_form(path))
        return "may only hold letters, digits, '/' and - . _ ~ ! $ & ' ( ) "
               "* + , ; = : @ (no spaces, control or non-ASCII characters, "
               "'%', '?', '#', '[', ']', '\"' or other characters a URL "
               "must escape)";
    if (strstr(path, "/./") || strstr(path, "/../") || strstr(path, "//"))
        return "may not hold '.', '..' or empty segments";
    return NULL;
}

const char *sm_page_path(apr_pool_t *p, const char *sitemap_path,
                         apr_int64_t n)
{
    apr_size_t stem = ext_at(sitemap_path);         /* without ".xml" */
    return apr_psprintf(p, "%.*s-%" APR_INT64_T_FMT "%s", (int)stem,
                        sitemap_path, n, sitemap_path + stem);
}

SM_HOT apr_int64_t sm_name_parse(const char *sitemap_path, const char *uri)
{
    apr_size_t stem, len, digits, elen;
    apr_int64_t n = 0;
    const char *d, *ext;
    const char *seg_end;

    /* Asked of every request: most differ in their first two bytes
     * (sitemap_path is at least "/x.xml"). */
    if (uri[0] != sitemap_path[0] || uri[1] != sitemap_path[1])
        return SM_NAME_NOT_OURS;
    stem = ext_at(sitemap_path);
    ext = sitemap_path + stem;
    elen = strlen(ext);
    len = strlen(uri);
    if (strcmp(uri, sitemap_path) == 0)
        return SM_NAME_INDEX;
    if (strncmp(uri, sitemap_path, stem) != 0 || uri[stem] != '-')
        return SM_NAME_NOT_OURS;
    /* "<stem>-<anything>.xml", possibly followed by more path: ours. */
    d = uri + stem + 1;
    seg_end = strchr(d, '/');
    if (!seg_end)
        seg_end = uri + len;
    if ((apr_size_t)(seg_end - d) < elen
        || strncmp(seg_end - elen, ext, elen) != 0)
        return SM_NAME_NOT_OURS;
    if (*seg_end)
        return SM_NAME_BAD;
    digits = len - stem - 1 - elen;
    if (digits == 0 || digits > 9 || d[0] == '0')
        return SM_NAME_BAD;
    for (; digits; digits--, d++) {
        if (!apr_isdigit(*d))
            return SM_NAME_BAD;
        n = n * 10 + (*d - '0');
    }
    return n;
}

SM_HOT apr_int64_t sm_name_parse_gz(const char *sitemap_path,
                                    const char *uri, int *gz)
{
    char buf[1024], *name = buf;
    apr_int64_t n = sm_name_parse(sitemap_path, uri);
    apr_size_t len;

    *gz = 0;
    if (n != SM_NAME_NOT_OURS)
        return n;
    len = strlen(uri);
    if (len < 8 || memcmp(uri + len - 7, ".xml.gz", 7) != 0)
        return SM_NAME_NOT_OURS;
    /* Rare (only names ending in .xml.gz): a long one may be copied
     * to the heap. */
    if (len - 3 >= sizeof(buf) && !(name = malloc(len - 2)))
        return SM_NAME_NOT_OURS;
    memcpy(name, uri, len - 3);
    name[len - 3] = '\0';
    n = sm_name_parse(sitemap_path, name);
    if (name != buf)
        free(name);
    *gz = n >= 0;
    return n;
}

static const char *const changefreq_words[] = {
    "always", "hourly", "daily", "weekly", "monthly", "yearly", "never", NULL
};

const char *sm_changefreq_check(const char *word)
{
    int i;
    for (i = 0; changefreq_words[i]; i++)
        if (strcmp(word, changefreq_words[i]) == 0)
            return NULL;
    return "one of always, hourly, daily, weekly, monthly, yearly, never";
}

const char *sm_priority_canon(apr_pool_t *p, const char *v)
{
    int whole = 0, tenth = 0;
    const char *c = v;

    if (*c >= '0' && *c <= '1' && (c[1] == '\0' || c[1] == '.')) {
        whole = *c - '0';
        c++;
    }
    else if (*c != '.') {
        return NULL;
    }
    if (*c == '.') {
        c++;
        if (!apr_isdigit(*c) || c[1] != '\0')
            return NULL;
        tenth = *c - '0';
        c++;
    }
    if (*c || (whole == 1 && tenth != 0) || c == v)
        return NULL;
    return apr_psprintf(p, "%d.%d", whole, tenth);
}

static void format_annotations(apr_array_header_t *lines, const char *kind,
                               const apr_array_header_t *list)
{
    int i;
    for (i = 0; list && i < list->nelts; i++) {
        const sm_annotation *a = &APR_ARRAY_IDX(list, i, sm_annotation);
        APR_ARRAY_PUSH(lines, const char *) =
            apr_psprintf(lines->pool, "%s %s %s\n", kind, a->value,
                         sm_regex_pattern(a->re));
    }
}

const char *sm_settings_format(apr_pool_t *p, const char *sitemap_path,
                               int page_size,
                               const apr_array_header_t *changefreq,
                               const apr_array_header_t *priority,
                               const char *stylesheet)
{
    apr_array_header_t *lines = apr_array_make(p, 8, sizeof(char *));

    APR_ARRAY_PUSH(lines, const char *) =
        apr_psprintf(p, "path %s\npage_size %d\n", sitemap_path, page_size);
    if (stylesheet)
        APR_ARRAY_PUSH(lines, const char *) =
            apr_psprintf(p, "stylesheet %s\n", stylesheet);
    format_annotations(lines, "changefreq", changefreq);
    format_annotations(lines, "priority", priority);
    return apr_array_pstrcat(p, lines, '\0');
}

/* "kind value rest": value holds no space, rest (a regex) may. */
static const char *parse_annotation(apr_pool_t *p, const char *kind,
                                    const char *rest, int lineno,
                                    apr_array_header_t *list)
{
    const char *sp = strchr(rest, ' '), *value, *err;
    sm_annotation *a;
    sm_regex *re;

    if (!sp || sp == rest || !sp[1])
        return apr_psprintf(p, "line %d: '%s' needs a value and a regular "
                            "expression", lineno, kind);
    value = apr_pstrmemdup(p, rest, (apr_size_t)(sp - rest));
    if (strcmp(kind, "changefreq") == 0) {
        if ((err = sm_changefreq_check(value)) != NULL)
            return apr_psprintf(p, "line %d: changefreq '%s' is not %s",
                                lineno, value, err);
    }
    else if (!(value = sm_priority_canon(p, value))) {
        return apr_psprintf(p, "line %d: priority '%.*s' is not a number "
                            "from 0.0 to 1.0", lineno, (int)(sp - rest),
                            rest);
    }
    if (!(re = sm_regex_compile(p, sp + 1, &err)))
        return apr_psprintf(p, "line %d: %s", lineno, err);
    a = apr_array_push(list);
    a->re = re;
    a->value = value;
    return NULL;
}

const char *sm_settings_parse(apr_pool_t *p, const char *text,
                              sm_settings *out)
{
    const char *line = text ? text : "";
    int lineno = 0;

    out->path = SM_SETTINGS_DEFAULT_PATH;
    out->page_size = SM_SETTINGS_DEFAULT_PAGE_SIZE;
    out->changefreq = apr_array_make(p, 2, sizeof(sm_annotation));
    out->priority = apr_array_make(p, 2, sizeof(sm_annotation));
    out->stylesheet = NULL;

    while (*line) {
        const char *nl = strchr(line, '\n');
        apr_size_t len = nl ? (apr_size_t)(nl - line) : strlen(line);
        char *l = apr_pstrmemdup(p, line, len);
        char *sp = strchr(l, ' ');
        const char *err;

        lineno++;
        line += len + (nl ? 1 : 0);
        if (!*l)
            continue;
        if (!sp)
            return apr_psprintf(p, "line %d: '%s' has no value", lineno, l);
        *sp++ = '\0';
        if (strcmp(l, "path") == 0) {
            if ((err = sm_sitemap_path_check(sp)) != NULL)
                return apr_psprintf(p, "line %d: path '%s' %s", lineno, sp,
                                    err);
            out->path = sp;
        }
        else if (strcmp(l, "page_size") == 0) {
            char *end;
            apr_int64_t n = apr_strtoi64(sp, &end, 10);
            if (!apr_isdigit(*sp) || *end || n < 1
                || n > SM_SETTINGS_DEFAULT_PAGE_SIZE)
                return apr_psprintf(p, "line %d: page_size '%s' is not a "
                                    "whole number from 1 to %d", lineno, sp,
                                    SM_SETTINGS_DEFAULT_PAGE_SIZE);
            out->page_size = (int)n;
        }
        else if (strcmp(l, "stylesheet") == 0) {
            if ((err = sm_stylesheet_url_check(sp)) != NULL)
                return apr_psprintf(p, "line %d: stylesheet '%s' %s", lineno,
                                    sp, err);
            out->stylesheet = sp;
        }
        else if (strcmp(l, "changefreq") == 0) {
            if ((err = parse_annotation(p, l, sp, lineno, out->changefreq)))
                return err;
        }
        else if (strcmp(l, "priority") == 0) {
            if ((err = parse_annotation(p, l, sp, lineno, out->priority)))
                return err;
        }
        /* else: an item a newer module writes; not needed here. */
    }
    return NULL;
}

const char *sm_annotation_find(const apr_array_header_t *annotations,
                               const char *path)
{
    int i;

    if (!annotations)
        return NULL;
    for (i = 0; i < annotations->nelts; i++) {
        const sm_annotation *a = &APR_ARRAY_IDX(annotations, i, sm_annotation);
        if (sm_regex_match(a->re, path))
            return a->value;
    }
    return NULL;
}

const char *sm_stylesheet_url_check(const char *url)
{
    const char *c;

    if (!*url)
        return "is empty";
    if (strlen(url) > 2048)
        return "is longer than 2,048 characters";
    /* Kept to what RFC 3986 allows literally (a URL's own escapes stay
     * '%'): nothing to escape in the processing instruction or the HTML
     * attribute it goes into, no "?>" that could end the instruction. */
    for (c = url; *c; c++) {
        if (!apr_isgraph(*c) || strchr("\"<>\\^`{|}", *c))
            return "may hold only the characters a URL holds literally "
                   "(no spaces, quotes, '<', '>' or control and non-ASCII "
                   "characters)";
        if (c[0] == '?' && c[1] == '>')
            return "may not hold '?>'";
    }
    return NULL;
}

const char *sm_stylesheet_default(apr_pool_t *p, const char *sitemap_path)
{
    const char *slash = strrchr(sitemap_path, '/');
    return apr_pstrcat(p, apr_pstrmemdup(p, sitemap_path,
                                         (apr_size_t)(slash - sitemap_path)
                                         + 1),
                       SM_STYLESHEET_NAME, NULL);
}
