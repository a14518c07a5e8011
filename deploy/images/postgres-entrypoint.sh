#!/bin/sh
# Makes the cluster on first start (the user with its password, the database), then runs the server in the
# foreground, as the public image's entrypoint does.
set -eu
user=${POSTGRES_USER:-postgres}
password=${POSTGRES_PASSWORD:-}
[ -n "${POSTGRES_PASSWORD_FILE:-}" ] && password=$(cat "$POSTGRES_PASSWORD_FILE")
if [ ! -s "$PGDATA/PG_VERSION" ]; then
  [ -n "$password" ] || { echo "POSTGRES_PASSWORD or POSTGRES_PASSWORD_FILE is required" >&2; exit 1; }
  pwfile=$(mktemp)
  printf '%s\n' "$password" >"$pwfile"
  initdb -D "$PGDATA" -U "$user" --pwfile="$pwfile" --auth-local=trust --auth-host=scram-sha-256 >/dev/null
  rm -f "$pwfile"
  echo "host all all all scram-sha-256" >>"$PGDATA/pg_hba.conf"
  pg_ctl -D "$PGDATA" -w -o "-c listen_addresses='' -k /tmp" start >/dev/null
  [ "${POSTGRES_DB:-$user}" = postgres ] || createdb -h /tmp -U "$user" "${POSTGRES_DB:-$user}"
  pg_ctl -D "$PGDATA" -w stop >/dev/null
fi
exec postgres -D "$PGDATA" -c listen_addresses='*' -k /tmp
