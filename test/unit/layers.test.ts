// Layers point one way: a folder of src/ imports only from folders below it, so shared facts live where
// every user can reach them and no two folders depend on each other.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

const SRC = path.join(__dirname, '../../src');

/** Lowest first. A module may import from its own folder and from lower ranks only. */
const RANKS: Record<string, number> = {
  lib: 0,
  'config.ts': 1,
  db: 2,
  auth: 3,
  owners: 3,
  http: 4,
  oauth: 5,
  account: 5,
  pages: 6,
  // Domains, each above the ones it builds on: conditions and agents' streams stand alone, execution
  // targets run agents, jobs compile conditions and name targets and agents, runs start jobs on targets,
  // intake and events start and report runs. Each domain's console pages are drawn with the console's parts.
  triggers: 7,
  agents: 7,
  secrets: 7,
  integrations: 8,
  // Repositories: GitHub Apps and the workspaces runs clone, commit and push.
  repositories: 8,
  // Senders: the connections Flows answers a webhook sender with (Slack), and reporting there.
  senders: 8,
  jobs: 9,
  runs: 10,
  webhooks: 11,
  events: 11,
  // What runs spent, summed from their rows.
  usage: 11,
  // The surfaces over them, and the one place that wires them together.
  mcp: 12,
  metrics: 12,
  cli: 12,
  'domains.ts': 13,
  'app.ts': 14,
  'instance.ts': 15,
  'main.ts': 16,
};

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    return entry.isDirectory() ? sourceFiles(full) : entry.name.endsWith('.ts') ? [full] : [];
  });
}

/** `lib`, `config.ts`, …: the top-level entry of src/ a file belongs to. */
const layerOf = (file: string) => path.relative(SRC, file).split(path.sep)[0];

function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  return [...text.matchAll(/^(?:import|export)\b[^'";]*?from '(\.[^']+)'/gm)].map((m) => path.resolve(path.dirname(file), m[1]));
}

/** Folders of tenant data: they reach the database only through the tenant-bound client their callers hand them. */
const DOMAINS = new Set(['jobs', 'runs', 'triggers', 'webhooks', 'events', 'integrations', 'repositories', 'senders', 'secrets', 'mcp', 'usage']);
const RAW_CLIENT = path.join(SRC, 'db', 'client');

it('ranks every top-level entry of src/', () => {
  const entries = readdirSync(SRC);
  expect(entries.filter((entry) => RANKS[entry] === undefined)).toEqual([]);
});

it('has no import from a higher or equal layer of another folder', () => {
  const violations: string[] = [];
  for (const file of sourceFiles(SRC)) {
    const from = layerOf(file);
    for (const target of importsOf(file)) {
      if (!target.startsWith(SRC)) continue;
      const to = layerOf(target.endsWith('.ts') ? target : `${target}.ts`);
      if (to !== from && RANKS[to] >= RANKS[from]) violations.push(`${path.relative(SRC, file)} → ${path.relative(SRC, target)}`);
    }
  }
  expect(violations).toEqual([]);
});

/** A domain's work across tenants (sweeps, recovery) lives in its `<domain>-sweeps.ts`, the one file there given the raw client. */
const isSweeps = (file: string) => file.endsWith('-sweeps.ts');

it('keeps the raw database client out of the domain folders, but for their sweeps', () => {
  const offenders = sourceFiles(SRC)
    .filter((file) => DOMAINS.has(layerOf(file)) && !isSweeps(file))
    .filter((file) => importsOf(file).some((target) => target === RAW_CLIENT) || /\bforTenant\(/.test(readFileSync(file, 'utf8')))
    .map((file) => path.relative(SRC, file));
  expect(offenders).toEqual([]);
});
