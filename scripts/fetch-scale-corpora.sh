#!/usr/bin/env bash
# Fetch the large trees of the scale benchmark into .bench-cache/corpora/<name>/:
#
#   go-src     Go 1.19's src/ from Debian golang-1.19-src, tests and testdata included, as a user
#              would index it (about 4,600 files indexed, 60K nodes).
#   go-src-x5  go-src copied five times under different roots (a/ … e/): about 300K nodes.
#
# Idempotent: a tree whose stamp file matches the pinned source is skipped.
# Needs: apt-get + dpkg-deb (Debian).
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
DEST="$ROOT/.bench-cache/corpora"
GO_PACKAGE="golang-1.19-src"
GO_VERSION="1.19.8-2"
STAMP=".corpus-source"
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
chmod 755 "$TMP"

log() { echo "fetch-scale-corpora: $*" >&2; }
# shellcheck source=fetch-lib.sh
source "$(dirname "$0")/fetch-lib.sh"

src="$GO_PACKAGE=$GO_VERSION:src"
if up_to_date go-src "$src"; then
  log "go-src: up to date"
else
  log "go-src: fetching Debian $GO_PACKAGE $GO_VERSION"
  got="$(apt_fetch "$GO_PACKAGE" "$GO_VERSION" "$TMP/go")"
  mkdir -p "$TMP/go-src"
  cp -a "$(ls -d "$TMP"/go/root/usr/share/go-*/src)/." "$TMP/go-src/"
  [[ "$got" == "$GO_VERSION" ]] || src="$GO_PACKAGE=$got:src"
  install_corpus go-src "$src" "$TMP/go-src"
fi

big="$(cat "$DEST/go-src/$STAMP") x5"
if up_to_date go-src-x5 "$big"; then
  log "go-src-x5: up to date"
else
  log "go-src-x5: copying go-src five times"
  mkdir -p "$TMP/x5"
  for r in a b c d e; do
    mkdir -p "$TMP/x5/$r"
    cp -a "$DEST/go-src/." "$TMP/x5/$r/"
    rm -f "$TMP/x5/$r/$STAMP"
  done
  install_corpus go-src-x5 "$big" "$TMP/x5"
fi
