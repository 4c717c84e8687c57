#!/usr/bin/env bash
# Installs what the PostgreSQL tests need (make test runs it), idempotently:
# Debian's postgresql package, whose server binaries (initdb, postgres in
# /usr/lib/postgresql/<major>/bin) internal/pgtest runs as throwaway servers
# of its own (in temporary folders, on free loopback ports). apt-get installs
# it when missing (needs root, as CI has; otherwise it says what to run).
#
# The package's default cluster is not used. Installing the package creates
# it (postgresql-common's postinst), but this script keeps it from being
# started: during the install a policy-rc.d that answers 101 ("action
# forbidden") is put in place unless the machine already has one, and removed
# afterwards.
#
# Under root the tests run the server as the package's postgres user, so the
# script also installs the package when that user is missing.
# Already satisfied: $RERANKD_PG_BIN, or any /usr/lib/postgresql/*/bin, or
# postgres on PATH, holding initdb and postgres (the harness's own search,
# internal/pgtest.Available).
# Prints RERANKD_PG_BIN=... (the folder the tests use; they find it by
# themselves, newest major first).
set -euo pipefail
die() { echo "setup_postgres: $*" >&2; exit 1; }

has_server() { [ -x "$1/initdb" ] && [ -x "$1/postgres" ]; }

# bin_dir prints the folder the tests would use, as Available does.
bin_dir() {
  if [ -n "${RERANKD_PG_BIN:-}" ]; then
    has_server "$RERANKD_PG_BIN" && echo "$RERANKD_PG_BIN"
    return
  fi
  local d
  d=$(for b in /usr/lib/postgresql/*/bin; do has_server "$b" && echo "$b"; done |
    sort -t/ -k5,5V | tail -n 1)
  if [ -z "$d" ] && command -v postgres >/dev/null; then
    d=$(dirname "$(readlink -f "$(command -v postgres)")")
    has_server "$d" || d=""
  fi
  [ -n "$d" ] && echo "$d"
}

need_user() { [ "$(id -u)" = 0 ] && ! getent passwd postgres >/dev/null; }

if ! bin_dir >/dev/null || need_user; then
  [ -z "${RERANKD_PG_BIN:-}" ] || bin_dir >/dev/null ||
    die "RERANKD_PG_BIN=$RERANKD_PG_BIN holds no initdb and postgres"
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "setup_postgres: installing Debian's postgresql (once)" >&2
    export DEBIAN_FRONTEND=noninteractive
    policy=/usr/sbin/policy-rc.d
    if [ ! -e "$policy" ]; then
      trap 'rm -f "$policy"' EXIT
      trap 'exit 1' INT TERM HUP
      printf '#!/bin/sh\n# scripts/setup_postgres.sh: no service starts during its install\nexit 101\n' >"$policy"
      chmod 755 "$policy"
    fi
    apt-get install -y -qq --no-install-recommends postgresql >/dev/null 2>&1 ||
      { apt-get update -qq >/dev/null && apt-get install -y -qq --no-install-recommends postgresql >/dev/null; } ||
      die "could not install postgresql with apt-get"
  elif need_user; then
    die "running as root, the tests need the postgres user that Debian's postgresql package creates: install it with apt-get install postgresql"
  else
    die "PostgreSQL server binaries (initdb, postgres) are missing: run 'sudo apt-get install postgresql'"
  fi
  bin_dir >/dev/null || die "postgresql installed, but no /usr/lib/postgresql/*/bin holds initdb and postgres"
fi
echo "RERANKD_PG_BIN=$(bin_dir)"
