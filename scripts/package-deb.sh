#!/usr/bin/env bash
# Builds a Debian package of folio, folio_VERSION_ARCH.deb, with dpkg-deb:
#   /usr/bin/folio                                   the release binary, stripped
#   /usr/share/bash-completion/completions/folio     folio completion bash
#   /usr/share/zsh/vendor-completions/_folio         folio completion zsh
#   /usr/share/fish/vendor_completions.d/folio.fish  folio completion fish
#   /usr/share/man/man1/folio.1.gz, folio-CMD.1.gz   folio help --man [CMD]
#   /usr/share/doc/folio/copyright, changelog.gz
#   /usr/share/lintian/overrides/folio               the tags explained there
# Depends: libc6 (from the binary's symbol versions), the libraries folio
# opens at run time (libgit2, for git; libmicrohttpd, for folio serve), each
# by the Debian package that holds its soname here, and git, which sync runs.
# The Swift runtime, libyaml, libsqlite3 and zlib are linked in.
#
# Usage: scripts/package-deb.sh [--binary PATH] [--output DIR] [--lintian]
#   --binary PATH  package this folio (a release build) instead of building one
#   --output DIR   where to write the .deb (default .build/deb)
#   --lintian      run lintian on the package and fail on any error or warning
# Prints the path of the package it wrote.
set -euo pipefail
cd "$(dirname "$0")/.."
binary=""
output=.build/deb
lint=0
while (($#)); do
  case "$1" in
    --binary) binary="${2:?--binary needs a path}"; shift 2 ;;
    --output) output="${2:?--output needs a directory}"; shift 2 ;;
    --lintian) lint=1; shift ;;
    -h | --help) sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "package-deb.sh: unknown option '$1'; see --help" >&2; exit 64 ;;
  esac
done
for tool in dpkg-deb dpkg-architecture objdump strip gzip; do
  command -v "$tool" >/dev/null 2>&1 || {
    echo "package-deb.sh: needs $tool; run: apt-get install dpkg-dev binutils" >&2
    exit 1
  }
done
if [[ -z "$binary" ]]; then
  bash scripts/build-release.sh --product folio >&2
  binary=.build/release/folio
fi
[[ -x "$binary" ]] || { echo "package-deb.sh: no executable at $binary" >&2; exit 1; }

# A binary that needs the toolchain's Swift runtime would not start on a
# machine without it: only a build that links it in is packaged.
needed=$(objdump -p "$binary" | awk '/NEEDED/ {print $2}')
for library in $needed; do
  case "$library" in
    libc.so.* | libm.so.* | ld-linux*.so.* | libpthread.so.* | libdl.so.*) ;;
    *)
      echo "package-deb.sh: $binary links $library, which no Debian package provides here;" \
        "package a build of scripts/build-release.sh, which links the Swift runtime in" >&2
      exit 1
      ;;
  esac
done

version=$("$binary" --version | awk '{print $2}')
arch=$(dpkg-architecture -qDEB_HOST_ARCH)
glibc=$(objdump -T "$binary" | grep -o 'GLIBC_[0-9][0-9.]*' | sed 's/GLIBC_//' | sort -uV | tail -1)
depends=("libc6 (>= $glibc)")
# The libraries folio opens with dlopen, by soname, and the package of each.
for soname in $(strings -a "$binary" | grep -oE '^lib(git2|microhttpd)\.so\.[0-9.]+$' | sort -u); do
  package=$(dpkg -S "*/$soname" 2>/dev/null | head -1 | cut -d: -f1) || true
  if [[ -z "$package" ]]; then
    echo "package-deb.sh: no installed Debian package holds $soname; install it first" >&2
    exit 1
  fi
  depends+=("$package")
done
depends+=(git)

stage=$(mktemp -d "${TMPDIR:-/tmp}/folio-deb-XXXXXX")
trap 'rm -rf "$stage"' EXIT
root="$stage/folio_${version}_${arch}"
install -d -m 755 "$root/DEBIAN" "$root/usr/bin" "$root/usr/share/man/man1" "$root/usr/share/doc/folio" \
  "$root/usr/share/bash-completion/completions" "$root/usr/share/zsh/vendor-completions" \
  "$root/usr/share/fish/vendor_completions.d" "$root/usr/share/lintian/overrides"
install -m 755 "$binary" "$root/usr/bin/folio"
strip --strip-unneeded --remove-section=.comment --remove-section=.note "$root/usr/bin/folio"
folio="$root/usr/bin/folio"
"$folio" completion bash >"$root/usr/share/bash-completion/completions/folio"
"$folio" completion zsh >"$root/usr/share/zsh/vendor-completions/_folio"
"$folio" completion fish >"$root/usr/share/fish/vendor_completions.d/folio.fish"
"$folio" help --man | gzip -9n >"$root/usr/share/man/man1/folio.1.gz"
for command in $("$folio" __complete 1 folio ""); do
  [[ "$command" == help ]] && continue
  "$folio" help --man "$command" | gzip -9n >"$root/usr/share/man/man1/folio-$command.1.gz"
done
date=$(git log -1 --format=%aD 2>/dev/null || date -R)
# The maintainers are whoever made the commit packaged.
maintainer=$(git log -1 --format='%an <%ae>' 2>/dev/null || echo "The Folio developers <folio@localhost>")
cat >"$stage/changelog" <<CHANGELOG
folio ($version) unstable; urgency=medium

  * Release $version ($("$folio" --version | cut -d' ' -f2-)).

 -- $maintainer  $date
CHANGELOG
gzip -9n <"$stage/changelog" >"$root/usr/share/doc/folio/changelog.gz"
{
  cat <<'COPYRIGHT'
Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: folio

Files: *
Copyright: 2026 The Folio developers
License: Apache-2.0

License: Apache-2.0
 Licensed under the Apache License, Version 2.0 (the "License"); you may not
 use this file except in compliance with the License. You may obtain a copy
 of the License at http://www.apache.org/licenses/LICENSE-2.0
 .
 On Debian systems, the full text of the Apache License 2.0 is in
 /usr/share/common-licenses/Apache-2.0.
COPYRIGHT
} >"$root/usr/share/doc/folio/copyright"
# The tags lintian would warn of, and why each stands (docs/cli.md).
cat >"$root/usr/share/lintian/overrides/folio" <<'OVERRIDES'
# libyaml (and libsqlite3, zlib) are linked from their static archives, so
# that a fresh folio loads and relocates no shared library of its own.
folio: embedded-library libyaml [usr/bin/folio]
# Linked at a fixed address (-no-pie) so that a fresh process applies no
# relocations before main: folio --version starts in 2.7 ms, not 3.9 ms.
folio: hardening-no-pie [usr/bin/folio]
OVERRIDES
find "$root/usr" -type d -exec chmod 755 {} +
find "$root/usr" -type f ! -path '*/usr/bin/*' -exec chmod 644 {} +

installed=$(du -sk --apparent-size "$root/usr" | cut -f1)
cat >"$root/DEBIAN/control" <<CONTROL
Package: folio
Version: $version
Architecture: $arch
Maintainer: $maintainer
Installed-Size: $installed
Depends: $(IFS=,; echo "${depends[*]}" | sed 's/,/, /g')
Section: database
Priority: optional
Description: database kept as JSON files in a git repository
 Folio keeps each table as a folder and each document as one JSON file in
 a git repository. Edits made in any text editor are recorded as
 mutations, git push and pull carry the data between machines, and merges
 replay operations so that counters add up, sets union and the last
 writer wins, without conflict markers. The folio command imports and
 exports CSV, NDJSON, JSON and SQLite, queries with indexes, and serves
 Firebase's REST protocol with live streams and a browsing page.
CONTROL
(cd "$root" && find usr -type f -print0 | sort -z | xargs -0 md5sum >DEBIAN/md5sums)
chmod 644 "$root/DEBIAN/control" "$root/DEBIAN/md5sums"

mkdir -p "$output"
deb="$output/folio_${version}_${arch}.deb"
dpkg-deb --root-owner-group -Zxz --build "$root" "$deb" >&2
if ((lint)); then
  command -v lintian >/dev/null 2>&1 || { echo "package-deb.sh: --lintian needs lintian; run: apt-get install lintian" >&2; exit 1; }
  lintian --fail-on error,warning --allow-root "$deb" >&2
fi
echo "$deb"
