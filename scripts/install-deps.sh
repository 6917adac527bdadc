#!/usr/bin/env bash
# Installs the Debian packages Folio needs, only those missing, with one
# `apt-get update` first. Sourced by demo.sh and test.sh.
set -euo pipefail
packages=(libgit2-dev libyaml-dev libsqlite3-dev zlib1g-dev libmicrohttpd-dev curl git vim sqlite3 openssh-server openssh-client chromium man-db lintian dpkg-dev binutils "$@")
missing=()
for package in "${packages[@]}"; do
  dpkg -s "$package" >/dev/null 2>&1 || missing+=("$package")
done
# vim: the real-editor watch test; sqlite3: the SQLite export schema test;
# man-db: the install test reads the man pages it installs; lintian,
# dpkg-dev and binutils: the Debian package test builds, checks and
# installs folio's .deb.
# The credentials test serves git over HTTP with a small Python front;
# openssh-server/-client: the ssh remote tests run a real sshd, ssh-agent
# and ssh-keygen. chromium: the `folio serve` page test drives Debian's
# headless Chromium with Playwright (below).
command -v python3 >/dev/null 2>&1 || missing+=(python3)
if ((${#missing[@]})); then
  echo "installing: ${missing[*]}" >&2
  apt-get update
  DEBIAN_FRONTEND=noninteractive apt-get install -y "${missing[@]}"
fi
# From PyPI, in their own virtual environment: Playwright for the page
# test (not `playwright install`: the test runs Debian's /usr/bin/chromium)
# and Google's firebase-admin SDK for the Firebase parity test; and public
# data packages (palmerpenguins, vega_datasets) whose files, with their
# nulls, NA and mixed types, the reference tests check answers on.
FOLIO_VENV="${FOLIO_VENV:-/opt/folio-venv}"
if ! "$FOLIO_VENV/bin/python" -c 'import playwright, firebase_admin, palmerpenguins, vega_datasets' >/dev/null 2>&1; then
  echo "installing: playwright, firebase-admin and data packages (PyPI) in $FOLIO_VENV" >&2
  if ! "$FOLIO_VENV/bin/python" -c '' >/dev/null 2>&1 && ! python3 -m venv "$FOLIO_VENV" >/dev/null 2>&1; then
    dpkg -s python3-venv >/dev/null 2>&1 || {
      apt-get update
      DEBIAN_FRONTEND=noninteractive apt-get install -y python3-venv
    }
    python3 -m venv "$FOLIO_VENV"
  fi
  "$FOLIO_VENV/bin/pip" install -q playwright firebase-admin==7.7.0 palmerpenguins==0.1.6 vega_datasets==0.9.0
fi
if ! command -v swift >/dev/null 2>&1 && [ -x /opt/swift/usr/bin/swift ]; then
  export PATH="/opt/swift/usr/bin:$PATH"
fi
