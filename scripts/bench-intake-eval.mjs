// `node scripts/bench-intake-eval.mjs`: what deciding one delivery against its source's triggers costs,
// measured in process. The app is built from dist/ (run `npm run build` first) on a fresh embedded
// database, the `intake` row's 1,000 triggers are made through its API, then BENCH_EVAL_DELIVERIES (2,000)
// distinct signed deliveries to that row's source are verified and prepared as intake does it (not timed)
// and decided by the function the webhooks service's background evaluation calls, `decideDelivery` (timed):
// for each of the source's 50 enabled triggers, read once as that evaluation reads them, its event
// patterns, then its conditions, with the details recorded. The database calls around it (reading the
// triggers, starting the matched runs, saving the decisions) are not timed, though reading the triggers is
// timed apart for scale. Prints one line, then one JSON line for scripts/bench.mjs.
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

const { decideDelivery, verifyDelivery, webhookContext } = dist('src/webhooks/webhooks-fns.js');
const { eventName } = dist('src/triggers/event-patterns-fns.js');
const { createWebhooksRepo } = dist('src/webhooks/webhooks-repo.js');
const { forTenant } = dist('src/db/tenant-scope.js');

/** What `evaluate` in src/webhooks/webhooks-evaluation.ts decides, without its database calls around it. */
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
    const repo = createWebhooksRepo(forTenant(opened.db, source.tenantId));
    const triggers = await repo.webhookTriggers(source.id);
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
      await repo.webhookTriggers(source.id);
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

if (import.meta.filename === process.argv[1]) {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'flows-intake-eval-'));
  measure(dir)
    .then((result) => {
      console.log(describe(result));
      console.log(JSON.stringify({ bench: 'intake-eval', ...result }));
    })
    .catch((err) => {
      console.error(err);
      process.exitCode = 1;
    })
    .finally(() => rmSync(dir, { recursive: true, force: true }));
}
