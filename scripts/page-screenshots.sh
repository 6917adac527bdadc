#!/usr/bin/env bash
# Takes the screenshots of the page in docs/images/: a store made from
# samples/todos.csv, served by the release build, photographed by Debian's
# Chromium through Playwright (in the virtual environment install-deps.sh
# makes). Run after scripts/build-release.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
folio="$PWD/.build/release/folio"
python="${FOLIO_VENV:-/opt/folio-venv}/bin/python"
out="$PWD/docs/images"
store=$(mktemp -d "${TMPDIR:-/tmp}/folio-shots-XXXXXX")
trap 'kill "$server" 2>/dev/null || true; rm -rf "$store"' EXIT
mkdir -p "$out"
cd "$store"
cat >folio.yaml <<'YAML'
version: 1
tables:
  todos:
    path: data/todos
    order: [lastUpdate]
    columns:
      views: counter
YAML
"$folio" init >/dev/null
"$folio" import todos "$OLDPWD/samples/todos.csv" >/dev/null 2>&1
"$folio" apply todos call-mom --op update --transforms '{"views": {"op": "increment", "by": 3}}' >/dev/null
"$folio" commit -m "Three more calls" >/dev/null
port=$((20000 + RANDOM % 10000))
"$folio" serve --port "$port" 2>/dev/null &
server=$!
until curl -sf "http://127.0.0.1:$port/.info/tables.json" >/dev/null; do sleep 0.1; done
"$python" - "http://127.0.0.1:$port" "$out" <<'PY'
import sys
from playwright.sync_api import sync_playwright, expect
base, out = sys.argv[1:3]
with sync_playwright() as p:
    browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=["--no-sandbox"])
    page = browser.new_page(viewport={"width": 1280, "height": 640}, color_scheme="light")
    page.goto(base + "/?t=todos&o=views&d=desc")
    expect(page.locator("#rows tr").first).to_be_visible()
    page.screenshot(path=out + "/page-grid.png")
    page.goto(base + "/?t=todos&w=views%20%3E")
    expect(page.locator("#where-error")).to_be_visible()
    page.screenshot(path=out + "/page-where-error.png")
    page.goto(base + "/?t=todos&k=call-mom&v=blame")
    expect(page.locator('#blame tr[data-path="/views"]')).to_be_visible()
    page.screenshot(path=out + "/page-blame.png", full_page=True)
    browser.close()
PY
echo "screenshots in $out"
