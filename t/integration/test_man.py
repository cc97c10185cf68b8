# SPDX-License-Identifier: Apache-2.0
"""The manual pages: sitemapctl(8) and mod_sitemap(5) render without a
warning (groff -ww, mandoc -Tlint), `make install` installs them, and they
match the README and sitemapctl --help (directives and their defaults,
commands, options, exit statuses)."""
import os
import re
import shutil
import subprocess

import pytest

from conftest import SITEMAPCTL, TOP_BUILDDIR, TOP_SRCDIR

MAN_PAGES = {"sitemapctl.8": "man8", "mod_sitemap.5": "man5"}


def man_path(name):
    return os.path.join(TOP_SRCDIR, "man", name)


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def roff_text(line):
    """A roff line's words, without requests' names and escapes."""
    line = re.sub(r"^\.\w+\s*", "", line)
    line = re.sub(r"\\f[BIRP]", "", line).replace("\\-", "-").replace("\\(mu", "x")
    return line.replace('"', "")


@pytest.mark.parametrize("page", sorted(MAN_PAGES))
def test_renders_without_warnings(page):
    r = subprocess.run(["groff", "-man", "-ww", "-z", man_path(page)],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert r.returncode == 0 and r.stdout == "", r.stdout
    if shutil.which("mandoc"):
        r = subprocess.run(["mandoc", "-Tlint", "-W", "style", man_path(page)],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        assert r.returncode == 0 and r.stdout == "", r.stdout
    # and man(1) shows it (what an administrator runs)
    r = subprocess.run(["man", "-l", man_path(page)], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True, env=dict(os.environ, MANPAGER="cat",
                                                                   PAGER="cat", MANWIDTH="80"))
    assert r.returncode == 0 and r.stderr == "", r.stderr
    assert "NAME" in r.stdout and "SEE ALSO" in r.stdout


def test_make_install_installs_them(tmp_path):
    env = {k: v for k, v in os.environ.items()
           if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES")}
    r = subprocess.run(["make", "-s", "-C", TOP_BUILDDIR, "install-man", f"DESTDIR={tmp_path}",
                        "prefix=/usr"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True, env=env)
    assert r.returncode == 0, r.stdout
    for page, section in MAN_PAGES.items():
        installed = tmp_path / "usr" / "share" / "man" / section / page
        assert installed.is_file(), f"{installed} not installed"
        assert installed.read_text() == read(man_path(page))


def readme_section(title):
    text = read(os.path.join(TOP_SRCDIR, "README"))
    m = re.search(r"^%s\n-+\n(.*?)(?=^\S[^\n]*\n-+\n|\Z)" % re.escape(title), text, re.S | re.M)
    assert m, f"no section {title!r} in the README"
    return m.group(1)


def readme_directives():
    """{directive: its Default sentence} from the README's Directives."""
    out = {}
    for m in re.finditer(r"^(Sitemap\w*) [^\n]*\n    Default: ([^.]*(?:\.\d[^.]*)*)\.",
                         readme_section("Directives"), re.M):
        out[m.group(1)] = " ".join(m.group(2).split())
    return out


def man_directives():
    out = {}
    lines = read(man_path("mod_sitemap.5")).splitlines()
    for i, line in enumerate(lines):
        if i and lines[i - 1] == ".TP" and re.match(r"^\.BI? Sitemap", line):
            name = roff_text(line).split()[0]
            body = []
            for follow in lines[i + 1:]:
                if follow.startswith((".TP", ".SH")):
                    break
                body.append(roff_text(follow))
            text = " ".join(" ".join(body).split())
            m = re.match(r"Default: ([^.]*(?:\.\d[^.]*)*)\.", text)
            assert m, f"{name}: no Default in the manual page: {text[:80]}"
            out[name] = " ".join(m.group(1).split())
    return out


def test_mod_sitemap_page_has_every_directive_of_the_readme():
    readme, man = readme_directives(), man_directives()
    assert len(readme) >= 16, readme
    assert sorted(man) == sorted(readme)
    for name, default in readme.items():
        # The same default, word for word (the README may say more after it).
        assert man[name].split(",")[0].split("(")[0].strip() \
            == default.split(",")[0].split("(")[0].strip(), (name, man[name], default)


def help_text():
    r = subprocess.run([SITEMAPCTL, "--help"], stdout=subprocess.PIPE, text=True)
    assert r.returncode == 0
    return r.stdout


# An exit status list: "  N  text" with continuation lines indented
# further (--help, the README), or ".TP\n.B N\ntext" (the manual page).
TEXT_STATUS_RX = r"^ +(\d)  +(\S[^\n]*(?:\n {6,}\S[^\n]*)*)"
ROFF_STATUS_RX = r"^\.TP\n\.B (\d)\n((?:[^.\n][^\n]*\n?)*)"


def exit_statuses(text, rx=TEXT_STATUS_RX):
    """{number: its whole text, blanks folded}."""
    return {int(m.group(1)): " ".join(m.group(2).split()) for m in re.finditer(rx, text, re.M)}


def man_exit_statuses():
    page = read(man_path("sitemapctl.8"))
    return exit_statuses(page.split(".SH EXIT STATUS", 1)[1].split(".SH", 1)[0], ROFF_STATUS_RX)


def test_sitemapctl_page_matches_help_and_readme():
    page = read(man_path("sitemapctl.8"))
    text = help_text()
    commands = re.findall(r"^  sitemapctl (\w+) ", text, re.M)
    assert len(commands) >= 8, text
    synopsis = page.split(".SH SYNOPSIS", 1)[1].split(".SH", 1)[0]
    described = page.split(".SH COMMANDS", 1)[1].split(".SH", 1)[0]
    for cmd in commands:
        assert f".SY sitemapctl\n.B {cmd}\n" in synopsis, f"{cmd} not in the SYNOPSIS"
        assert f".TP\n.B {cmd}\n" in described, f"{cmd} not in COMMANDS"
    options = set(re.findall(r"(--[a-z][a-z-]+)", text))
    man_options = set(o.replace("\\-", "-") for o in
                      re.findall(r"^\.BI? (\\-\\-[a-z\\-]+)", page.split(".SH OPTIONS", 1)[1], re.M))
    assert options == man_options, (options, man_options)

    from_help = exit_statuses(text.split("Exit status:", 1)[1])
    from_readme = exit_statuses(readme_section("sitemapctl").split("Exit statuses:", 1)[1])
    from_man = man_exit_statuses()
    assert sorted(from_help) == sorted(from_man) == sorted(from_readme) == list(range(9)), \
        (from_help, from_man, from_readme)
    assert from_man == from_readme, (from_man, from_readme)


def test_readme_contents_lists_every_section():
    """The README's table of contents names its sections, in order."""
    text = read(os.path.join(TOP_SRCDIR, "README"))
    lines = text.split("\n")
    heads = [lines[i - 1] for i in range(1, len(lines))
             if re.fullmatch(r"-{3,}", lines[i]) and lines[i - 1].strip()
             and len(lines[i]) == len(lines[i - 1])]
    assert heads[0] == "Contents", heads[:3]
    start = text.index("Contents\n--------\n") + len("Contents\n--------\n")
    toc = [l.strip()[2:] for l in text[start:].split("\n\n\n")[0].split("\n")
           if l.strip().startswith("- ")]
    assert toc == heads[1:], (toc, heads[1:])
