#!/usr/bin/env bash
# Sets up a local PostgreSQL 15 + pgvector for codemem's postgres backend and its tests (Debian 12).
# Idempotent: every step checks before it acts, so running it again only starts what is stopped.
# Run as root: sudo bash scripts/setup-postgres.sh
#
# Environment (all optional):
#   CODEMEM_PG_PASSWORD_FILE  where the role's password is written (default /tmp/codemem-pg-password)
#   CODEMEM_PG_ROLE           role to create (default codemem)
#   CODEMEM_PG_DATABASE       database to create (default codemem_test)
set -euo pipefail

PG_MAJOR=15
PG_BIN=/usr/lib/postgresql/$PG_MAJOR/bin
PG_CONFIG=$PG_BIN/pg_config
PGVECTOR_VERSION=0.8.0
PGVECTOR_URL="http://deb.debian.org/debian/pool/main/p/pgvector/pgvector_${PGVECTOR_VERSION}.orig.tar.gz"
PGVECTOR_SHA256=867a2c328d4928a5a9d6f052cd3bc78c7d60228a9b914ad32aa3db88e9de27b0
PASSWORD_FILE=${CODEMEM_PG_PASSWORD_FILE:-/tmp/codemem-pg-password}
ROLE=${CODEMEM_PG_ROLE:-codemem}
DATABASE=${CODEMEM_PG_DATABASE:-codemem_test}

say() { echo "setup-postgres: $*"; }
die() { echo "setup-postgres: error: $*" >&2; exit 1; }

[ "$(id -u)" -eq 0 ] || die "run as root (sudo bash $0): it installs packages and manages the cluster."
[[ "$ROLE" =~ ^[a-z_][a-z0-9_]*$ ]] || die "CODEMEM_PG_ROLE must be a plain lower-case identifier; got '$ROLE'."
[[ "$DATABASE" =~ ^[a-z_][a-z0-9_]*$ ]] || die "CODEMEM_PG_DATABASE must be a plain lower-case identifier; got '$DATABASE'."

# 1. Packages: the server, its headers (to build pgvector) and a compiler, only when missing.
missing=()
for pkg in postgresql-$PG_MAJOR postgresql-server-dev-$PG_MAJOR build-essential curl ca-certificates; do
  [ "$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null)" = "install ok installed" ] || missing+=("$pkg")
done
if [ ${#missing[@]} -gt 0 ]; then
  say "installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# 2. pgvector: Debian 12 has no package for PG 15, so build the source Debian ships for later releases.
if [ ! -f /usr/share/postgresql/$PG_MAJOR/extension/vector.control ]; then
  say "building pgvector $PGVECTOR_VERSION"
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  curl -fsSL --retry 3 -o "$work/pgvector.tar.gz" "$PGVECTOR_URL" || die "cannot download $PGVECTOR_URL"
  echo "$PGVECTOR_SHA256  $work/pgvector.tar.gz" | sha256sum -c --quiet - || die "checksum mismatch for $PGVECTOR_URL"
  tar -xzf "$work/pgvector.tar.gz" -C "$work"
  src=$(find "$work" -mindepth 1 -maxdepth 1 -type d | head -n 1)
  # OPTFLAGS="": the default -march=native would tie the library to this CPU.
  make -s -C "$src" OPTFLAGS="" PG_CONFIG="$PG_CONFIG" >/dev/null
  make -s -C "$src" OPTFLAGS="" PG_CONFIG="$PG_CONFIG" install >/dev/null
  rm -rf "$work"
  trap - EXIT
fi

# 3. The cluster: create it when absent, start it when down. initdb/pg_ctl refuse root, pg_ctlcluster does not.
# (Variables, not `| grep -q`: with pipefail, grep quitting early can fail the pipeline.)
cluster_field() { pg_lsclusters -h 2>/dev/null | awk -v v=$PG_MAJOR -v f="$1" '$1==v && $2=="main" {print $f}'; }
if [ -z "$(cluster_field 1)" ]; then
  say "creating cluster $PG_MAJOR/main"
  pg_createcluster $PG_MAJOR main --port 5432 >/dev/null
fi
case "$(cluster_field 4)" in
  online*) ;;
  *) say "starting cluster $PG_MAJOR/main"; pg_ctlcluster $PG_MAJOR main start ;;
esac
port=$(cluster_field 3)
for _ in $(seq 1 30); do
  runuser -u postgres -- psql -p "$port" -qAtc "select 1" >/dev/null 2>&1 && break
  sleep 1
done
psql_su() { runuser -u postgres -- psql -p "$port" -v ON_ERROR_STOP=1 -qAt "$@"; }
psql_su -c "select 1" >/dev/null || die "the cluster does not answer; see /var/log/postgresql/postgresql-$PG_MAJOR-main.log"

# 3b. Memory: HNSW and GIN lookups are fast only while the indexes sit in shared buffers (the default
# 128 MB holds ~1% of a million-node index; pages then come back from the OS cache, or the disk, on
# every query). A quarter of RAM (at most 8 GB) for shared buffers, half for the planner's cache estimate.
ram_mb=$(awk '/MemTotal/ {print int($2 / 1024)}' /proc/meminfo)
shared_mb=$(( ram_mb / 4 > 8192 ? 8192 : ram_mb / 4 ))
cache_mb=$(( ram_mb / 2 ))
if [ "$(psql_su -c "select setting::int * 8 / 1024 from pg_settings where name = 'shared_buffers'")" != "$shared_mb" ]; then
  say "shared_buffers = ${shared_mb}MB, effective_cache_size = ${cache_mb}MB (restarting the cluster)"
  psql_su -c "alter system set shared_buffers = '${shared_mb}MB'" -c "alter system set effective_cache_size = '${cache_mb}MB'"
  pg_ctlcluster $PG_MAJOR main restart
  for _ in $(seq 1 30); do
    runuser -u postgres -- psql -p "$port" -qAtc "select 1" >/dev/null 2>&1 && break
    sleep 1
  done
fi

# 4. Role, database and extension. The password is kept across runs so earlier settings stay valid.
if [ -s "$PASSWORD_FILE" ]; then
  password=$(head -n 1 "$PASSWORD_FILE")
else
  password=$(head -c 18 /dev/urandom | base64 | tr -d '/+=' | head -c 24)
  (umask 077 && printf '%s\n' "$password" >"$PASSWORD_FILE")
fi
# Readable by the user who invoked sudo (tests run as them); nobody else.
if [ -n "${SUDO_USER:-}" ] && [ "$SUDO_USER" != root ]; then chown "$SUDO_USER" "$PASSWORD_FILE"; fi
chmod 600 "$PASSWORD_FILE"

if [ "$(psql_su -c "select 1 from pg_roles where rolname = '$ROLE'")" != 1 ]; then
  say "creating role $ROLE"
  psql_su -c "create role $ROLE login createdb"
fi
# The password travels on stdin, never on a command line (where ps would show it).
case "$password" in *"'"* | *"\\"* | "") die "the password in $PASSWORD_FILE must be non-empty, without quotes or backslashes." ;; esac
printf "\\set pw '%s'\nalter role %s with login createdb password :'pw';\n" "$password" "$ROLE" | psql_su
if [ "$(psql_su -c "select 1 from pg_database where datname = '$DATABASE'")" != 1 ]; then
  say "creating database $DATABASE"
  psql_su -c "create database $DATABASE owner $ROLE"
fi
# CREATE EXTENSION needs a superuser; the role then uses the type without privileges of its own.
psql_su -d "$DATABASE" -c "set client_min_messages = warning" -c "create extension if not exists vector"
version=$(psql_su -d "$DATABASE" -c "select extversion from pg_extension where extname = 'vector'")

say "ready: PostgreSQL $PG_MAJOR on port $port, pgvector $version"
echo "CODEMEM_DB_URL=postgres://$ROLE@127.0.0.1:$port/$DATABASE"
echo "CODEMEM_DB_PASSWORD_FILE=$PASSWORD_FILE"
