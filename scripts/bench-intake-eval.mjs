// `node scripts/bench-intake-eval.mjs`: what deciding one delivery against its source's triggers costs,
// measured in process. The app is built from dist/ (run `npm run build` first) on a fresh embedded
// database, the `intake` row's 1,000 triggers are made through its API, then BENCH_EVAL_DELIVERIES (2,000)
// distinct signed deliveries to that row's source are verified and prepared as intake does it (not timed)
// and decided by the function the webhooks service's background evaluation calls, `decideDelivery` (timed):
// for each of the source's 50 enabled triggers, read once as that evaluation reads them, its event
// patterns, then its conditions, with the details recorded. The database calls around it (reading the
// triggers, starting the matched runs, saving the decisions) are not timed, though reading the triggers is
// timed apart for scale. Prints one line, then one JSON line for scripts/bench.mjs.
//
// Then the indexed path on one large source: the catalog is built in process by `indexJobs` from dist/
// over synthetic job rows (10,000 triggers made over HTTP would take minutes), in the style of the intake
// row: `issues.labeled` triggers each wanting a label of its own at `payload.label.name`, 5 wanting the
// delivery's, every fifth with a CEL `if`. BENCH_EVAL_INDEXED_DELIVERIES (5,000) deliveries, prepared as above, are each decided by
// `decideIndexed` (timed; the source's index is built by the untimed first ones) among 100 and among
// 10,000 triggers, alternately so that the machine's other work weighs on both alike. A full scan of the
// 10,000 (`decideCandidates`) is timed on a few for scale. `node scripts/bench-intake-eval.mjs indexed`
// measures only this. Prints one line, then one JSON line.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { buildWithBearer, dist, openApp } from './bench-app.mjs';
import { MATCHING, PER_SOURCE, setUpIntake, signedDelivery } from './bench-intake.mjs';

const DELIVERIES = Number(process.env.BENCH_EVAL_DELIVERIES ?? 2000);
/** Untimed first: the first delivery compiles each trigger's conditions (once per distinct text). */
const WARM_UP = 200;
const READS = 200;
const TARGET_P99_MS = 2;

const INDEXED_DELIVERIES = Number(process.env.BENCH_EVAL_INDEXED_DELIVERIES ?? 5000);
const INDEXED_SIZES = [100, 10_000];
const SCANNED = 100;
const TARGET_INDEXED_P50_US = 100;
const TARGET_INDEXED_RATIO = 2;

const { verifyDelivery, webhookContext } = dist('src/webhooks/webhooks-fns.js');
const { decideCandidates, decideDelivery, decideIndexed } = dist('src/triggers/acts-fns.js');
const { indexJobs } = dist('src/jobs/jobs-catalog.js');
const { eventName } = dist('src/triggers/event-patterns-fns.js');
const { forTenant } = dist('src/db/tenant-scope.js');

/** What `evaluate` in src/triggers/webhook-evaluation.ts decides, without its database calls around it. */
function decided(triggers, context) {
  const decisions = decideDelivery(triggers, eventName(context.event, context.action), context);
  return { decided: decisions.length, matched: decisions.filter(({ decision }) => decision.decision === 'match').length };
}

/** The context evaluation reads back from the delivery's activity record. */
function contextOf(source, secret) {
  const { headers, body } = signedDelivery({ signingSecret: secret });
  const raw = Buffer.from(body);
  const receivedAt = new Date();
  const delivery = verifyDelivery({ format: source.format, secret, signatureHeader: source.signatureHeader, headers, raw, now: receivedAt.getTime() });
  if ('refused' in delivery) throw new Error(`the delivery did not verify: ${delivery.message}`);
  return JSON.parse(JSON.stringify(webhookContext(source, delivery, headers, receivedAt)));
}

const percentile = (sorted, p) => sorted[Math.max(0, Math.ceil(p * sorted.length) - 1)];
const ms = (value) => Number(value.toFixed(3));

async function measure(dir) {
  const opened = await openApp(dir);
  const { built, bearer } = await buildWithBearer(opened);
  const server = built.app.listen(0, '127.0.0.1');
  try {
    await new Promise((resolve) => server.once('listening', resolve));
    const target = await setUpIntake(`http://127.0.0.1:${server.address().port}`, bearer);
    const source = await opened.db.webhookSource.findFirst({ where: { id: target.id } });
    const tenantDb = forTenant(opened.db, source.tenantId);
    // The source's enabled triggers of live, enabled jobs read as rows (evaluation takes them from the catalog kept in memory, jobs-catalog.ts).
    const webhookTriggers = (sourceId) =>
      tenantDb.trigger.findMany({ where: { sourceId, type: 'webhook', enabled: true, job: { enabled: true, deletedAt: null } }, include: { job: true }, orderBy: [{ jobId: 'asc' }, { position: 'asc' }] });
    const triggers = await webhookTriggers(source.id);
    if (triggers.length !== PER_SOURCE) throw new Error(`source ${source.id} has ${triggers.length} enabled webhook triggers, not ${PER_SOURCE}`);

    const times = [];
    let first = null;
    for (let i = 0; i < WARM_UP + DELIVERIES; i++) {
      const context = contextOf(source, target.signingSecret);
      const start = performance.now();
      const { decided: count, matched } = decided(triggers, context);
      const took = performance.now() - start;
      if (count !== PER_SOURCE || matched !== MATCHING) throw new Error(`delivery ${i}: ${count} triggers decided and ${matched} matched, not ${PER_SOURCE} and ${MATCHING}`);
      first ??= took;
      if (i >= WARM_UP) times.push(took);
    }
    times.sort((x, y) => x - y);

    const reads = [];
    for (let i = 0; i < READS; i++) {
      const start = performance.now();
      await webhookTriggers(source.id);
      reads.push(performance.now() - start);
    }
    reads.sort((x, y) => x - y);
    return {
      deliveries: DELIVERIES,
      candidates: PER_SOURCE,
      matching: MATCHING,
      p50Ms: ms(percentile(times, 0.5)),
      p99Ms: ms(percentile(times, 0.99)),
      maxMs: ms(times.at(-1)),
      firstMs: ms(first),
      readP50Ms: ms(percentile(reads, 0.5)),
      readP99Ms: ms(percentile(reads, 0.99)),
    };
  } finally {
    await new Promise((resolve) => server.close(resolve));
    await opened.db.$disconnect();
  }
}

/** The figure as one line, which scripts/bench.mjs prints too. */
function describe(r) {
  const met = r.p99Ms <= TARGET_P99_MS ? 'met' : '**NOT met**';
  return (
    `intake evaluation in process, ${r.deliveries} deliveries × ${r.candidates} candidate triggers (${r.matching} match): ` +
    `p50 ${r.p50Ms} ms, p99 ${r.p99Ms} ms per delivery (target p99 ≤ ${TARGET_P99_MS} ms: ${met}); first delivery ${r.firstMs} ms (compiles); ` +
    `reading the candidates, not included: p50 ${r.readP50Ms} ms, p99 ${r.readP99Ms} ms`
  );
}

/** `count` triggers on one source as the catalog reads them: jobs of 50, `MATCHING` of them spread out wanting the deliveries' label. */
function syntheticJobs(count, sourceId) {
  const jobs = [];
  for (let i = 0; i < count; i++) {
    if (i % 50 === 0) jobs.push({ id: `job_${String(i / 50).padStart(4, '0')}`, slug: `job-${i / 50}`, enabled: true, triggers: [] });
    const label = i % (count / MATCHING) === 0 ? 'agent' : `label-${i}`;
    // Every fifth with a CEL `if`, as in the e2e row: the index evaluates each distinct expression once per delivery.
    const config = { events: ['issues.labeled'], conditions: { all: [{ path: 'payload.label.name', op: 'eq', value: label }], ...(i % 5 === 4 ? { if: "payload.label.name != 'wontfix'" } : {}) } };
    jobs.at(-1).triggers.push({ id: `trg_${i}`, type: 'webhook', enabled: true, sourceId, watchedJobId: null, config });
  }
  return jobs;
}

const us = (valueMs) => Number((valueMs * 1000).toFixed(1));

function measureIndexed() {
  const source = { id: 'src_bench', format: 'github', signatureHeader: null };
  const secret = 'bench signing secret';
  const contexts = Array.from({ length: WARM_UP + INDEXED_DELIVERIES }, () => contextOf(source, secret));
  const name = eventName(contexts[0].event, contexts[0].action);
  const sizes = INDEXED_SIZES.map((count) => ({ count, live: indexJobs(syntheticJobs(count, source.id)), times: [] }));
  const check = (count, { decided, misses }, i) => {
    const matched = decided.filter(({ decision }) => decision.decision === 'match').length;
    if (matched !== MATCHING || misses !== count - MATCHING) throw new Error(`delivery ${i} among ${count}: ${matched} matched and ${misses} missed, not ${MATCHING} and ${count - MATCHING}`);
  };
  const indexMs = {};
  contexts.forEach((context, i) => {
    for (const { count, live, times } of sizes) {
      const start = performance.now();
      const outcome = decideIndexed(live.webhookIndex(source.id), name, context);
      const took = performance.now() - start;
      check(count, outcome, i);
      if (i === 0) indexMs[count] = ms(took);
      if (i >= WARM_UP) times.push(took);
    }
  });
  const largest = sizes.at(-1);
  const scans = contexts.slice(0, SCANNED).map((context, i) => {
    const start = performance.now();
    const outcome = decideCandidates(largest.live.webhookCandidates(source.id), name, context);
    const took = performance.now() - start;
    check(largest.count, outcome, i);
    return took;
  });
  scans.sort((x, y) => x - y);
  const figures = Object.fromEntries(
    sizes.map(({ count, times }) => {
      times.sort((x, y) => x - y);
      return [count, { p50Us: us(percentile(times, 0.5)), p99Us: us(percentile(times, 0.99)), firstMs: indexMs[count] }];
    }),
  );
  const [small, large] = INDEXED_SIZES.map((count) => figures[count]);
  return { deliveries: INDEXED_DELIVERIES, matching: MATCHING, sizes: figures, p50Ratio: Number((large.p50Us / small.p50Us).toFixed(2)), fullScanP50Us: us(percentile(scans, 0.5)) };
}

function describeIndexed(r) {
  const [small, large] = INDEXED_SIZES;
  const a = r.sizes[small];
  const b = r.sizes[large];
  const met = b.p50Us <= TARGET_INDEXED_P50_US && r.p50Ratio <= TARGET_INDEXED_RATIO ? 'met' : '**NOT met**';
  return (
    `intake evaluation through the trigger index, ${r.deliveries} deliveries on one source (${r.matching} match): ` +
    `among ${small.toLocaleString('en')} triggers p50 ${a.p50Us} µs, p99 ${a.p99Us} µs; among ${large.toLocaleString('en')} p50 ${b.p50Us} µs, p99 ${b.p99Us} µs; ` +
    `p50 ratio ${r.p50Ratio} (target p50 ≤ ${TARGET_INDEXED_P50_US} µs among ${large.toLocaleString('en')} and ratio ≤ ${TARGET_INDEXED_RATIO}: ${met}); ` +
    `first delivery, which builds the index: ${a.firstMs} ms and ${b.firstMs} ms; a full scan of the ${large.toLocaleString('en')}, for scale: p50 ${r.fullScanP50Us} µs`
  );
}

async function main() {
  if (process.argv[2] !== 'indexed') {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'flows-intake-eval-'));
    try {
      const result = await measure(dir);
      console.log(describe(result));
      console.log(JSON.stringify({ bench: 'intake-eval', ...result }));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  const indexed = measureIndexed();
  console.log(describeIndexed(indexed));
  console.log(JSON.stringify({ bench: 'intake-eval-indexed', ...indexed }));
}

if (import.meta.filename === process.argv[1]) {
  main().catch((err) => {
    console.error(err);
    process.exitCode = 1;
  });
}
