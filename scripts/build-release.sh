#!/usr/bin/env bash
# Builds Folio in release mode, as the demo and the benchmarks use it:
# the Swift runtime and Foundation linked in (the toolchain's supported
# switch), so a fresh `folio query` does not load and relocate a dozen
# shared libraries. Arguments go to `swift build` (e.g. --product folio).
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ $# -eq 0 ]]; then
  # The programs, not every target: the tests' support target imports
  # Testing, which is there only for a build with tests.
  swift build -c release --static-swift-stdlib --product folio
  exec swift build -c release --static-swift-stdlib --product folio-bench
fi
exec swift build -c release --static-swift-stdlib "$@"
