# SPDX-License-Identifier: Apache-2.0
"""Real applications (issue 31, item 9): WordPress 6.1 on a throwaway
MariaDB and MediaWiki 1.39 on SQLite, Debian's packages behind mod_php
(prefork), mod_rewrite and mod_deflate, each in a vhost with Sitemap On.

A crawler (apps.crawl) reads each site as a search engine would and works
out the truth: the pages it would index.  The sitemap must list exactly
those (precision and recall 100%), never content that is private, a
draft or scheduled, also after a signed-in editor has seen it (a
password-protected post is public: anyone gets its page, 200, with the
password form, self-canonical, and a search engine indexes that page; it
is listed as any other); an edit moves a page's <lastmod>, repeated GETs of an unchanged
page never do, and "Discourage search engines" takes a listed page out.

The applications are installed once per session (apps.py's fixtures);
the tests of one application run in the order of this file."""
import os
import time

from apps import (compare, cookie_header, crawl, mariadb, mw_site,  # noqa: F401
                  wp_login, wp_php, wp_site)


def report(site, crawl_result, listed):
    """Numbers and the module's reasons for what it left out."""
    missing = crawl_result.indexable - listed
    reasons = site.not_recorded_reasons(sorted(missing)[:50])
    lines = [crawl_result.summary() + f", {len(listed)} listed"]
    if os.environ.get("SITEMAP_TEST_CRAWL_TABLE"):
        lines.append(crawl_result.table())
    for p in sorted(missing)[:50]:
        lines.append(f"  {p}: not recorded ({', '.join(sorted(reasons.get(p, ['no log line'])))})")
    return "\n".join(lines)


def wp_private_paths(site):
    links = site.info["links"]
    return {site.path_of(links[k]) for k in
            ("private", "private_page", "future", "draft_preview")}


# ---------------------------------------------------------------------------
# WordPress

def test_wordpress_sitemap_is_what_a_crawler_indexes(wp_site):
    site = wp_site
    c = crawl(site)
    site.flush()
    listed = site.sitemap_paths()
    print(report(site, c, listed))
    assert not c.truncated, f"crawl bound reached: {c.summary()}"
    assert len(c.indexable) >= 30, c.summary()
    # a password-protected post answers its form to everyone, 200 and
    # indexable: a page like any other (README, "Applications")
    protected = site.path_of(site.info["links"]["protected"])
    assert protected in c.indexable, "the protected post is linked from the blog"
    truth = c.indexable
    problems = []
    never = wp_private_paths(site) & listed
    if never:
        problems.append("private, draft or scheduled content "
                        f"listed: {sorted(never)}")
    diff = compare(truth, listed)
    if diff:
        problems.append(diff + "\n" + report(site, c, listed))
    assert not problems, "\n".join(problems)


def test_wordpress_editor_views_stay_out(wp_site):
    site = wp_site
    jar = wp_login(site)
    links = site.info["links"]
    seen = {}
    for k in ("private", "draft_preview", "future", "private_page"):
        path = site.path_of(links[k])
        r = site.get(path, headers={"Cookie": cookie_header(jar)})
        if r.status == 301 and site.path_of(r.header("Location") or ""):
            # /?p=ID of a private post: WordPress sends the editor on to
            # its pretty URL
            path = site.path_of(r.header("Location"))
            r = site.get(path, headers={"Cookie": cookie_header(jar)})
        seen[k] = (path, r.status)
        site.editor_seen = getattr(site, "editor_seen", {})
        site.editor_seen[path] = r.headers
    # the editor really saw them (else the test proves nothing)
    assert all(s == 200 for _, s in seen.values()), seen
    site.flush()
    paths = {p for p, _ in seen.values()}
    listed = site.sitemap_paths()
    html = site.html_sitemap_paths()
    bad = sorted(paths & listed)
    bad_html = sorted(paths & html)
    assert not bad and not bad_html, (
        f"signed-in editor's views listed: sitemap.xml {bad}, site map {bad_html}; "
        f"module: {site.not_recorded_reasons(sorted(paths))}")


def test_wordpress_edit_moves_lastmod_repeats_do_not(wp_site):
    site = wp_site
    links = site.info["links"]
    edited = site.path_of(links["posts"][5])
    steady = [site.path_of(u) for u in links["posts"][6:9]]
    for p in [edited] + steady:
        assert site.get(p).status == 200, p
    site.flush()
    before = site.lastmods()
    assert edited in before, f"{edited} not listed: {sorted(before)}"
    time.sleep(1.1)                     # lastmod has a one-second grain
    # unchanged pages, GET many times, keep their lastmod
    for _ in range(5):
        for p in steady:
            assert site.get(p).status == 200
    wp_php(site, f"wp_update_post(array('ID' => {site.info['posts'][5]}, "
                 "'post_content' => '<p>Edited: new text.</p>'));")
    assert "Edited: new text." in site.get(edited).text
    site.flush()
    after = site.lastmods()
    moved = {p: (before.get(p), after.get(p)) for p in steady if before.get(p) != after.get(p)}
    assert not moved, f"unchanged pages' lastmod moved: {moved}"
    assert after.get(edited) and after[edited] > before[edited], (
        f"edited {edited}: lastmod {before[edited]} -> {after.get(edited)}")


def test_wordpress_discourage_search_engines(wp_site):
    site = wp_site
    page = site.path_of(site.info["links"]["posts"][10])
    assert site.get(page).status == 200
    site.flush()
    assert page in site.sitemap_paths()
    wp_php(site, "update_option('blog_public', 0);")
    try:
        r = site.get(page)
        assert r.status == 200 and "noindex" in r.text, r.headers
        site.flush()
        listed = site.sitemap_paths()
        assert page not in listed, (
            f"{page} still listed after blog_public=0 (meta robots noindex); "
            f"headers {r.headers}")
    finally:
        wp_php(site, "update_option('blog_public', 1);")


# ---------------------------------------------------------------------------
# MediaWiki

def test_mediawiki_sitemap_is_what_a_crawler_indexes(mw_site):
    site = mw_site
    c = crawl(site)
    site.flush()
    listed = site.sitemap_paths()
    print(report(site, c, listed))
    assert not c.truncated, f"crawl bound reached: {c.summary()}"
    assert len(c.indexable) >= 20, c.summary()
    diff = compare(c.indexable, listed)
    assert not diff, diff + "\n" + report(site, c, listed)


def test_mediawiki_short_urls(mw_site):
    """The same wiki with /wiki/Title URLs (a vhost RewriteRule to
    index.php, as mediawiki.org's short-URL manual says)."""
    site = mw_site.short
    c = crawl(site)
    site.flush()
    listed = site.sitemap_paths()
    print(report(site, c, listed))
    assert not c.truncated, f"crawl bound reached: {c.summary()}"
    assert len(c.indexable) >= 20, c.summary()
    assert all(p.startswith("/wiki/") for p in c.indexable), sorted(c.indexable)
    diff = compare(c.indexable, listed)
    assert not diff, diff + "\n" + report(site, c, listed)
