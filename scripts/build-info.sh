#!/usr/bin/env bash
# Prints the linker flags that stamp a binary with what it was built from
# (`folio --version`): an object defining folio_build_description() as the
# tag at HEAD, or the commit (with -dirty when the tree has changes), made
# in .build/. Only the link step takes it, so a new commit costs a relink,
# not a rebuild. Prints nothing outside a git checkout.
set -euo pipefail
cd "$(dirname "$0")/.."
git rev-parse --git-dir >/dev/null 2>&1 || exit 0
description=$(git describe --tags --exact-match HEAD 2>/dev/null || git rev-parse --short=12 HEAD)
if [[ -n "$(git status --porcelain --untracked-files=no 2>/dev/null)" ]]; then description+="-dirty"; fi
# Only characters that need no escaping in a C string.
description=${description//[^A-Za-z0-9._+-]/}
mkdir -p .build
cc=$(command -v clang || command -v gcc || command -v cc)
printf 'const char *folio_build_description(void) { return "%s"; }\n' "$description" >.build/build-info.c
"$cc" -c -O2 -fPIC -o .build/build-info.o .build/build-info.c
echo "-Xlinker $PWD/.build/build-info.o"
