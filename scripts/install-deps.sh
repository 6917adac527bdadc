#!/usr/bin/env bash
# Installs the Debian packages Folio needs, only those missing, with one
# `apt-get update` first. Sourced by demo.sh and test.sh.
set -euo pipefail
packages=(libgit2-dev libyaml-dev libsqlite3-dev zlib1g-dev libmicrohttpd-dev curl git vim sqlite3 openssh-server openssh-client "$@")
missing=()
for package in "${packages[@]}"; do
  dpkg -s "$package" >/dev/null 2>&1 || missing+=("$package")
done
# vim: the real-editor watch test; sqlite3: the SQLite export schema test.
# The credentials test serves git over HTTP with a small Python front;
# openssh-server/-client: the ssh remote tests run a real sshd, ssh-agent
# and ssh-keygen.
command -v python3 >/dev/null 2>&1 || missing+=(python3)
if ((${#missing[@]})); then
  echo "installing: ${missing[*]}" >&2
  apt-get update
  DEBIAN_FRONTEND=noninteractive apt-get install -y "${missing[@]}"
fi
if ! command -v swift >/dev/null 2>&1 && [ -x /opt/swift/usr/bin/swift ]; then
  export PATH="/opt/swift/usr/bin:$PATH"
fi
