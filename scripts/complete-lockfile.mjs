// Records the other platforms' native binaries in package-lock.json.
//
// npm only writes a lock entry for an optional platform package it could
// fetch; on a registry mirror that carries only this machine's platform,
// packages such as @swc/core-darwin-arm64 are left out and `npm ci` then
// refuses the lock as out of sync. Each missing optional dependency gets an
// entry carrying the os/cpu/libc its name declares, so npm skips it on every
// other platform without fetching it. Run after `npm install` changes the lock.
import { readFileSync, writeFileSync } from 'node:fs';

const LOCK = new URL('../package-lock.json', import.meta.url);

const OS = ['darwin', 'linux', 'win32', 'android', 'freebsd', 'openharmony', 'sunos', 'aix', 'netbsd', 'openbsd'];
const CPU = { arm64: 'arm64', aarch64: 'arm64', x64: 'x64', ia32: 'ia32', arm: 'arm', ppc64: 'ppc64', s390x: 's390x', riscv64: 'riscv64', loong64: 'loong64', wasm32: 'wasm32' };

/** The platform a binary package's name declares, or undefined when the name declares none. */
export function platformOf(name) {
  const parts = name.split('/').pop().split('-');
  const os = parts.find((part) => OS.includes(part));
  const cpuPart = parts.find((part) => part in CPU || part.startsWith('arm'));
  if (!os || !cpuPart) return undefined;
  const cpu = CPU[cpuPart] ?? 'arm';
  const platform = { os: [os], cpu: [cpu] };
  if (os === 'linux') {
    if (parts.some((part) => part.startsWith('musl'))) platform.libc = ['musl'];
    else if (parts.some((part) => part.startsWith('gnu') || part === 'glibc')) platform.libc = ['glibc'];
  }
  return platform;
}

function complete(lock) {
  const added = [];
  for (const [path, entry] of Object.entries(lock.packages)) {
    for (const [name, version] of Object.entries(entry.optionalDependencies ?? {})) {
      const parent = path === '' ? '' : `${path}/`;
      const nested = `${parent}node_modules/${name}`;
      const hoisted = `node_modules/${name}`;
      if (lock.packages[nested] || lock.packages[hoisted]) continue;
      const platform = platformOf(name);
      if (!platform) throw new Error(`${name}: cannot tell its platform from its name; add its lock entry by hand`);
      lock.packages[hoisted] = { version, optional: true, ...platform };
      added.push(`${name}@${version}`);
    }
  }
  lock.packages = Object.fromEntries(Object.entries(lock.packages).sort(([a], [b]) => (a === '' ? -1 : b === '' ? 1 : a.localeCompare(b))));
  return added;
}

const lock = JSON.parse(readFileSync(LOCK, 'utf8'));
const added = complete(lock);
writeFileSync(LOCK, `${JSON.stringify(lock, null, 2)}\n`);
console.log(added.length ? `added ${added.length} platform entries:\n  ${added.join('\n  ')}` : 'package-lock.json already complete');
