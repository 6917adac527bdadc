#!/usr/bin/env bash
# Installs folio: builds the release binary as users should get it
# (scripts/build-release.sh) and installs, under PREFIX:
#   bin/folio
#   share/bash-completion/completions/folio, share/zsh/site-functions/_folio,
#   share/fish/vendor_completions.d/folio.fish   (folio completion SHELL)
#   share/man/man1/folio.1 and folio-COMMAND.1    (folio help --man COMMAND)
# and the list of those files, share/folio/installed. Rerunning upgrades in
# place; --uninstall removes exactly the files that list names.
#
# Usage: scripts/install.sh [--prefix DIR] [--uninstall] [--binary PATH]
#   --prefix DIR   where to install (default /usr/local as root, ~/.local otherwise)
#   --uninstall    remove what an earlier run installed under PREFIX
#   --binary PATH  install this already built folio instead of building one
# As root, the Debian packages the build needs are installed when missing.
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ $(id -u) -eq 0 ]]; then prefix=/usr/local; else prefix="$HOME/.local"; fi
uninstall=0
binary=""
while (($#)); do
  case "$1" in
    --prefix) prefix="${2:?--prefix needs a directory}"; shift 2 ;;
    --prefix=*) prefix="${1#--prefix=}"; shift ;;
    --uninstall) uninstall=1; shift ;;
    --binary) binary="${2:?--binary needs a path}"; shift 2 ;;
    -h | --help) sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "install.sh: unknown option '$1'; see --help" >&2; exit 64 ;;
  esac
done
mkdir -p "$prefix"
prefix=$(cd "$prefix" && pwd)
manifest="$prefix/share/folio/installed"

if ((uninstall)); then
  if [[ ! -f "$manifest" ]]; then
    echo "nothing to uninstall: no $manifest" >&2
    exit 1
  fi
  while IFS= read -r file; do rm -f "$prefix/$file"; done <"$manifest"
  rm -f "$manifest"
  rmdir "$prefix/share/folio" 2>/dev/null || true
  echo "removed folio from $prefix"
  exit 0
fi

if [[ -z "$binary" ]]; then
  packages=(libgit2-dev libyaml-dev libsqlite3-dev zlib1g-dev libmicrohttpd-dev git)
  missing=()
  for package in "${packages[@]}"; do dpkg -s "$package" >/dev/null 2>&1 || missing+=("$package"); done
  if ((${#missing[@]})); then
    if [[ $(id -u) -ne 0 ]]; then
      echo "install.sh: the build needs ${missing[*]}; run: sudo apt-get install ${missing[*]}" >&2
      exit 1
    fi
    apt-get update
    DEBIAN_FRONTEND=noninteractive apt-get install -y "${missing[@]}"
  fi
  command -v swift >/dev/null 2>&1 || {
    echo "install.sh: the build needs a Swift 6 toolchain on PATH (https://www.swift.org/install/linux/)" >&2
    exit 1
  }
  bash scripts/build-release.sh --product folio
  binary=.build/release/folio
fi

# Staged beside the targets and renamed into place, so that a folio that
# is running keeps its old file and a failed run leaves the old install.
installed=()
place() { # place RELATIVE (content on stdin) [MODE]
  local target="$prefix/$1"
  mkdir -p "$(dirname "$target")"
  cat >"$target.folio-new"
  chmod "${2:-644}" "$target.folio-new"
  mv -f "$target.folio-new" "$target"
  installed+=("$1")
}
place bin/folio 755 <"$binary"
folio="$prefix/bin/folio"
# (Input from < <(…), not a pipe: a pipe would run place in a subshell,
# and the list of what was installed would lose the file.)
place share/bash-completion/completions/folio < <("$folio" completion bash)
place share/zsh/site-functions/_folio < <("$folio" completion zsh)
place share/fish/vendor_completions.d/folio.fish < <("$folio" completion fish)
place share/man/man1/folio.1 < <("$folio" help --man)
for command in $("$folio" __complete 1 folio ""); do
  [[ "$command" == help ]] && continue
  place "share/man/man1/folio-$command.1" < <("$folio" help --man "$command")
done
# An upgrade that dropped a file removes it too.
if [[ -f "$manifest" ]]; then
  while IFS= read -r file; do
    [[ " ${installed[*]} " == *" $file "* ]] || rm -f "$prefix/$file"
  done <"$manifest"
fi
installed+=(share/folio/installed)
list=$(printf '%s\n' "${installed[@]}")
place share/folio/installed <<<"$list"
echo "installed $("$folio" --version) into $prefix (${#installed[@]} files, listed in $manifest)"
case ":$PATH:" in
  *":$prefix/bin:"*) ;;
  *) echo "note: $prefix/bin is not on PATH; add it, e.g. export PATH=\"$prefix/bin:\$PATH\"" ;;
esac
