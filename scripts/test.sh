#!/usr/bin/env bash
# Installs what is missing, builds, and runs every test.
set -euo pipefail
cd "$(dirname "$0")/.."
# nodejs: the syntax check of the page's JavaScript, below.
source scripts/install-deps.sh nodejs
# Plain git in the tests commits too; where no identity is configured it
# gets one from the environment, so the machine's git config is left alone.
if ! git config user.email >/dev/null 2>&1; then
  export GIT_AUTHOR_EMAIL="folio-tests@localhost" GIT_COMMITTER_EMAIL="folio-tests@localhost"
fi
if ! git config user.name >/dev/null 2>&1; then
  export GIT_AUTHOR_NAME="Folio Tests" GIT_COMMITTER_NAME="Folio Tests"
fi
# The tests that want an index daemon turn it on themselves and stop it.
export FOLIO_INDEX_DAEMON=off
# Checked before anything is built: the house format, and that every
# module a target imports is one Package.swift declares for it (so the
# layers are what the manifest says, not what SwiftPM resolves through a
# neighbour). The code then builds without a warning.
swift format lint --strict --recursive Sources Tests Plugins Package.swift
# The page `folio serve` answers `/` with is HTML, CSS and JavaScript files,
# embedded at build time (Plugins/PageEmbedding); its script is checked
# before anything is built, as the Swift is.
node --check Sources/FolioServe/Page/page.js
python3 scripts/check-imports.py
swift build --build-tests -Xswiftc -warnings-as-errors
# The Debian package test packages the release build, as users get it:
# built here, one build at a time, rather than inside a test beside others.
bash scripts/build-release.sh --product folio
swift test --skip-build
# The library suite again with every table of its stores nested, the
# default of a new table (tables made by the command line are nested
# already; folio.yaml files without `layout:` are flat): both layouts pass
# the sync, merge and convergence suites. The hashed layout shares their
# code, one level of folders for two, and has tests of its own. This run
# also writes git's index split from the first entry (a store gets that
# from 50,000), so every commit, checkout and merge goes through split
# indexes too, and the first run through whole ones.
FOLIO_TABLE_LAYOUT=nested FOLIO_SPLIT_INDEX_MIN_ENTRIES=0 swift test --skip-build --filter 'FolioTests\.'
# A consumer package that depends on the library by version, as a real one
# does, and uses only its public API, with no JSON text by hand (Codable,
# Swift values, write with filters, async/await, live queries on the main
# queue under dispatchMain). The release it depends on is this checkout's
# HEAD, tagged 1.0.0 in a bare repository made for the purpose.
release=$(mktemp -d "${TMPDIR:-/tmp}/folio-release-XXXXXX")
trap 'rm -rf "$release"' EXIT
git clone -q --bare . "$release/Folio.git"
git -C "$release/Folio.git" tag 1.0.0 HEAD
rm -f Examples/TodoApp/Package.resolved
export FOLIO_PACKAGE_URL="file://$release/Folio.git"
swift build --package-path Examples/TodoApp
swift run --skip-build --package-path Examples/TodoApp TodoApp
# The README's library example, pasted whole into a main.swift as a user
# would, built (with no warning: top-level code must not pick a blocking
# form where it awaits) and run.
readme="$release/readme"
mkdir -p "$readme/Sources/ReadmeExample"
awk '/^## The library/{on=1} on&&/^```swift/{grab=1;next} grab&&/^```/{exit} grab' README.md \
  >"$readme/Sources/ReadmeExample/main.swift"
cat >"$readme/Package.swift" <<MANIFEST
// swift-tools-version:6.0
import PackageDescription
let package = Package(
  name: "ReadmeExample",
  dependencies: [.package(url: "$FOLIO_PACKAGE_URL", from: "1.0.0")],
  targets: [.executableTarget(name: "ReadmeExample", dependencies: [.product(name: "Folio", package: "Folio")])],
  swiftLanguageModes: [.v6]
)
MANIFEST
swift build --package-path "$readme" 2>&1 | tee "$readme/build.log"
if grep -q "warning:" "$readme/build.log"; then
  echo "the README's library example warns when built as a main.swift (see above)" >&2
  exit 1
fi
(cd "$readme" && "$(swift build --package-path "$readme" --show-bin-path)/ReadmeExample" >/dev/null)
echo "README example: ok"

# The documentation builds with the toolchain's DocC, with no warning, and
# Store's `## Topics` lists every public member.
bash scripts/build-docs.sh >.build/build-docs.log 2>&1 || {
  cat .build/build-docs.log
  exit 1
}
echo "Documentation: ok"
