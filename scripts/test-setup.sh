#!/usr/bin/env bash
# What the tests need beyond npm packages, installed or started only when missing (run by `npm test`, scripts/test.sh):
# Debian's Chromium (the canvas test drives it with playwright-core), nginx and openssl (the server
# test's auth_request proxy and TLS certificates), a JDK (the call-graph benchmark's Java truth), PostgreSQL 15 + pgvector (scripts/setup-postgres.sh).
# Installing needs root: run as root, or with passwordless sudo (used only when something is missing).
set -euo pipefail
cd "$(dirname "$0")/.."

say() { echo "test-setup: $*" >&2; }
as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"
  elif sudo -n true 2>/dev/null; then sudo -n "$@"
  else say "error: '$*' needs root. Run the tests as root or with passwordless sudo, or run it once yourself: sudo $*"; exit 1
  fi
}

missing=()
command -v chromium >/dev/null || missing+=(chromium)
{ command -v nginx || [ -x /usr/sbin/nginx ]; } >/dev/null || missing+=(nginx-light)
command -v openssl >/dev/null || missing+=(openssl)
command -v curl >/dev/null || missing+=(curl) # test/server/exposure.test.ts: requests as a second local user
command -v javac >/dev/null || missing+=(openjdk-17-jdk-headless) # test/bench/callgraph-java-truth.test.ts: the call-graph benchmark's Java truth
if [ ${#missing[@]} -gt 0 ]; then
  say "installing ${missing[*]}"
  as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# PostgreSQL: nothing to do when the cluster answers with the test role's password file in place.
state=$(command -v pg_lsclusters >/dev/null && pg_lsclusters -h 2>/dev/null | awk '$1==15 && $2=="main" {print $4}' || true)
if [ -s "${CODEMEM_PG_PASSWORD_FILE:-/tmp/codemem-pg-password}" ] && [[ "$state" == online* ]]; then
  exit 0
fi
as_root bash scripts/setup-postgres.sh >&2
