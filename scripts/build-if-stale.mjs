// Builds dist/ with tsc only when a source is newer than the last build, so `npm start` pays for a build
// once after install or a change, not on every start; regenerates the database clients first when the
// models changed (after a pull).
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '..');
const stamp = path.join(root, 'dist', '.build-stamp');
const SOURCES = ['src', 'generated', 'openapi', 'tsconfig.json', 'tsconfig.build.json', 'package-lock.json'];

function newest(entry) {
  const stat = statSync(entry);
  if (!stat.isDirectory()) return stat.mtimeMs;
  return readdirSync(entry).reduce((max, name) => Math.max(max, newest(path.join(entry, name))), stat.mtimeMs);
}

// A checkout that pulled new models needs new database clients before anything compiles against them.
const models = path.join(root, 'prisma', 'models.prisma');
const client = path.join(root, 'generated', 'prisma', 'sqlite');
if (!existsSync(client) || statSync(models).mtimeMs > newest(client)) {
  console.error('Generating the database clients (the models changed)…');
  execFileSync(process.execPath, [path.join(root, 'scripts', 'generate.mjs'), '--prisma-only'], { stdio: 'inherit' });
}

const sourcesChanged = SOURCES.map((entry) => path.join(root, entry)).filter(existsSync).reduce((max, entry) => Math.max(max, newest(entry)), 0);
if (existsSync(stamp) && statSync(stamp).mtimeMs >= sourcesChanged) process.exit(0);

console.error('Building (sources changed since the last build)…');
execFileSync(process.execPath, [path.join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', path.join(root, 'tsconfig.build.json')], { stdio: 'inherit' });
writeFileSync(stamp, `${new Date().toISOString()}\n`);
