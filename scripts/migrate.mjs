// `npm run migrate`: applies pending migrations to DATABASE_URL (default: the embedded SQLite file).
import { execFileSync } from 'node:child_process';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '..');
const url = process.env.DATABASE_URL || `file:${path.join(root, 'data', 'flows.db')}`;
const provider = url.startsWith('file:') ? 'sqlite' : /^postgres(ql)?:\/\//.test(url) ? 'postgresql' : null;
if (!provider) {
  console.error('DATABASE_URL must start with file: or postgres://');
  process.exit(1);
}
execFileSync(path.join(root, 'node_modules/.bin/prisma'), ['migrate', 'deploy', '--config', `prisma/${provider}/prisma.config.ts`], {
  cwd: root,
  env: { ...process.env, DATABASE_URL: url },
  stdio: 'inherit',
});
