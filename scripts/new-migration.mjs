// Authors a migration for every provider from the difference between the schema committed at HEAD and
// the current one: `npm run migration:new -- <name>`. (`migrate dev` and shadow databases cannot run
// with the offline JS engine; test/db/migrations.test.ts checks that the history reaches the models.)
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '..');
const name = process.argv[2];
if (!name || !/^[a-z0-9_]+$/.test(name)) {
  console.error('usage: npm run migration:new -- <name in snake_case>');
  process.exit(1);
}
const stamp = process.env.MIGRATION_STAMP ?? new Date().toISOString().replace(/\D/g, '').slice(0, 14);
const scratch = mkdtempSync(path.join(os.tmpdir(), 'flows-migration-'));
const urls = { sqlite: `file:${path.join(scratch, 'authoring.db')}`, postgresql: 'postgresql://postgres@127.0.0.1:5432/postgres' };

function committedSchema(provider) {
  const file = path.join(scratch, `${provider}.prisma`);
  writeFileSync(file, execFileSync('git', ['show', `HEAD:prisma/${provider}/schema.prisma`], { cwd: root, encoding: 'utf8' }));
  return file;
}

for (const provider of ['sqlite', 'postgresql']) {
  const dir = path.join(root, 'prisma', provider, 'migrations');
  const hasHistory = existsSync(dir) && readdirSync(dir).some((entry) => /^\d{14}_/.test(entry));
  const from = hasHistory ? ['--from-schema-datamodel', committedSchema(provider)] : ['--from-empty'];
  const sql = execFileSync(
    path.join(root, 'node_modules/.bin/prisma'),
    ['migrate', 'diff', ...from, '--to-schema-datamodel', `prisma/${provider}/schema.prisma`, '--script', '--config', `prisma/${provider}/prisma.config.ts`],
    { cwd: root, env: { ...process.env, DATABASE_URL: urls[provider] }, encoding: 'utf8' },
  );
  if (!/\b(CREATE|ALTER|DROP)\b/.test(sql)) {
    console.log(`${provider}: no changes`);
    continue;
  }
  const target = path.join(dir, `${stamp}_${name}`);
  mkdirSync(target, { recursive: true });
  writeFileSync(path.join(target, 'migration.sql'), sql);
  if (!hasHistory) writeFileSync(path.join(dir, 'migration_lock.toml'), `provider = "${provider}"\n`);
  console.log(`${provider}: wrote ${path.relative(root, target)}/migration.sql`);
}
