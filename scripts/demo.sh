#!/usr/bin/env bash
# The Folio demo over samples/: installs what is missing, builds, and walks a
# store through what Folio does today. Safe to rerun; works in a temp folder.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/install-deps.sh
if [ "${FOLIO_BUILD:-release}" = release ]; then
  bash scripts/build-release.sh --product folio >&2
else
  swift build -c "$FOLIO_BUILD" --product folio >&2
fi
folio="$PWD/.build/${FOLIO_BUILD:-release}/folio"
samples="$PWD/samples"
work=$(mktemp -d "${TMPDIR:-/tmp}/folio-demo-XXXXXX")
peers=$(mktemp -d "${TMPDIR:-/tmp}/folio-demo-peers-XXXXXX")
# The demo's queries would start an index daemon per store (see README,
# "Queries"); it would exit once the temp folders go, but leave none at all.
export FOLIO_INDEX_DAEMON=off
trap 'rm -rf "$work" "$peers"' EXIT
step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
run() { printf '$ %s\n' "$*"; "$@"; }

step "1. Create a store and its tables from the command line (a git repo; a table is a folder)"
cd "$work"
run "$folio" init --table notes
run "$folio" tables add todos --path data/todos --order lastUpdate --counter views --set tags
run cat folio.yaml
run cat .gitattributes

step "2. Import the sample documents: JSON files, then CSV (one git commit each, written as a pack)"
for file in "$samples"/todos/*.json; do run "$folio" put todos "$file" >/dev/null; done
run "$folio" import todos "$samples/todos.csv"
run "$folio" tables
run "$folio" query todos --format table
run git log --oneline

step "3. Mutations with transforms (seed 002): counters add, sets union"
run "$folio" apply todos buy-milk --op update --columns '{"done": true}' \
  --transforms '{"views": {"op": "increment", "by": 1}, "tags": {"op": "arrayUnion", "values": ["errand", "home"]}}'
run "$folio" apply todos big-counter --op update --transforms '{"views": {"op": "increment", "by": 1}}'
run "$folio" get todos big-counter

step "4. A person edits a copy in a text editor and puts it back; Folio records the diff as transforms"
"$folio" get todos buy-milk > edit.json
run sed -i -e 's/"views": 4/"views": 10/' -e 's/"errand"/"shop"/' edit.json
run "$folio" put todos buy-milk edit.json
rm edit.json
run "$folio" get todos buy-milk

step "5. Bad input gets a clear error, and nothing changes"
if "$folio" apply todos buy-milk --op update --transforms '{"views": {"op": "increment", "by": 1.5}}'; then
  echo "expected a LOCAL_CONSTRAINT error" >&2; exit 1
fi
oops=$("$folio" get todos oops --path)   # data/todos/<2 hex digits>/<1>/oops.json: the table is nested
mkdir -p "$(dirname "$oops")"
printf '{\n  "id": "oops",\n  "title": "missing comma"\n  "views": 1\n}\n' > "$oops"
if "$folio" fsck; then echo "expected fsck to fail" >&2; exit 1; fi
rm "$oops"
run "$folio" fsck

step "6. The op log: one NDJSON line per mutation, stamped with a hybrid logical clock"
run "$folio" log todos buy-milk

step "7. Remove (recorded, syncs as a delete) and evict (local only)"
run "$folio" rm todos fix-bike
run "$folio" evict todos big-counter
run "$folio" tables

step "8. folio watch: saves from any editor become ops (counters as increments)"
"$folio" watch --json --debounce 100ms > watch.ndjson 2> watch.err &
watcher=$!
for _ in $(seq 1 100); do grep -q ready watch.err watch.ndjson 2>/dev/null && break; sleep 0.1; done
milk=$("$folio" get todos buy-milk --path)
run sed -i -e 's/"views": \([0-9]*\)/"views": 2\1/' "$milk"
for _ in $(seq 1 100); do grep -q '"event":"op"' watch.ndjson 2>/dev/null && break; sleep 0.1; done
kill -INT "$watcher"; wait "$watcher" || true
run cat watch.ndjson
rm -f watch.ndjson watch.err
run "$folio" get todos buy-milk

step "9. Sync between two replicas through a git remote: counters add up, sets union"
git init -q --bare "$peers/remote.git"
run git remote add origin "$peers/remote.git"
run "$folio" sync
run "$folio" clone "$peers/remote.git" "$peers/laptop"
run "$folio" apply todos buy-milk --op update \
  --transforms '{"views": {"op": "increment", "by": 5}, "tags": {"op": "arrayUnion", "values": ["desk"]}}'
(
  cd "$peers/laptop"
  run "$folio" apply todos buy-milk --op update --columns '{"title": "Buy oat milk"}' \
    --transforms '{"views": {"op": "increment", "by": 100}, "tags": {"op": "arrayUnion", "values": ["laptop"]}}'
  # A person edits a file with no watcher running; 'folio commit' turns the
  # diff into ops by column kind (views is a counter: +1000).
  sed -i -e 's/"views": \([0-9]*\)/"views": 1\1/' "$("$folio" get todos buy-milk --path)"
  run "$folio" status
  run "$folio" sync
)
run "$folio" sync
run "$folio" get todos buy-milk
# What the merge brought, by document and JSON path, and the document as it was before.
run "$folio" diff HEAD^1 HEAD
run "$folio" get todos buy-milk --as-of HEAD^1
# Who set each field, by op and replica, through the merge: the counter lists each increment.
run "$folio" blame todos buy-milk views
run "$folio" history todos buy-milk --diff
(cd "$peers/laptop" && run "$folio" sync && run "$folio" get todos buy-milk)
run git log --oneline --graph -n 6
run git status --short

step "10. folio serve: the store over Firebase's REST protocol, with a live stream"
# A table for Firebase programs: the pk stays in the file name, so a client
# reads back exactly what it wrote.
run "$folio" tables add users --key-in-name
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$folio" serve --port "$port" --quiet > serve.out 2>&1 &
server=$!
for _ in $(seq 1 100); do curl -s -o /dev/null "http://127.0.0.1:$port/.json?shallow=true" && break; sleep 0.1; done
run curl -s "http://127.0.0.1:$port/todos.json?orderBy=%22views%22&limitToLast=2&print=pretty"
curl -s -N -H 'Accept: text/event-stream' "http://127.0.0.1:$port/todos/buy-milk/views.json" > stream.out &
stream=$!
sleep 0.5
run curl -s -X PATCH -d '{"buy-milk/views": {".sv": {"increment": 1}}}' "http://127.0.0.1:$port/todos.json"
echo
# Closed by default: a page from another origin cannot write (403, nothing read or written).
run curl -s -X POST -H 'Origin: http://evil.example' -H 'Content-Type: text/plain' -d '{"title": "pwned"}' "http://127.0.0.1:$port/todos.json"
echo
run curl -s -X PUT -d '{"id": 7, "name": "Ann"}' "http://127.0.0.1:$port/users/ann.json"
echo
run cat "$("$folio" get users ann --path)"
# Folio's own: how many documents a where filter matches (the page at / uses it).
run curl -s "http://127.0.0.1:$port/.info/count/todos.json?where=views%20%3E%200"
echo
sleep 0.5
kill "$stream" 2>/dev/null || true
kill -TERM "$server"; wait "$server" || true
echo "\$ the stream saw (the value, then the increment):"
cat stream.out
rm -f stream.out serve.out

step "11. Export in order: NDJSON for jq, CSV, and a SQLite table"
run "$folio" export todos --format ndjson
run "$folio" export todos --format csv -o "$peers/todos.csv"
run cat "$peers/todos.csv"
run "$folio" export todos -o "$peers/todos.db" --sqlite-table todos
echo "\$ sqlite3 todos.db 'SELECT id, views FROM todos ORDER BY views DESC'"
python3 -c "import sqlite3,sys; [print(*r, sep='|') for r in sqlite3.connect(sys.argv[1]).execute('SELECT id, views FROM todos ORDER BY views DESC')]" "$peers/todos.db" 2>/dev/null \
  || echo "(python3 not found; the database is at $peers/todos.db)"

step "12. Concurrent assignments: folio conflicts shows the value a merge overwrote, and settles it"
run "$folio" apply todos buy-milk --op update --columns '{"title": "Buy milk today"}'
run "$folio" sync
(
  cd "$peers/laptop"
  # Written before the laptop saw the title above: the later stamp wins.
  run "$folio" apply todos buy-milk --op update --columns '{"title": "Buy milk tomorrow"}'
  run "$folio" sync
)
run "$folio" sync
run "$folio" conflicts
run "$folio" status
run "$folio" conflicts resolve todos buy-milk title --take-other
run "$folio" sync
(cd "$peers/laptop" && run "$folio" sync && run "$folio" conflicts && run "$folio" get todos buy-milk)

step "13. A JSON Schema per table: proposed from the documents, enforced before anything is written"
mkdir -p schemas
printf '$ %s\n' "folio schema todos --infer > schemas/todos.schema.json"
"$folio" schema todos --infer > schemas/todos.schema.json
run sed -i 's|^  todos:$|  todos:\n    schema: schemas/todos.schema.json|' folio.yaml
run cat folio.yaml
printf '$ %s\n' "echo '{\"title\": \"Call Bob\", \"views\": \"ten\"}' | folio put todos call-bob -"
if echo '{"title": "Call Bob", "views": "ten"}' | "$folio" put todos call-bob -; then
  echo "expected a SCHEMA_VIOLATION error" >&2; exit 1
fi
run "$folio" init --editor vscode
run cat .vscode/settings.json

echo
echo "Demo complete: import, edits, watch, sync with merged counters, history, export."
