# Prints the variants of one stage's --json line as a markdown table (for the chapters'
# "Measured" sections): awk -f scripts/json_table.awk <log>   (reads the line starting '{"stage"')
function field(text, key,    m) {
  if (match(text, "\"" key "\":(\"[^\"]*\"|[^,}]*)")) {
    m = substr(text, RSTART + length(key) + 3, RLENGTH - length(key) - 3)
    gsub(/^"|"$/, "", m)
    return m
  }
  return "null"
}
function num(v, format) { return v == "null" ? "-" : sprintf(format, v) }
/^\{"stage"/ {
  head = $0
  sub(/,"variants":.*/, "", head)
  unit = field(head, "unit"); yard = field(head, "yardstick")
  printf "| variant | what | median ms (min–max) | %s | %% of peak | %% of %s | check |\n", unit, yard
  print "|---|---|---:|---:|---:|---:|---|"
  rest = $0
  sub(/.*"variants":\[/, "", rest)
  n = split(rest, parts, /\},\{/)
  for (i = 1; i <= n; i++) {
    v = parts[i]
    printf "| `%s` | %s | %s (%s–%s) | %s | %s | %s | %s |\n", field(v, "name"), field(v, "what"),
           num(field(v, "median_ms"), "%.4g"), num(field(v, "min_ms"), "%.4g"), num(field(v, "max_ms"), "%.4g"),
           num(field(v, "rate"), "%.0f"), num(field(v, "pct_peak"), "%.1f"), num(field(v, "pct_yardstick"), "%.1f"),
           field(v, "check")
  }
}
