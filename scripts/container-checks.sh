#!/usr/bin/env bash
# CI: the container image and the compose file, on a machine whose only registries are Debian's and npm's.
# The base images are made here (deploy/base-image.sh, deploy/images/; kept between runs under a tag that
# is a hash of what makes them). Then: the image built, started, healthy, a job invoked through the API and
# its run succeeded in the sandbox inside, stopped by SIGTERM with exit code 0; compose with two instances
# on PostgreSQL behind the proxy, a job invoked through one instance and read through the other and the
# proxy, `down` and `up` again with the data kept, and `down -v` at the end. Compose's instances run with
# the local target's override (deploy/compose/local-agent.yaml), so their runs succeed in the sandbox too.
set -euo pipefail
cd "$(dirname "$0")/.."

say() { printf '%s\n' "-- $*" >&2; }
hash() { cat "$@" | sha256sum | cut -c1-12; }
free_port() { node -e 'const s = require("net").createServer().listen(0, "127.0.0.1", () => { console.log(s.address().port); s.close(); })'; }
# Waits until every container named is healthy: `healthy id …`.
healthy() {
  for _ in $(seq 1 120); do
    local all=yes
    for id in "$@"; do [ "$(docker inspect -f '{{.State.Health.Status}}' "$id")" = healthy ] || all=no; done
    [ $all = yes ] && return 0
    sleep 1
  done
  for id in "$@"; do docker logs --tail 30 "$id" >&2; done
  echo "!! not healthy within 2 minutes: $*" >&2
  return 1
}

base="flows-ci/node:22-$(hash deploy/base-image.sh)"
if ! docker image inspect "$base" >/dev/null 2>&1; then say "making $base"; deploy/base-image.sh "$base"; fi
image="flows-ci/flows:$(git rev-parse --short=12 HEAD)"
say "building $image"
docker build -q --build-arg BASE_IMAGE="$base" -t "$image" . >/dev/null
# The image of this commit and the untagged build stages go at the end (2–3 GB a run otherwise); the base
# images stay, named by what makes them.
cleanup() { docker rmi -f "$image" >/dev/null 2>&1 || true; docker image prune -f >/dev/null 2>&1 || true; }
docker image inspect -f '{{.Config.User}} {{json .Config.Healthcheck.Test}} {{json .Config.Cmd}}' "$image"
say "image size: $(docker image inspect -f '{{.Size}}' "$image" | awk '{ printf "%.0f MB", $1 / 1e6 }') (base: $(docker image inspect -f '{{.Size}}' "$base" | awk '{ printf "%.0f MB", $1 / 1e6 }'))"
# Repository workspaces clone and push with the image's git.
docker run --rm --entrypoint git "$image" --version

email=smoke@example.test password=smoke-password-$RANDOM$RANDOM
say "the image on its own"
port=$(free_port)
cid=$(docker run -d -p "127.0.0.1:$port:3000" -e BASE_URL="http://127.0.0.1:$port" \
  -e FLOWS_BOOTSTRAP_OWNER_EMAIL="$email" -e FLOWS_BOOTSTRAP_OWNER_PASSWORD="$password" -e FLOWS_LOCAL_AGENT_COMMAND=cat \
  --security-opt seccomp=unconfined --security-opt apparmor=unconfined --security-opt systempaths=unconfined "$image")
trap 'docker rm -f "$cid" >/dev/null 2>&1 || true; cleanup' EXIT
healthy "$cid"
node scripts/container-smoke.mjs --url "http://127.0.0.1:$port" --email "$email" --password "$password" >/dev/null
docker stop -t 20 "$cid" >/dev/null
[ "$(docker inspect -f '{{.State.ExitCode}}' "$cid")" = 0 ] || { docker logs --tail 20 "$cid" >&2; echo "!! the server did not exit 0 on SIGTERM" >&2; exit 1; }
docker logs "$cid" 2>&1 | grep -q '"msg":"shutting down"'
docker rm "$cid" >/dev/null

say "compose: two instances on PostgreSQL behind the proxy"
compose=(docker compose -f compose.yaml -f deploy/compose/local-agent.yaml)
export COMPOSE_PROJECT_NAME="flowsci$$" FLOWS_IMAGE="$image" FLOWS_BASE_IMAGE="$base" FLOWS_LOCAL_AGENT_COMMAND=cat
export FLOWS_POSTGRES_IMAGE="flows-ci/postgres:15-$(hash deploy/images/postgres.Dockerfile deploy/images/postgres-entrypoint.sh)"
export FLOWS_PROXY_IMAGE="flows-ci/nginx:$(hash deploy/images/nginx.Dockerfile)"
docker image inspect "$FLOWS_POSTGRES_IMAGE" >/dev/null 2>&1 || docker build -q --build-arg BASE_IMAGE="$base" -t "$FLOWS_POSTGRES_IMAGE" -f deploy/images/postgres.Dockerfile deploy/images >/dev/null
docker image inspect "$FLOWS_PROXY_IMAGE" >/dev/null 2>&1 || docker build -q --build-arg BASE_IMAGE="$base" -t "$FLOWS_PROXY_IMAGE" -f deploy/images/nginx.Dockerfile deploy/images >/dev/null
FLOWS_PORT=$(free_port)
export FLOWS_PORT FLOWS_URL="http://127.0.0.1:$FLOWS_PORT"
trap '"${compose[@]}" down -v >/dev/null 2>&1 || true; cleanup' EXIT
deploy/compose/secrets.sh >/dev/null
# Brings the project up and answers the addresses of its two instances.
up() {
  "${compose[@]}" up -d --no-build >&2
  mapfile -t instances < <("${compose[@]}" ps -q flows)
  [ "${#instances[@]}" = 2 ] || { echo "!! expected 2 instances, found ${#instances[@]}" >&2; exit 1; }
  healthy "${instances[@]}"
  for id in "${instances[@]}"; do echo "http://$(docker inspect -f '{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}' "$id"):3000"; done
  # The proxy answers once the instances do.
  for _ in $(seq 1 30); do curl -sf "$FLOWS_URL/readyz" >/dev/null && break; sleep 1; done
}
mapfile -t at < <(up)
docker exec "$("${compose[@]}" ps -q flows | head -1)" node dist/src/cli/owner-create.js --email "$email" --password "$password" >/dev/null
smoke=(node scripts/container-smoke.mjs --url "$FLOWS_URL" --email "$email" --password "$password")
run=$("${smoke[@]}" --via "${at[0]}" --read-url "${at[1]}" | tail -1)
"${smoke[@]}" >/dev/null # through the proxy
# Each instance counts the runs it ended, on its metrics port: the two runs between them.
ended=0
for address in "${at[@]}"; do
  count=$(curl -sf "${address%:3000}:9464/metrics" | awk '/^flows_runs_finished_total\{state="succeeded"\}/ { print int($2) }')
  ended=$((ended + ${count:-0}))
done
[ "$ended" = 2 ] || { echo "!! the instances' metrics count $ended succeeded runs, not 2" >&2; exit 1; }

say "compose: down and up again, the data kept"
"${compose[@]}" down >&2
mapfile -t at < <(up)
"${smoke[@]}" --via "${at[1]}" --run "$run" >/dev/null
"${compose[@]}" down -v >&2
say "container checks passed"
