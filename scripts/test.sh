#!/usr/bin/env bash
# `npm test`: installs and starts what the tests need (scripts/test-setup.sh), builds, runs vitest,
# then stops what it started. A PostgreSQL cluster that was already running is left running; one
# this run started is stopped again, whether the tests passed or not.
set -euo pipefail
cd "$(dirname "$0")/.."

pg_state() { command -v pg_lsclusters >/dev/null && pg_lsclusters -h 2>/dev/null | awk '$1==15 && $2=="main" {print $4}' || true; }
as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo -n "$@"; fi; }

before=$(pg_state)
stop_started() {
  if [[ "$before" != online* ]] && [[ "$(pg_state)" == online* ]]; then
    echo "test: stopping the PostgreSQL cluster this run started" >&2
    as_root pg_ctlcluster 15 main stop || echo "test: could not stop it: run 'pg_ctlcluster 15 main stop' as root" >&2
  fi
}
trap stop_started EXIT

bash scripts/test-setup.sh
npm run build
npx vitest run "$@"
