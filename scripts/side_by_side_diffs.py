#!/usr/bin/env python3
"""Writes the side-by-side, coloured view of each step of the matrix-product track into the
Doxygen site. The docs target runs it after Doxygen when python3 is installed (docs/CMakeLists.txt).

    side_by_side_diffs.py <source dir> <html dir> [<doxygen tag file>]

A chapter marks the unified diff it embeds with `<!-- stage-diff: A B -->` (scripts/stage_diffs.sh);
for each marker this writes html/side_by_side_<dir of A>_to_<dir of B>.html, the page the chapter
links to on the site (docs/md_filter.awk writes that link). The page shows A and B side by side
(and the two stages' CMakeLists.txt where they differ): the changes with a few lines around them,
or the whole files at a click. Only the standard library is used.
"""
import difflib
import html
import os
import re
import sys
import xml.etree.ElementTree as ElementTree

MARKER = re.compile(r"^<!-- stage-diff: (\S+) (\S+) -->$")
CONTEXT = 5  # unchanged lines shown around each change
MIN_FOLD = 4  # fewer unchanged lines than this between two changes are shown, not folded
PAIR_CUTOFF = 0.6  # lines of a changed block this similar are shown as one changed line


def page_name(file_a, file_b):
    """Must match side_by_side_page() in docs/md_filter.awk."""
    return f"side_by_side_{os.path.dirname(file_a)}_to_{os.path.dirname(file_b)}.html"


def chapter_page(chapter):
    """Doxygen's page for a Markdown file: md_ and its path, '/' as '_', no extension."""
    return "md_" + os.path.splitext(chapter)[0].replace("/", "_") + ".html"


def chapter_title(path):
    with open(path, encoding="utf-8") as f:
        first = f.readline().strip()
    return re.sub(r"\s*\{#[^}]*\}$", "", first.lstrip("#").strip())


def file_pages(tagfile, root):
    """Source path relative to root -> its documentation page in the site (Doxygen's tag file)."""
    pages = {}
    if not tagfile or not os.path.exists(tagfile):
        return pages
    for compound in ElementTree.parse(tagfile).getroot().iter("compound"):
        if compound.get("kind") != "file":
            continue
        name, path, filename = (compound.findtext(t, "") for t in ("name", "path", "filename"))
        if not filename:
            continue
        if not filename.endswith(".html"):
            filename += ".html"
        rel = os.path.relpath(os.path.join(path, name), root)
        pages[rel] = filename
    return pages


# --- the diff ----------------------------------------------------------------------------------


def pair_lines(old, new, olo, ohi, nlo, nhi):
    """Rows for a changed block old[olo:ohi] -> new[nlo:nhi]: (old index or None, new index or
    None, similar). The most similar pair of lines is aligned first and the rest on either side of
    it recursively, as difflib's Differ does; what stays unpaired is shown row by row."""
    best, best_i, best_j = PAIR_CUTOFF, None, None
    matcher = difflib.SequenceMatcher(None, autojunk=False)
    for j in range(nlo, nhi):
        matcher.set_seq2(new[j])
        for i in range(olo, ohi):
            matcher.set_seq1(old[i])
            if (matcher.real_quick_ratio() > best and matcher.quick_ratio() > best
                    and matcher.ratio() > best):
                best, best_i, best_j = matcher.ratio(), i, j
    if best_i is None:
        rows = []
        for k in range(max(ohi - olo, nhi - nlo)):
            i = olo + k if olo + k < ohi else None
            j = nlo + k if nlo + k < nhi else None
            rows.append((i, j, False))
        return rows
    return (pair_lines(old, new, olo, best_i, nlo, best_j) + [(best_i, best_j, True)] +
            pair_lines(old, new, best_i + 1, ohi, best_j + 1, nhi))


def marked(text, spans, css):
    """text as HTML, the character ranges in spans wrapped in <span class=css>."""
    out, at = [], 0
    for start, end in spans:
        if not text[start:end].strip():
            continue  # a change of spacing alone: the line's colour says enough
        out.append(html.escape(text[at:start]))
        out.append(f'<span class="{css}">{html.escape(text[start:end])}</span>')
        at = end
    out.append(html.escape(text[at:]))
    return "".join(out)


TOKEN = re.compile(r"\w+|\s+|[^\w\s]")


def intraline(a, b):
    """The two lines as HTML with the words (and signs) that differ marked."""
    tokens_a, tokens_b = TOKEN.findall(a), TOKEN.findall(b)
    starts_a = [0]
    for token in tokens_a:
        starts_a.append(starts_a[-1] + len(token))
    starts_b = [0]
    for token in tokens_b:
        starts_b.append(starts_b[-1] + len(token))
    ops = difflib.SequenceMatcher(None, tokens_a, tokens_b, autojunk=False).get_opcodes()
    gone = [(starts_a[i1], starts_a[i2]) for tag, i1, i2, _, _ in ops
            if tag in ("replace", "delete") and i2 > i1]
    came = [(starts_b[j1], starts_b[j2]) for tag, _, _, j1, j2 in ops
            if tag in ("replace", "insert") and j2 > j1]
    return marked(a, gone, "x"), marked(b, came, "x")


def cell(number, text, kind):
    if number is None:
        return '<td class="ln empty"></td><td class="code empty"></td>'
    return f'<td class="ln {kind}" data-ln="{number}"></td><td class="code {kind}">{text}</td>'


def rows_of(old, new):
    """The table rows of old -> new, and the numbers of lines removed and added."""
    rows, removed, added = [], 0, 0
    opcodes = difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes()
    for index, (tag, i1, i2, j1, j2) in enumerate(opcodes):
        if tag == "equal":
            # near a change (or the file's ends when nothing changed): always shown; further
            # away: folded until the reader asks for the whole files
            count = i2 - i1
            head = 0 if index == 0 else CONTEXT
            tail = 0 if index == len(opcodes) - 1 else CONTEXT
            if len(opcodes) == 1 or count - head - tail < MIN_FOLD:
                head = count
            for k in range(count):
                far = head <= k < count - tail
                if far and k == head:
                    hidden = count - head - tail
                    rows.append(f'<tr class="fold"><td colspan="4">&#8943; {hidden} unchanged '
                                f'line{"s" if hidden != 1 else ""} &#8943;</td></tr>')
                text = html.escape(old[i1 + k])
                rows.append(f'<tr class="{"far" if far else "same"}">{cell(i1 + k + 1, text, "same")}'
                            f'{cell(j1 + k + 1, html.escape(new[j1 + k]), "same")}</tr>')
            continue
        removed += i2 - i1
        added += j2 - j1
        for i, j, similar in pair_lines(old, new, i1, i2, j1, j2):
            if similar:
                left, right = intraline(old[i], new[j])
            else:
                left = html.escape(old[i]) if i is not None else ""
                right = html.escape(new[j]) if j is not None else ""
            rows.append('<tr class="change">'
                        f'{cell(None if i is None else i + 1, left, "del")}'
                        f'{cell(None if j is None else j + 1, right, "add")}</tr>')
    return rows, removed, added


def read_lines(path):
    with open(path, encoding="utf-8") as f:
        return [line.rstrip("\n").expandtabs(4) for line in f]


# --- the page ----------------------------------------------------------------------------------

STYLE = """
:root {
  --bg: #ffffff; --fg: #1f2328; --muted: #59636e; --line: #d1d9e0; --bar: #f6f8fa;
  --link: #0969da; --accent: #1f6feb;
  --del-bg: #ffebe9; --del-ln: #ffd7d5; --del-x: #ff818266;
  --add-bg: #dafbe1; --add-ln: #aceebb; --add-x: #4ac26b66;
  --empty: #f6f8fa; --fold: #ddf4ff; --fold-fg: #0550ae;
}
@media (prefers-color-scheme: dark) {
  :root {
    --bg: #0d1117; --fg: #e6edf3; --muted: #9198a1; --line: #3d444d; --bar: #151b23;
    --link: #4493f8; --accent: #4493f8;
    --del-bg: #f8514926; --del-ln: #f851494d; --del-x: #f8514966;
    --add-bg: #2ea04326; --add-ln: #3fb9504d; --add-x: #2ea04366;
    --empty: #151b23; --fold: #121d2f; --fold-fg: #9ecbff;
  }
}
* { box-sizing: border-box; }
body { margin: 0; background: var(--bg); color: var(--fg);
  font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Noto Sans", "DejaVu Sans", sans-serif; }
a { color: var(--link); text-decoration: none; }
a:hover { text-decoration: underline; }
.bar { display: flex; flex-wrap: wrap; gap: .4em 1.2em; align-items: baseline; padding: .7em 1.5em;
  background: var(--bar); border-bottom: 1px solid var(--line); }
.bar .project { font-weight: 600; font-size: 1.1em; color: var(--fg); }
.bar .crumbs { color: var(--muted); }
main { padding: 1.2em 1.5em 3em; }
h1 { font-size: 1.6em; margin: 0 0 .2em; font-weight: 600; }
h1 .arrow { color: var(--muted); font-weight: 400; }
.lead { margin: 0 0 1em; color: var(--muted); max-width: 75em; }
.steps { display: flex; flex-wrap: wrap; gap: .6em; margin: 0 0 1.2em; }
.steps a, .steps span, .steps label { border: 1px solid var(--line); border-radius: 6px; padding: .25em .8em;
  background: var(--bar); color: var(--fg); font-size: .92em; }
.steps span { color: var(--muted); }
.steps a:hover { border-color: var(--accent); text-decoration: none; }
.steps label { cursor: pointer; user-select: none; }
.steps label::before { content: ""; display: inline-block; width: .85em; height: .85em; margin-right: .45em;
  vertical-align: -.08em; border: 1.5px solid var(--muted); border-radius: 3px; }
#whole:checked ~ .steps label::before { background: var(--accent); border-color: var(--accent);
  box-shadow: inset 0 0 0 2px var(--bar); }
#whole { position: absolute; opacity: 0; }
#whole:focus-visible ~ .steps label { outline: 2px solid var(--accent); }
#whole:checked ~ .steps label { border-color: var(--accent); color: var(--accent); }
.legend { display: inline-flex; gap: 1em; align-items: center; color: var(--muted); font-size: .9em; }
.swatch.both { background: linear-gradient(90deg, var(--del-x) 50%, var(--add-x) 50%); }
.swatch { display: inline-block; width: 1.1em; height: .9em; vertical-align: -1px; border-radius: 2px;
  margin-right: .3em; border: 1px solid var(--line); }
section { margin: 0 0 2em; border: 1px solid var(--line); border-radius: 6px; overflow: hidden; }
section h2 { font-size: 1em; margin: 0; padding: .5em .9em; background: var(--bar);
  border-bottom: 1px solid var(--line); font-weight: 600; display: flex; flex-wrap: wrap; gap: .2em 1em; }
section h2 .count { font-weight: 400; color: var(--muted); }
section h2 .count .minus { color: #cf222e; } section h2 .count .plus { color: #1a7f37; }
table.diff { width: 100%; border-collapse: collapse; table-layout: fixed;
  font: 12.5px/1.5 ui-monospace, SFMono-Regular, "SF Mono", Menlo, Consolas, "DejaVu Sans Mono",
        "Liberation Mono", monospace; }
table.diff col.ln { width: 4.2em; }
table.diff thead th { position: sticky; top: 0; z-index: 1; background: var(--bar); text-align: left;
  font-weight: 600; padding: .35em .8em; border-bottom: 1px solid var(--line); font-family: inherit; }
table.diff thead th + th { border-left: 1px solid var(--line); }
td { padding: 0 .6em; vertical-align: top; }
td.code { white-space: pre-wrap; overflow-wrap: anywhere; tab-size: 4; }
td.ln { text-align: right; color: var(--muted); user-select: none; padding-right: .7em; }
td.ln::before { content: attr(data-ln); }
td.ln + td.code { border-right: 1px solid var(--line); }
tr > td:last-child { border-right: 0; }
td.del { background: var(--del-bg); } td.ln.del { background: var(--del-ln); }
td.add { background: var(--add-bg); } td.ln.add { background: var(--add-ln); }
td.del .x { background: var(--del-x); border-radius: 2px; }
td.add .x { background: var(--add-x); border-radius: 2px; }
td.empty { background: var(--empty); }
tr.far { display: none; }
tr.fold td { background: var(--fold); color: var(--fold-fg); text-align: center; padding: .15em;
  font-family: system-ui, sans-serif; font-size: .88em; }
#whole:checked ~ section tr.far { display: table-row; }
#whole:checked ~ section tr.fold { display: none; }
footer { color: var(--muted); font-size: .85em; padding: 0 1.5em 2em; }
"""


def link(href, text):
    return f'<a href="{html.escape(href)}">{html.escape(text)}</a>' if href else html.escape(text)


def render_page(step, steps, index, pages, root, html_dir):
    chapter, file_a, file_b, files = step
    dir_a, dir_b = os.path.dirname(file_a), os.path.dirname(file_b)
    chapter_href = chapter_page(chapter)
    if not os.path.exists(os.path.join(html_dir, chapter_href)):
        die(1, f"the site has no page {chapter_href} for {chapter}")

    sections, total_removed, total_added = [], 0, 0
    for old_path, new_path in files:
        rows, removed, added = rows_of(read_lines(os.path.join(root, old_path)),
                                       read_lines(os.path.join(root, new_path)))
        total_removed += removed
        total_added += added

        def heading(path):
            doc = pages.get(path)
            source = doc and doc[: -len(".html")] + "_source.html"
            if source and os.path.exists(os.path.join(html_dir, source)):
                return link(source, path)
            return link(doc, path)

        sections.append(
            f'<section><h2><span>{html.escape(old_path)} &rarr; {html.escape(new_path)}</span>'
            f'<span class="count"><span class="minus">&minus;{removed}</span> '
            f'<span class="plus">+{added}</span> lines</span></h2>\n'
            '<table class="diff"><colgroup><col class="ln"><col><col class="ln"><col></colgroup>\n'
            f'<thead><tr><th colspan="2">{heading(old_path)}</th>'
            f'<th colspan="2">{heading(new_path)}</th></tr></thead>\n<tbody>\n'
            + "\n".join(rows) + "\n</tbody></table></section>")

    previous = steps[index - 1] if index > 0 else None
    following = steps[index + 1] if index + 1 < len(steps) else None

    def step_link(other, label):
        if other is None:
            return ""
        a, b = os.path.dirname(other[1]), os.path.dirname(other[2])
        return link(page_name(other[1], other[2]), label.format(f"{a[:2]} \u2192 {b[:2]}"))

    title = f"{dir_a} \u2192 {dir_b}"
    chapter_link = link(chapter_href, chapter_title(os.path.join(root, chapter)))
    nav = [step_link(previous, "\u2039 Previous step, {}"),
           link(chapter_href, f"Chapter {chapter_title(os.path.join(root, chapter))}"),
           step_link(following, "Next step, {} \u203a"),
           '<label for="whole">Show the whole files</label>']
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>cuda-stages: {html.escape(title)}, side by side</title>
<style>{STYLE}</style>
</head>
<body>
<div class="bar"><a class="project" href="index.html">cuda-stages</a>
<span class="crumbs">{chapter_link} &rsaquo; side by side</span></div>
<main>
<input type="checkbox" id="whole">
<h1>{html.escape(dir_a)} <span class="arrow">&rarr;</span> {html.escape(dir_b)}</h1>
<p class="lead">What one step of the matrix-product track changes: {html.escape(file_a)} on the left,
{html.escape(file_b)} on the right, {total_removed} lines removed and {total_added} added in all.
Unchanged stretches are folded to {CONTEXT} lines around each change. The same diff, unified, is in the
chapter, generated like this page from the sources.</p>
<div class="steps">{" ".join(n for n in nav if n)}
<span class="legend"><span><span class="swatch" style="background:var(--del-ln)"></span>removed</span>
<span><span class="swatch" style="background:var(--add-ln)"></span>added</span>
<span><span class="swatch both"></span>changed within a line</span></span></div>
{"".join(sections)}
</main>
<footer>Generated from the sources at docs build time by scripts/side_by_side_diffs.py.</footer>
</body>
</html>
"""


def die(status, message):
    print(f"error: {message}", file=sys.stderr)
    sys.exit(status)


def main(argv):
    if len(argv) not in (3, 4):
        die(2, "usage: side_by_side_diffs.py <source dir> <html dir> [<doxygen tag file>]")
    root, html_dir = os.path.abspath(argv[1]), argv[2]
    tagfile = argv[3] if len(argv) == 4 else None
    if not os.path.isdir(html_dir):
        die(2, f"no site in {html_dir} (build the docs first)")
    pages = file_pages(tagfile, root)

    steps = []
    for chapter in sorted(os.listdir(root)):
        readme = os.path.join(chapter, "README.md")
        if not re.match(r"^[0-9][0-9]_", chapter) or not os.path.isfile(os.path.join(root, readme)):
            continue
        with open(os.path.join(root, readme), encoding="utf-8") as f:
            for line in f:
                found = MARKER.match(line.rstrip("\n"))
                if not found:
                    continue
                file_a, file_b = found.groups()
                files = [(file_a, file_b)]
                cmake_a = os.path.join(os.path.dirname(file_a), "CMakeLists.txt")
                cmake_b = os.path.join(os.path.dirname(file_b), "CMakeLists.txt")
                paths = [os.path.join(root, cmake_a), os.path.join(root, cmake_b)]
                if all(map(os.path.isfile, paths)) and read_lines(paths[0]) != read_lines(paths[1]):
                    files.append((cmake_a, cmake_b))
                steps.append((readme, file_a, file_b, files))

    written = set()
    for index, step in enumerate(steps):
        name = page_name(step[1], step[2])
        with open(os.path.join(html_dir, name), "w", encoding="utf-8") as f:
            f.write(render_page(step, steps, index, pages, root, html_dir))
        written.add(name)
    # pages of steps that no chapter marks any more
    for name in os.listdir(html_dir):
        if name.startswith("side_by_side_") and name.endswith(".html") and name not in written:
            os.remove(os.path.join(html_dir, name))
    print(f"side-by-side diffs: {len(written)} pages in {html_dir}")


if __name__ == "__main__":
    main(sys.argv)
