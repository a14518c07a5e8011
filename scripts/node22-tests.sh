#!/usr/bin/env bash
# CI: the test suite again on Node 22, on SQLite. Node 22 is the registry's node-<platform>-<arch> package
# (the binary and its headers, no install script), kept outside the lockfile in node_modules/.cache/node22;
# the suite runs in a clone of this checkout whose dependencies Node 22's npm installed, so that
# better-sqlite3 is compiled for Node 22 (against the headers of that package).
set -euo pipefail
cd "$(dirname "$0")/.."
version=22.23.3
package="node-$(node -p 'process.platform')-$(node -p 'process.arch')"
cache="$PWD/node_modules/.cache/node22"
node22="$cache/node_modules/$package"
if [ "$("$node22/bin/node" --version 2>/dev/null)" != "v$version" ]; then
  npm install --prefix "$cache" --no-save --no-package-lock --ignore-scripts "$package@$version" >/dev/null
fi
export PATH="$node22/bin:$PATH" npm_config_nodedir="$node22"
echo "node $(node --version), npm $(npm --version)"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# The sandboxed agents' user must reach the clone's CLIs, as in the checkout's own runs (mktemp makes 0700).
chmod 0755 "$work"
git clone -q . "$work/flows"
cd "$work/flows"
npm ci --no-audit --no-fund >/dev/null
node -e 'require("better-sqlite3")(":memory:").prepare("select 1").get()' # compiled for this Node
npm test
