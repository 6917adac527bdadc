#!/usr/bin/env bash
# Installs what is missing, builds, and runs every test.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/install-deps.sh
git config --global user.email >/dev/null 2>&1 || git config --global user.email "folio-tests@localhost"
git config --global user.name >/dev/null 2>&1 || git config --global user.name "Folio Tests"
# The tests that want an index daemon turn it on themselves and stop it.
export FOLIO_INDEX_DAEMON=off
swift build --build-tests
swift test --skip-build
# A consumer package that depends on the library and uses only its public
# API, with no JSON text by hand (Codable, Swift values, write with filters,
# async/await, live queries on the main queue under dispatchMain).
swift build --package-path Examples/TodoApp
swift run --skip-build --package-path Examples/TodoApp TodoApp
