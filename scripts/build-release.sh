#!/usr/bin/env bash
# Builds Folio in release mode, as the demo and the benchmarks use it:
# the Swift runtime and Foundation linked in (the toolchain's supported
# switch), so a fresh `folio query` does not load and relocate a dozen
# shared libraries; and linked at a fixed address (-no-pie), so the loader
# does not apply 77,000 relative relocations (each a write to a page of the
# binary) before `main`: a fresh `folio --version` starts in 2.7 ms rather
# than 3.9 ms. The compiler reaches a generic type's metadata through its
# accessor rather than by its mangled name, so that the runtime does not scan
# every protocol conformance in the binary (5,400 of them, Foundation's
# included) for each one a fresh process meets.
# The C++ runtime (which the Swift runtime and Foundation use) and libgcc
# are linked in too, so the loader maps and relocates only libc and libm:
# `-static-stdlib` names `-lstdc++`, and the linker finds it, ahead of the
# shared one, as a linker script in .build/static-libstdc++ that names
# libstdc++.a. With all of this, `folio --version` starts faster than a
# hello world built the default way.
# Arguments go to `swift build` (e.g. --product folio).
set -euo pipefail
cd "$(dirname "$0")/.."
flags=(
  -c release --static-swift-stdlib -Xlinker -no-pie
  -Xswiftc -Xfrontend -Xswiftc -disable-concrete-type-metadata-mangled-name-accessors
)
cxx=$(command -v clang || command -v gcc || true)
archive=${cxx:+$("$cxx" -print-file-name=libstdc++.a)}
if [[ -n "$archive" && -f "$archive" ]]; then
  mkdir -p .build/static-libstdc++
  echo "INPUT($archive)" >.build/static-libstdc++/libstdc++.so
  flags+=(-Xswiftc -L -Xswiftc "$PWD/.build/static-libstdc++" -Xswiftc -Xclang-linker -Xswiftc -static-libgcc)
fi
# Stamped with the commit (folio --version); the binary is linked again so
# that a new commit shows even when no source changed.
read -r -a stamp <<<"$(scripts/build-info.sh)"
flags+=("${stamp[@]}")
rm -f .build/release/folio
if [[ $# -eq 0 ]]; then
  # The programs, not every target: the tests' support target imports
  # Testing, which is there only for a build with tests.
  swift build "${flags[@]}" --product folio
  exec swift build "${flags[@]}" --product folio-bench
fi
exec swift build "${flags[@]}" "$@"
