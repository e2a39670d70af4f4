# Reads one stage's --json object (the flat format common/report.cpp writes) and
#  - appends one CSV row per variant to the file named by -v csv,
#  - prints the stage's headline row for the tour table:
#    stage|changed|variant|size|ms|rate|unit|pct_yardstick|pct_peak|result
function field(text, key,    m) {
  if (match(text, "\"" key "\":(\"[^\"]*\"|[^,}]*)")) {
    m = substr(text, RSTART + length(key) + 3, RLENGTH - length(key) - 3)
    gsub(/^"|"$/, "", m)
    return m == "null" ? "-" : m
  }
  return "-"
}
function short(v) { return v == "-" ? v : sprintf("%.4g", v) }
function pct(v) { return v == "-" ? v : sprintf("%.1f", v) }
{
  head = $0
  sub(/,"variants":.*/, "", head)
  size = field(head, "sizes"); unit = field(head, "unit"); yard = field(head, "yardstick")
  headline = field(head, "headline"); result = field(head, "result")
  rest = $0
  sub(/.*"variants":\[/, "", rest)
  n = split(rest, parts, /\},\{/)
  for (i = 1; i <= n; i++) {
    v = parts[i]
    name = field(v, "name")
    what = field(v, "what"); gsub(/,/, ";", what)
    printf "%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s\n", stage, name, what, size, field(v, "median_ms"),
           field(v, "rate"), unit, field(v, "pct_peak"), field(v, "pct_yardstick"), yard,
           field(v, "check") >> csv
    if (name == headline)
      row = sprintf("%s|%s|%s|%s|%s|%s|%s|%s|%s|%s", stage, changed, name, size,
                    short(field(v, "median_ms")), short(field(v, "rate")), unit,
                    pct(field(v, "pct_yardstick")), pct(field(v, "pct_peak")), result)
  }
  print row
}
