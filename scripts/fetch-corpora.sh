#!/usr/bin/env bash
# Fetch the three real-world corpora used by the retrieval benchmark
# (test/bench/retrieval/questions.json) into .bench-cache/corpora/<name>/.
#
#   python-stdlib  CPython 3.11 standard library, Debian packages
#                  libpython3.11-minimal + libpython3.11-stdlib (the stdlib is
#                  split over the two; e.g. email, logging, urllib, re live in
#                  -minimal). Binary extension modules (lib-dynload) are dropped.
#   go-net         Go 1.19 standard library tree src/net (net, net/http,
#                  net/url, net/mail, net/smtp, net/rpc, ...), Debian package
#                  golang-1.19-src, without *_test.go files and testdata dirs.
#   rxjs           The TypeScript sources (src/**/*.ts) of the rxjs npm package.
#
# Idempotent: a corpus whose stamp file matches the pinned source is skipped.
# Needs: apt-get + dpkg-deb (Debian), npm, tar. Run `apt-get update` first if
# apt cannot find the packages.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
CORPORA="$ROOT/.bench-cache/corpora"

PY_VERSION="3.11.2-6+deb12u9"
GO_PACKAGE="golang-1.19-src"
GO_VERSION="1.19.8-2"
RXJS_VERSION="7.8.2"

STAMP=".corpus-source"
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
chmod 755 "$TMP"   # lets apt's unprivileged downloader write here

log() { echo "fetch-corpora: $*" >&2; }


DEST="$CORPORA"
# shellcheck source=fetch-lib.sh
source "$(dirname "$0")/fetch-lib.sh"

fetch_python() {
  local name="python-stdlib" source="libpython3.11-minimal+stdlib=$PY_VERSION"
  if up_to_date "$name" "$source"; then log "$name: up to date"; return; fi
  log "$name: fetching Debian libpython3.11-{minimal,stdlib} $PY_VERSION"
  local got1 got2 out="$TMP/$name"
  got1="$(apt_fetch libpython3.11-minimal "$PY_VERSION" "$TMP/pymin")"
  got2="$(apt_fetch libpython3.11-stdlib "$PY_VERSION" "$TMP/pystd")"
  mkdir -p "$out"
  cp -a "$TMP/pymin/root/usr/lib/python3.11/." "$out/"
  cp -a "$TMP/pystd/root/usr/lib/python3.11/." "$out/"
  rm -rf "$out/lib-dynload"
  find "$out" -name __pycache__ -type d -prune -exec rm -rf {} +
  find "$out" -xtype l -delete   # symlinks into /etc that do not resolve here
  [[ "$got1" == "$PY_VERSION" && "$got2" == "$PY_VERSION" ]] || source="libpython3.11-minimal=$got1+stdlib=$got2"
  install_corpus "$name" "$source" "$out"
}

fetch_go() {
  local name="go-net" source="$GO_PACKAGE=$GO_VERSION:src/net"
  if up_to_date "$name" "$source"; then log "$name: up to date"; return; fi
  log "$name: fetching Debian $GO_PACKAGE $GO_VERSION"
  local got out="$TMP/$name" src
  got="$(apt_fetch "$GO_PACKAGE" "$GO_VERSION" "$TMP/go")"
  src="$(ls -d "$TMP"/go/root/usr/share/go-*/src/net)"
  mkdir -p "$out"
  tar -C "$src" --exclude='*_test.go' --exclude=testdata -cf - . | tar -C "$out" -xf -
  [[ "$got" == "$GO_VERSION" ]] || source="$GO_PACKAGE=$got:src/net"
  install_corpus "$name" "$source" "$out"
}

fetch_rxjs() {
  local name="rxjs" source="npm:rxjs@$RXJS_VERSION:src"
  if up_to_date "$name" "$source"; then log "$name: up to date"; return; fi
  log "$name: fetching rxjs@$RXJS_VERSION from npm"
  local out="$TMP/$name"
  mkdir -p "$TMP/npm" "$out"
  (cd "$TMP/npm" && npm pack --silent "rxjs@$RXJS_VERSION" >/dev/null)
  tar -C "$TMP/npm" -xzf "$TMP/npm/rxjs-$RXJS_VERSION.tgz"
  (cd "$TMP/npm/package/src" && find . -name '*.ts' -print0 | tar --null -T - -cf -) | tar -C "$out" -xf -
  install_corpus "$name" "$source" "$out"
}

summary() {
  local dir="$CORPORA/$1" ext="$2" files bytes src
  files="$(find "$dir" -type f ! -name "$STAMP" | wc -l)"
  src="$(find "$dir" -type f -name "*.$ext" | wc -l)"
  bytes="$(find "$dir" -type f ! -name "$STAMP" -printf '%s\n' | awk '{s+=$1} END {print s+0}')"
  printf '%-14s %5d files (%d .%s)  %9d bytes  %s\n' "$1" "$files" "$src" "$ext" "$bytes" "$(cat "$dir/$STAMP")"
}

fetch_python
fetch_go
fetch_rxjs

summary python-stdlib py
summary go-net go
summary rxjs ts
