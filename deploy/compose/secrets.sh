#!/usr/bin/env bash
# Makes the secrets compose.yaml reads, once: the PostgreSQL password, the database URL with it, and Flows'
# secret key. Existing files are kept (a new key would make the stored secrets unreadable).
set -euo pipefail
dir="$(dirname "$0")/secrets"
mkdir -p "$dir"
chmod 0700 "$dir"
umask 0022 # read by the containers' own users
[ -s "$dir/postgres_password" ] || openssl rand -hex 24 >"$dir/postgres_password"
[ -s "$dir/database_url" ] || echo "postgresql://flows:$(cat "$dir/postgres_password")@postgres:5432/flows" >"$dir/database_url"
[ -s "$dir/flows_secret_key" ] || openssl rand -hex 32 >"$dir/flows_secret_key"
echo "secrets in $dir"
