# Shared by fetch-corpora.sh and fetch-train-corpora.sh (sourced, not run). The caller sets DEST
# (where finished trees go), STAMP (the stamp file's name) and defines log().

# apt_fetch PACKAGE VERSION DIR: download PACKAGE=VERSION (falling back to the
# current candidate, with a warning, if the mirror no longer has that version)
# into DIR and unpack it under DIR/root. Prints the version obtained.
apt_fetch() {
  local pkg="$1" version="$2" dir="$3" deb
  mkdir -p "$dir/root"
  chmod 777 "$dir"
  if ! (cd "$dir" && apt-get download -q "$pkg=$version" >&2 2>/dev/null); then
    log "WARNING: $pkg=$version not available, using the current candidate"
    (cd "$dir" && apt-get download -q "$pkg" >&2)
  fi
  deb="$(ls "$dir"/"${pkg}"_*.deb)"
  dpkg-deb -x "$deb" "$dir/root"
  dpkg-deb -f "$deb" Version
}

# up_to_date NAME SOURCE: true if NAME was already built from SOURCE.
up_to_date() {
  [[ -f "$DEST/$1/$STAMP" && "$(cat "$DEST/$1/$STAMP")" == "$2" ]]
}

# install_corpus NAME SOURCE STAGED_DIR: move a finished tree into place.
install_corpus() {
  echo "$2" > "$3/$STAMP"
  rm -rf "${DEST:?}/$1"
  mkdir -p "$DEST"
  mv "$3" "$DEST/$1"
}
