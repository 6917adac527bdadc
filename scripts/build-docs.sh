#!/usr/bin/env bash
# Builds the library's documentation with the toolchain's DocC:
# .build/docs/Folio.doccarchive. Fails on any DocC warning (a link that
# does not resolve, a topic that names no symbol) and when a public member
# of Store is missing from its `## Topics`.
#
#   bash scripts/build-docs.sh            # build and check
#   bash scripts/build-docs.sh --preview  # and serve it on 127.0.0.1:8080
set -euo pipefail
cd "$(dirname "$0")/.."
command -v swift >/dev/null || export PATH=/opt/swift/usr/bin:$PATH

targets=(Folio FolioSystem FolioJSON FolioCore FolioQuery FolioGit FolioWatch FolioTransfer FolioServe FolioIndexDaemon)
out=.build/docs
rm -rf "$out"
mkdir -p "$out"
swift package dump-symbol-graph --minimum-access-level public >"$out/dump.log" 2>&1 || {
  cat "$out/dump.log"
  exit 1
}
python3 scripts/merge-symbol-graphs.py "$(swift build --show-bin-path)/../symbolgraph" "$out/symbol-graphs" "${targets[@]}"

# The catalog, with two articles drawn from the files they would drift from:
# the README's library section and docs/architecture.md.
cp -R Sources/Folio/Folio.docc "$out/Folio.docc"
python3 - "$out/Folio.docc" <<'PY'
import re, sys
catalog = sys.argv[1]
readme = open("README.md").read()
section = re.search(r"^## The library\n(.*?)^## ", readme, re.S | re.M).group(1)
section = section.replace("(`scripts/test.sh` does exactly that), and its functions also run in\n`Tests/FolioTests/ReadmeExampleTests.swift`", "(the tests do exactly that)")
open(catalog + "/TheLibrary.md", "w").write("# Using the library\n\nA tour of the API, from the README.\n\n## Overview\n" + section)
architecture = open("docs/architecture.md").read()
# Links between the Markdown files of docs/ name files, not documentation pages.
architecture = re.sub(r"\[([^\]]+)\]\([^)]+\.md\)", r"\1", architecture)
open(catalog + "/Architecture.md", "w").write(architecture)
PY

docc convert "$out/Folio.docc" \
  --additional-symbol-graph-dir "$out/symbol-graphs" \
  --fallback-display-name Folio --fallback-bundle-identifier dev.folio.Folio \
  --output-path "$out/Folio.doccarchive" --warnings-as-errors 2>&1 | tee "$out/docc.log"
if grep -q "warning:" "$out/docc.log"; then
  echo "build-docs: DocC warnings above" >&2
  exit 1
fi
python3 scripts/check-topics.py "$out/Folio.doccarchive" documentation/folio/store

# Every example in a public doc comment type-checks against the public API.
# An example's unused results are fine (`[#no-usage]`); any other warning,
# such as an `await` on a blocking form, fails like an error.
python3 scripts/extract-doc-examples.py "$out/DocExamples.swift"
bin=$(swift build --show-bin-path)
maps=()
while IFS= read -r map; do maps+=(-Xcc "-fmodule-map-file=$map"); done < <(find Sources -name module.modulemap)
swiftc -typecheck -swift-version 6 -I "$bin/Modules" "${maps[@]}" "$out/DocExamples.swift" \
  >"$out/examples.log" 2>&1 || true
if grep -E "(error|warning):" "$out/examples.log" | grep -qv "\[#no-usage\]"; then
  cat "$out/examples.log" >&2
  echo "build-docs: a doc comment's example does not compile (see above)" >&2
  exit 1
fi
echo "examples: $(grep -c '^private func docExample\|^@MainActor private func docExample' "$out/DocExamples.swift") doc comment examples type-check"

if [[ "${1:-}" == "--preview" ]]; then
  docc preview "$out/Folio.docc" --additional-symbol-graph-dir "$out/symbol-graphs" \
    --fallback-display-name Folio --fallback-bundle-identifier dev.folio.Folio --port 8080
fi
