# Doxygen's input filter for the Markdown pages (docs/CMakeLists.txt). The pages are written for a
# reader of the repository; this turns what only works there into what works on the site, and
# works around what Doxygen 1.9 reads differently. The files are not changed, and every line
# keeps its number (so Doxygen's messages point at the right line).
#
#   awk -v root=<source dir> -v side_by_side=0|1 -f md_filter.awk <page.md>
#
# - A link to a source file the site documents (`[main.cpp](main.cpp)`,
#   `[the flow](../common/matmul_flow.cu#L67)`) becomes `@ref` to that file's page: a relative path
#   means nothing in the site's one html/ directory. The line anchor is dropped.
# - A link to a file of the repository the site does not hold (a script, a CMakeLists.txt, a
#   directory) keeps its text and loses its target.
# - An image of docs/images (`![chart](../docs/images/x.png)`) is named by its file name alone:
#   Doxygen finds it in its IMAGE_PATH and copies it next to the pages.
# - A link to a heading of another page (`other.md#heading`) goes to that page: the site names its
#   headings differently.
# - Doxygen shows the text of a link to a page or file as it is, so `[*text*](x.md)` would show its
#   asterisks: emphasis and code around the whole text move outside the link.
# - Doxygen 1.9 reads a `code span` with a quote in it ('^[<>]') as a quotation: such a span gets
#   double backticks, which it reads as code.
# - With side_by_side=1, the marker of a chapter's generated diff (`<!-- stage-diff: A B -->`, see
#   scripts/stage_diffs.sh) becomes a link to the coloured side-by-side view of the same two files,
#   which scripts/side_by_side_diffs.py writes next to the site's pages.
# Fenced code blocks are copied unchanged.

# The page of the side-by-side view of stage files a and b: "side_by_side_<dir a>_to_<dir b>.html".
function side_by_side_page(a, b) {
  sub(/\/[^\/]*$/, "", a)
  sub(/\/[^\/]*$/, "", b)
  return "side_by_side_" a "_to_" b ".html"
}

# dir + "/" + rel with "." and ".." resolved; dir is absolute.
function resolve(dir, rel,    parts, n, i, out, depth, kept) {
  n = split(dir "/" rel, parts, "/")
  depth = 0
  for (i = 1; i <= n; i++) {
    if (parts[i] == "" || parts[i] == ".") continue
    if (parts[i] == "..") { if (depth > 0) depth--; continue }
    kept[++depth] = parts[i]
  }
  out = ""
  for (i = 1; i <= depth; i++) out = out "/" kept[i]
  return out
}

function exists(path) {
  gsub(/'/, "'\\''", path)
  return system("test -e '" path "'") == 0
}

# The site's form of a link target; "" for a link that must lose its target.
function site_target(target,    path, hash, full, rel) {
  if (target ~ /^[A-Za-z][A-Za-z0-9+.-]*:/ || target ~ /^#/ || target ~ /^[@\\]ref/) return target
  hash = index(target, "#")
  path = hash ? substr(target, 1, hash - 1) : target
  if (path ~ /\.(png|jpg|jpeg|gif|svg)$/) return target
  if (path ~ /\.md$/) return path
  full = resolve(page_dir, path)
  if (substr(full, 1, length(root) + 1) != root "/") return target
  rel = substr(full, length(root) + 2)
  if (rel ~ /^(common|[0-9][0-9]_[^\/]+)\/[^\/]+\.(cu|cuh|cpp|hpp)$/ && exists(full)) return "@ref " rel
  if (exists(full)) return ""
  return target
}

# Where the code spans of s are: fills span_from[k], span_to[k] (k = 1..count, positions of the
# first and last backtick) and returns s with every character of a span replaced by \001.
function find_spans(s,    masked, i, n, run, j, k, m, found) {
  span_count = 0
  masked = ""
  i = 1
  n = length(s)
  while (i <= n) {
    if (substr(s, i, 1) != "`") { masked = masked substr(s, i, 1); i++; continue }
    for (run = 0; substr(s, i + run, 1) == "`"; run++) {}
    # the closing run: the next run of exactly as many backticks
    found = 0
    for (j = i + run; j <= n; j++) {
      if (substr(s, j, 1) != "`") continue
      for (m = 0; substr(s, j + m, 1) == "`"; m++) {}
      if (m == run) { found = j + m - 1; break }
      j += m - 1
    }
    if (!found) {
      masked = masked substr(s, i, run)
      i += run
      continue
    }
    span_from[++span_count] = i
    span_to[span_count] = found
    for (k = i; k <= found; k++) masked = masked "\001"
    i = found + 1
  }
  return masked
}

# s with each single-backtick code span that holds a quote written with double backticks.
function quote_safe_spans(s,    out, at, k, inner) {
  find_spans(s)
  out = ""
  at = 1
  for (k = 1; k <= span_count; k++) {
    inner = substr(s, span_from[k], span_to[k] - span_from[k] + 1)
    if (inner ~ /^`[^`]*'[^`]*`$/) inner = "`" inner "`"
    out = out substr(s, at, span_from[k] - at) inner
    at = span_to[k] + 1
  }
  return out substr(s, at)
}

# One link in the site's form: text and target as the page has them.
function site_link(text, target, image,    new_target, before, after, full) {
  if (image) {
    # An image of docs/images is in Doxygen's IMAGE_PATH: the site finds it by its name alone.
    full = resolve(page_dir, target)
    if (index(full, root "/docs/images/") == 1) sub(/^.*\//, "", target)
    return "[" text "](" target ")"
  }
  new_target = site_target(target)
  if (new_target == "") return text
  before = after = ""
  if (new_target ~ /^@ref / || new_target ~ /\.md$/) {
    if (text ~ /^\*\*.+\*\*$/ || text ~ /^__.+__$/) {
      before = "**"; after = "**"; text = substr(text, 3, length(text) - 4)
    } else if (text ~ /^\*[^*].*\*$/ || text ~ /^_[^_].*_$/) {
      before = "*"; after = "*"; text = substr(text, 2, length(text) - 2)
    } else if (text ~ /^`[^`]+`$/) {
      before = "<code>"; after = "</code>"; text = substr(text, 2, length(text) - 2)
    }
  }
  return before "[" text "](" new_target ")" after
}

function site_line(s,    masked, out, at, offset, rest, start, len, link, close_text, text, target) {
  masked = find_spans(s)
  out = ""
  at = 1
  rest = masked
  offset = 0
  # a link: [text](target), its brackets outside code spans, no brackets nested in its text
  while (match(rest, /\[[^][]*\]\([^() \t]+\)/)) {
    start = offset + RSTART
    len = RLENGTH
    link = substr(s, start, len)
    close_text = index(link, "](")
    text = substr(link, 2, close_text - 2)
    target = substr(link, close_text + 2, len - close_text - 2)
    out = out quote_safe_spans(substr(s, at, start - at))
    out = out site_link(text, target, start > 1 && substr(s, start - 1, 1) == "!")
    at = start + len
    offset = at - 1
    rest = substr(masked, at)
  }
  return out quote_safe_spans(substr(s, at))
}

BEGIN {
  sub(/\/+$/, "", root)
  fence = ""
}

FNR == 1 {
  page_dir = FILENAME
  if (page_dir !~ /^\//) page_dir = ENVIRON["PWD"] "/" page_dir
  sub(/\/[^\/]*$/, "", page_dir)
}

# Fenced code blocks: unchanged, up to a fence of the same kind.
fence != "" {
  if ($0 ~ ("^[ \t]*" fence)) fence = ""
  print
  next
}
/^[ \t]*(```|~~~)/ {
  fence = substr($0, match($0, /(```|~~~)/), 3)
  print
  next
}

/^<!-- stage-diff: [^ ]+ [^ ]+ -->$/ {
  if (side_by_side) {
    printf "<div class=\"cs-side-by-side\">Side by side, in colour: <a href=\"%s\">%s &rarr; %s</a></div>\n",
           side_by_side_page($3, $4), $3, $4
  } else {
    print
  }
  next
}

{ print site_line($0) }
