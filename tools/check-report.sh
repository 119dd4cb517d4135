#!/usr/bin/env bash
# Load a podsim HTML report in headless Chromium and check it: no console message at all (an
# error, a warning, a log line: the report's own script logs nothing), and every plot drawn
# with a size (the report's script counts them into data-plots-drawn on <body>; it must equal
# data-plots, which the report wrote, and be at least one).
#
#   tools/check-report.sh report.html
#
# Exit 0: the report loads clean. Exit 1: it does not (the reason is printed). Exit 2: no
# Chromium (install Debian's `chromium` package).
set -u
html=${1:?usage: tools/check-report.sh REPORT.html}
browser=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
if [ -z "$browser" ]; then
  echo "check-report: no Chromium found (apt-get install chromium)" >&2
  exit 2
fi
abs=$(cd "$(dirname "$html")" && pwd)/$(basename "$html")
log=$(mktemp)
dom=$(timeout 120 "$browser" --headless --no-sandbox --disable-gpu --no-first-run \
  --enable-logging=stderr --v=0 --virtual-time-budget=10000 --dump-dom "file://$abs" 2>"$log")
status=$?
if [ $status -ne 0 ]; then
  echo "check-report: $browser exited with $status" >&2
  tail -5 "$log" >&2
  rm -f "$log"
  exit 1
fi
console=$(grep ':CONSOLE' "$log" || true)
rm -f "$log"
if [ -n "$console" ]; then
  echo "check-report: $html: the console was not silent:" >&2
  echo "$console" >&2
  exit 1
fi
body=$(printf '%s' "$dom" | grep -o '<body[^>]*>' | head -1)
plots=$(printf '%s' "$body" | sed -n 's/.*data-plots="\([0-9]*\)".*/\1/p')
drawn=$(printf '%s' "$body" | sed -n 's/.*data-plots-drawn="\([0-9]*\)".*/\1/p')
if [ -z "$plots" ] || [ -z "$drawn" ]; then
  echo "check-report: $html: the page's script did not run (body: $body)" >&2
  exit 1
fi
if [ "$plots" -lt 1 ] || [ "$drawn" != "$plots" ]; then
  echo "check-report: $html: $drawn of $plots plots drawn" >&2
  exit 1
fi
echo "check-report: $html loads in $(basename "$browser") with no console message; $drawn of $plots plots drawn"
