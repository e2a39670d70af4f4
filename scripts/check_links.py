#!/usr/bin/env python3
"""Checks the internal links of a generated HTML site (the Doxygen site: docs/CMakeLists.txt runs
it after every docs build when python3 is installed, and scripts/check_docs.sh in CI).

    check_links.py <html dir>

Every href and src of every page (and the page links of Doxygen's navigation-tree scripts) must
name a file inside the site, and a #fragment must be an id or an <a name> of the page it points
into. Links with a scheme (http:, https:, mailto:, javascript:, ...) are not followed. It also
flags an en dash right before a word in the text (`--block` written outside backticks, which
Doxygen prints as "–block"), and a heading that shows markup instead of rendering it: Doxygen 1.9
prints the code span of a Markdown heading (## Why `x`) as the text "<tt>x</tt>", and a backtick
left in a heading's text is markup that did not render either. Exit status: 0 all good, 1
something broken (each listed), 2 bad usage.
Only the standard library is used.
"""
import html.parser
import os
import re
import sys
import urllib.parse

SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
# a page link inside Doxygen's navigation-tree and menu scripts (the .js files next to the pages,
# but for the code libraries): "file.html" or "file.html#anchor"
SCRIPT_LINK = re.compile(r"""["']([A-Za-z0-9_.-]+\.html(?:#[^"'\s]*)?)["']""")
CODE_SCRIPTS = {"jquery.js", "dynsections.js", "resize.js", "navtree.js", "menu.js", "search.js",
                "searchdata.js", "cookie.js", "clipboard.js"}
# an en dash, written as entity or character, at the start of a word: "–block", "&ndash;tile"
DASH_OPTION = re.compile(r"(?:^|[\s(\[>,/])(?:&ndash;|\u2013)(?=[a-z])")
HEADINGS = ("h1", "h2", "h3", "h4", "h5", "h6")
# markup a heading's text shows instead of rendering: a tag printed as text, or a backtick
HEADING_MARKUP = re.compile(r"&lt;/?[a-z]+&gt;|&#60;|`|&#96;|&grave;")


class Page(html.parser.HTMLParser):
    """The anchors a page defines, the links it makes and its text outside code."""

    CODE = ("pre", "code", "script", "style")

    def __init__(self):
        super().__init__(convert_charrefs=False)
        self.anchors, self.links, self.text = set(), [], []
        self.in_code = 0
        self.heading = None  # (line, text so far) inside a heading
        self.headings = []  # (line, text) of every heading, its entities as written

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        for key in ("id", "name") if tag == "a" else ("id",):
            if attrs.get(key):
                self.anchors.add(attrs[key])
        if tag in self.CODE:
            self.in_code += 1
        if tag in HEADINGS:
            self.heading = (self.getpos()[0], "")
        for key in ("href", "src"):
            if attrs.get(key) is not None:
                self.links.append((self.getpos()[0], key, attrs[key]))

    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs)
        if tag in self.CODE:
            self.in_code -= 1

    def handle_endtag(self, tag):
        if tag in self.CODE and self.in_code:
            self.in_code -= 1
        if tag in HEADINGS and self.heading is not None:
            self.headings.append(self.heading)
            self.heading = None

    def handle_data(self, data):
        if self.heading is not None:
            self.heading = (self.heading[0], self.heading[1] + data)
        # code is kept out of the text, with a mark in its place so that no word seems to start there
        self.text.append((self.getpos()[0], "\0" if self.in_code else data))

    def handle_entityref(self, name):
        self.handle_data(f"&{name};")

    def handle_charref(self, name):
        self.handle_data(f"&#{name};")

    def stray_markup(self):
        """(line, text) of each heading whose text shows markup."""
        return [(line, " ".join(text.split())) for line, text in self.headings if HEADING_MARKUP.search(text)]

    def dashes(self):
        """(line, text) of each en dash at the start of a word."""
        found, text, starts = [], "", []
        for line, chunk in self.text:
            starts.append((len(text), line))
            text += chunk
        for match in DASH_OPTION.finditer(text):
            line = max((s for s in starts if s[0] <= match.end() - 1), default=(0, 0))[1]
            if found and found[-1][0] == line:
                continue  # one report a line is enough
            snippet = text[max(0, match.start() - 25):match.end() + 25].replace("\0", "")
            found.append((line, " ".join(snippet.split())))
        return found


def read(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        return f.read()


def main(argv):
    if len(argv) != 2 or not os.path.isdir(argv[1]):
        print("usage: check_links.py <html dir>", file=sys.stderr)
        return 2
    site = os.path.realpath(argv[1])
    pages, scripts = {}, []
    for folder, _, names in os.walk(site):
        for name in names:
            path = os.path.join(folder, name)
            if name.endswith((".html", ".htm")):
                page = Page()
                page.feed(read(path))
                page.close()
                pages[path] = page
            elif folder == site and name.endswith(".js") and name not in CODE_SCRIPTS:
                scripts.append(path)

    broken, checked = [], 0

    def check(source, line, what, value):
        nonlocal checked
        value = value.strip()
        if not value or value == "#" or SCHEME.match(value) or value.startswith("//"):
            return
        checked += 1
        url = urllib.parse.urlsplit(value)
        where = f"{os.path.relpath(source, site)}:{line}"
        if url.path:
            target = os.path.realpath(os.path.join(os.path.dirname(source), urllib.parse.unquote(url.path)))
            if not (target == site or target.startswith(site + os.sep)):
                broken.append(f"{where}: {what}=\"{value}\": outside the site")
                return
            if not os.path.exists(target):
                broken.append(f"{where}: {what}=\"{value}\": no file {os.path.relpath(target, site)}")
                return
        else:
            target = source
        if url.fragment:
            page = pages.get(target)
            if page is None:
                if target.endswith((".html", ".htm")):
                    broken.append(f"{where}: {what}=\"{value}\": cannot read the target page")
                return
            if urllib.parse.unquote(url.fragment) not in page.anchors:
                broken.append(f"{where}: {what}=\"{value}\": no anchor #{url.fragment} in "
                              f"{os.path.relpath(target, site)}")

    for path, page in sorted(pages.items()):
        for line, key, value in page.links:
            check(path, line, key, value)
    for path in sorted(scripts):
        for number, text in enumerate(read(path).splitlines(), 1):
            for found in SCRIPT_LINK.finditer(text):
                check(path, number, "link", found.group(1))

    dashes = [f"{os.path.relpath(path, site)}:{line}: \"{text}\""
              for path, page in sorted(pages.items()) for line, text in page.dashes()]
    markup = [f"{os.path.relpath(path, site)}:{line}: \"{text}\""
              for path, page in sorted(pages.items()) for line, text in page.stray_markup()]
    for entry in broken:
        print(f"broken link: {entry}")
    for entry in dashes:
        print(f"en dash before a word (an option outside backticks?): {entry}")
    for entry in markup:
        print(f"heading shows markup (a code span in a Markdown heading? write it as words): {entry}")
    if broken or dashes or markup:
        print(f"check_links: {len(broken)} broken of {checked} links, {len(dashes)} en dashes before a "
              f"word, {len(markup)} headings with markup, in {len(pages)} pages of {site}")
        return 1
    print(f"check_links: all {checked} links resolve, in {len(pages)} pages of {site}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
