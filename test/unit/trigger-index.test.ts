// The trigger index leaves out only triggers certain to miss: over generated triggers and deliveries, the
// decisions and the count of misses through the index are a full scan's, exactly and in order; and by
// example, what it skips and what it never skips (conditions that could end in an error).
import { indexJobs, type WebhookCandidate } from '../../src/jobs/jobs-catalog';
import type { JobRow } from '../../src/jobs/jobs-repo';
import { prepareConditions } from '../../src/triggers/conditions-fns';
import { indexTriggers } from '../../src/triggers/trigger-index-fns';
import { decideCandidates, decideIndexed } from '../../src/triggers/acts-fns';

const candidate = (id: string, events: string[], conditions?: unknown): WebhookCandidate => ({ id, job: { id: `job_${id}` } as JobRow, events, conditions: prepareConditions(conditions) });

/** Both ways of deciding, side by side. */
function bothWays(candidates: WebhookCandidate[], name: string, context: Record<string, unknown>) {
  return { scanned: decideCandidates(candidates, name, context), indexed: decideIndexed(indexTriggers(candidates), name, context) };
}

/** mulberry32: the same cases on every run, and a failing seed can be replayed. */
function random(seed: number) {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)];
  const chance = (p: number) => next() < p;
  const some = <T>(max: number, make: () => T) => Array.from({ length: Math.floor(next() * (max + 1)) }, make);
  return { pick, chance, some };
}
type Random = ReturnType<typeof random>;

const NAMES = ['push', 'issues.labeled', 'issues.opened', 'pull_request.closed'];
const PATTERNS = [...NAMES, 'issues.*', '*', '*.labeled', 'pu*', 'nothing'];
const PATHS = ['action', 'payload.n', 'payload.s', 'payload.b', 'payload.labels[*].name', 'payload.labels[0].name', 'payload.obj', 'payload.nums[*]', 'payload.missing', 'payload.repo.full_name'];
/** Numbers, strings that spell them, booleans and their spellings, case, null, objects and arrays. */
const LITERALS = [0, 1, 2, '1', '2', true, false, 'true', null, 'a', 'A', 'b', 'labeled', 'acme/x', { x: 1 }, [1], ['a'], 1.5];
const REGEXES = ['^a', 'a|b', '^[0-9]+$', '(?=a)'];
const CEL = ['payload.n > 1', 'payload.s == "a"', 'payload.missing.x == 1', 'true', 'size(payload.labels) > 1', 'payload.n'];

function leafOf(r: Random) {
  const op = r.pick(['eq', 'eq', 'eq', 'in', 'in', 'neq', 'nin', 'contains', 'exists', 'matches', 'startsWith'] as const);
  const path = r.pick(PATHS);
  switch (op) {
    case 'in':
    case 'nin':
      // Now and then not an array: conditions that do not compile.
      return { path, op, value: r.chance(0.05) ? 'a' : r.some(3, () => r.pick(LITERALS)) };
    case 'matches':
      return { path, op, value: r.pick(REGEXES) };
    case 'startsWith':
      return { path, op, value: r.pick(['a', 'ac', 1]) };
    case 'exists':
      return r.chance(0.5) ? { path, op } : { path, op, value: r.pick([true, false]) };
    default:
      return { path, op, value: r.pick(LITERALS) };
  }
}

function conditionsOf(r: Random): unknown {
  if (r.chance(0.1)) return undefined;
  const conditions: Record<string, unknown> = {};
  for (const part of ['all', 'all', 'any', 'none']) if (r.chance(part === 'all' ? 0.6 : 0.25)) conditions[part] = [...((conditions[part] as unknown[]) ?? []), ...r.some(3, () => leafOf(r))];
  if (r.chance(0.15)) conditions.if = r.pick(CEL);
  return conditions;
}

const triggersOf = (r: Random, count: number) => Array.from({ length: count }, (_, i) => candidate(`trg_${i}`, r.some(2, () => r.pick(PATTERNS)).concat(r.pick(PATTERNS)), conditionsOf(r)));

function contextOf(r: Random): { name: string; context: Record<string, unknown> } {
  const name = r.chance(0.9) ? r.pick(NAMES) : 'issues.closed';
  const payload: Record<string, unknown> = {};
  for (const key of ['n', 's', 'b', 'obj']) if (r.chance(0.7)) payload[key] = r.pick(LITERALS);
  if (r.chance(0.7)) payload.labels = r.some(3, () => (r.chance(0.9) ? { name: r.pick(LITERALS) } : r.pick(LITERALS)));
  if (r.chance(0.5)) payload.nums = r.some(3, () => r.pick(LITERALS));
  if (r.chance(0.5)) payload.repo = { full_name: r.pick(LITERALS) };
  const [event, action = null] = name.split('.');
  return { name, context: { event, ...(r.chance(0.9) ? { action } : {}), payload } };
}

describe('deciding through the index', () => {
  it('gives the decisions and misses of a full scan, for generated triggers and deliveries', () => {
    let visited = 0;
    let total = 0;
    const seen = new Set<string>();
    for (let seed = 1; seed <= 300; seed++) {
      const r = random(seed);
      const candidates = triggersOf(r, 40);
      const index = indexTriggers(candidates);
      for (let delivery = 0; delivery < 20; delivery++) {
        const { name, context } = contextOf(r);
        const scanned = decideCandidates(candidates, name, context);
        const indexed = decideIndexed(index, name, context);
        // The seed names a failing case.
        expect({ seed, delivery, ...indexed }).toEqual({ seed, delivery, ...scanned });
        for (const { decision } of scanned.decided) seen.add(decision.decision);
        visited += index.candidatesFor(name, context).candidates.length;
        total += candidates.length;
      }
    }
    // The cases reach every decision, and the index leaves most triggers out.
    expect([...seen].sort()).toEqual(['error', 'match']);
    expect(visited / total).toBeLessThan(0.5);
  });

  it('counts as events-matching the triggers a full scan keeping its misses lists, and visits no more', () => {
    for (let seed = 1; seed <= 50; seed++) {
      const r = random(seed);
      const candidates = triggersOf(r, 40);
      const { name, context } = contextOf(r);
      const { candidates: visit, eventsMatched } = indexTriggers(candidates).candidatesFor(name, context);
      const listed = decideCandidates(candidates, name, context, true).decided.map(({ candidate }) => candidate);
      expect(eventsMatched).toBe(listed.length);
      expect(listed.filter((c) => visit.includes(c))).toEqual(visit);
    }
  });
});

describe('the index by example', () => {
  const visits = (candidates: WebhookCandidate[], name: string, context: Record<string, unknown>) => indexTriggers(candidates).candidatesFor(name, context);
  const ids = (found: { candidates: WebhookCandidate[] }) => found.candidates.map((c) => c.id);

  it('visits only the trigger wanting the delivery\'s literal among many, and counts the others as misses', () => {
    const candidates = Array.from({ length: 1000 }, (_, i) => candidate(`trg_${i}`, ['issues.labeled'], { all: [{ path: 'payload.repository.full_name', op: 'eq', value: `acme/repo-${i}` }] }));
    const context = { payload: { repository: { full_name: 'acme/repo-417' } } };
    expect(ids(visits(candidates, 'issues.labeled', context))).toEqual(['trg_417']);
    const { indexed, scanned } = bothWays(candidates, 'issues.labeled', context);
    expect(indexed).toEqual(scanned);
    expect(indexed.misses).toBe(999);
  });

  it('tells a number from a string that spells it, and keeps case', () => {
    const candidates = [
      candidate('number', ['push'], { all: [{ path: 'payload.n', op: 'eq', value: 1 }] }),
      candidate('string', ['push'], { all: [{ path: 'payload.n', op: 'eq', value: '1' }] }),
      candidate('boolean', ['push'], { all: [{ path: 'payload.n', op: 'in', value: [true, 'A'] }] }),
    ];
    expect(ids(visits(candidates, 'push', { payload: { n: '1' } }))).toEqual(['string']);
    expect(ids(visits(candidates, 'push', { payload: { n: 'a' } }))).toEqual([]);
    expect(ids(visits(candidates, 'push', { payload: { n: 'A' } }))).toEqual(['boolean']);
  });

  it('visits a trigger when any value under [*] is one it wants, once, in the order of the triggers', () => {
    const candidates = [
      candidate('agent', ['issues.labeled'], { all: [{ path: 'payload.labels[*].name', op: 'in', value: ['agent', 'bug'] }] }),
      candidate('docs', ['issues.labeled'], { all: [{ path: 'payload.labels[*].name', op: 'eq', value: 'docs' }] }),
      candidate('free', ['issues.labeled'], { all: [{ path: 'payload.labels[*].name', op: 'contains', value: 'x' }] }),
    ];
    const context = { payload: { labels: [{ name: 'bug' }, { name: 'agent' }, { name: 'bug' }] } };
    expect(ids(visits(candidates, 'issues.labeled', context))).toEqual(['agent', 'free']);
  });

  it('matches glob patterns one by one, and counts as misses only triggers whose events match', () => {
    const candidates = [
      candidate('issues', ['issues.*'], { all: [{ path: 'payload.s', op: 'eq', value: 'x' }] }),
      candidate('push', ['push'], { all: [{ path: 'payload.s', op: 'eq', value: 'x' }] }),
      candidate('any', ['*'], { all: [{ path: 'payload.s', op: 'eq', value: 'y' }] }),
    ];
    const found = visits(candidates, 'issues.opened', { payload: { s: 'y' } });
    expect([ids(found), found.eventsMatched]).toEqual([['any'], 2]);
    expect(bothWays(candidates, 'issues.opened', { payload: { s: 'y' } }).indexed).toMatchObject({ misses: 1 });
  });

  it('never skips for a literal a trigger whose conditions end in an error: an `if` failing on the delivery, leaves that could', () => {
    const wrong = { path: 'payload.s', op: 'eq', value: 'never' };
    const candidates = [
      candidate('cel', ['push'], { all: [wrong], if: 'payload.missing.x == 1' }),
      candidate('cel-holding', ['push'], { all: [wrong], if: 'payload.s == "x"' }),
      candidate('matches', ['push'], { all: [wrong, { path: 'payload.body', op: 'matches', value: '(?:a[ab]{0,10}){10}[^ab]' }] }),
      candidate('broken', ['push'], { all: [wrong, { path: 'payload.s', op: 'in', value: 'not an array' }] }),
      candidate('plain', ['push'], { all: [wrong] }),
    ];
    const context = { payload: { s: 'x', body: 'ab'.repeat(100_000) } };
    expect(ids(visits(candidates, 'push', context))).toEqual(['cel', 'matches', 'broken']);
    const { indexed, scanned } = bothWays(candidates, 'push', context);
    expect(indexed).toEqual(scanned);
    expect(indexed.decided.map(({ decision }) => decision.decision)).toEqual(['error', 'error', 'error']);
    expect(indexed.misses).toBe(2);
  });

  it('always visits a trigger without conditions or without an equality in `all`', () => {
    const candidates = [candidate('bare', ['push']), candidate('any', ['push'], { any: [{ path: 'payload.s', op: 'eq', value: 'x' }] }), candidate('object', ['push'], { all: [{ path: 'payload.o', op: 'eq', value: { a: 1 } }] })];
    expect(ids(visits(candidates, 'push', { payload: {} }))).toEqual(['bare', 'any', 'object']);
  });
});

describe('the catalog', () => {
  it('indexes a source\'s candidates once, on first use, and an unknown source as having none', () => {
    const trigger = (id: string, value: string) => ({ id, type: 'webhook', enabled: true, sourceId: 'src', watchedJobId: null, config: { events: ['push'], conditions: { all: [{ path: 'payload.s', op: 'eq', value }] } } });
    const live = indexJobs([{ id: 'job_a', slug: 'a', enabled: true, triggers: [trigger('trg_x', 'x'), trigger('trg_y', 'y')] } as unknown as JobRow]);
    expect(live.webhookIndex('src')).toBe(live.webhookIndex('src'));
    expect(live.webhookIndex('src').candidatesFor('push', { payload: { s: 'y' } })).toEqual({ candidates: [live.webhookCandidates('src')[1]], eventsMatched: 2 });
    expect(live.webhookIndex('other').candidatesFor('push', {})).toEqual({ candidates: [], eventsMatched: 0 });
  });
});
