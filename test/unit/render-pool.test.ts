// The render pool with its real worker threads: outputs as an inline render gives them, problems naming
// the source that failed, a render over the limit stopped by terminating its worker (which is replaced),
// and each tenant held to its renders in flight and its line.
import { AppError } from '../../src/lib/errors';
import { createRenderPool, RenderProblem, type RenderPool } from '../../src/jobs/render-pool';
import { compileTemplate, RENDER_LIMIT_EXCEEDED, renderTemplate } from '../../src/jobs/templates-fns';

const RUNAWAY = '{% for a in (1..1000000) %}{% for b in (1..1000000) %}x{% endfor %}{% endfor %}';
const pools: RenderPool[] = [];
const pool = (options: Parameters<typeof createRenderPool>[0] = {}) => {
  const made = createRenderPool(options);
  pools.push(made);
  return made;
};
afterAll(() => Promise.all(pools.map((made) => made.close())));

const failure = (promise: Promise<unknown>) => promise.then(() => { throw new Error('rendered'); }, (err: unknown) => err);

it('renders the sources of one message in order, as an inline render does', async () => {
  const context = { payload: { issue: { number: 42, labels: [{ name: 'bug' }, { name: 'agent' }] } }, at: new Date(0) };
  const sources = ['Issue #{{ payload.issue.number }}', '{{ payload.issue.labels | map: "name" | join: ", " }}', '{{ at | date: "%Y" }}'];
  const inline = await Promise.all(sources.map((source) => renderTemplate(compileTemplate(source), context)));
  expect(await pool().render('ten_a', sources, context)).toEqual(inline);
  expect(inline).toEqual(['Issue #42', 'bug, agent', '1970']);
});

it('names the source that failed, with the position liquidjs gives', async () => {
  const renders = pool();
  const undefinedVariable = (await failure(renders.render('ten_a', ['fine', 'Hi {{ payload.nope }}'], { payload: {} }))) as RenderProblem;
  expect([undefinedVariable.constructor, undefinedVariable.index, undefinedVariable.message]).toEqual([RenderProblem, 1, 'line 1, column 7: undefined variable: payload.nope']);
  const unclosed = (await failure(renders.render('ten_a', ['{% if x %}'], { x: 1 }))) as RenderProblem;
  expect([unclosed.index, unclosed.message]).toEqual([0, 'line 1, column 1: tag {% if x %} not closed']);
});

it('stops a render over the limit by terminating its worker, and renders on with a new one', async () => {
  const renders = pool({ size: 1, limitMs: 100, slackMs: 0 });
  await renders.render('ten_a', ['warm'], {}); // the limit counts from a worker's start, not its loading
  const started = Date.now();
  const overrun = (await failure(renders.render('ten_a', ['quick', RUNAWAY], {}))) as RenderProblem;
  // liquidjs's own limit is 1 s: the pool stopped this one.
  expect(Date.now() - started).toBeLessThan(900);
  expect([overrun.constructor, overrun.index, overrun.message]).toEqual([RenderProblem, 1, RENDER_LIMIT_EXCEEDED]);
  expect(await renders.render('ten_a', ['after {{ n }}'], { n: 1 })).toEqual(['after 1']);
});

it('holds a tenant to its renders in flight and its line, while other tenants render', async () => {
  const renders = pool({ size: 2, limitMs: 300, slackMs: 0, perTenant: 1, waitingPerTenant: 1 });
  const settled: string[] = [];
  const heavy = [0, 1].map((i) => failure(renders.render('ten_a', [RUNAWAY], {})).then((err) => (settled.push(`a${i}`), err)));
  const refused = (await failure(renders.render('ten_a', ['small'], {}))) as AppError;
  expect([refused.status, refused.code, refused.headers['Retry-After']]).toEqual([429, 'rate_limited', '1']);
  // Background work waits its turn instead of being refused.
  const background = renders.render('ten_a', ['background'], {}, { background: true }).then((out) => (settled.push('background'), out));
  expect(await renders.render('ten_b', ['other tenant'], {})).toEqual(['other tenant']);
  settled.push('b');
  expect((await Promise.all(heavy)).map((err) => (err as Error).message)).toEqual([RENDER_LIMIT_EXCEEDED, RENDER_LIMIT_EXCEEDED]);
  expect(await background).toEqual(['background']);
  // The other tenant was not held behind ten_a's line: it finished before ten_a's second render could start.
  expect(settled.filter((name) => name !== 'b')).toEqual(['a0', 'a1', 'background']);
  expect(settled.indexOf('b')).toBeLessThan(settled.indexOf('a1'));
});

it('refuses a context that is not data, and renders on', async () => {
  const renders = pool({ size: 1 });
  expect(((await failure(renders.render('ten_a', ['{{ f }}'], { f: () => 1 }))) as Error).name).toBe('DataCloneError');
  expect(await renders.render('ten_a', ['{{ n }}'], { n: 2 })).toEqual(['2']);
});

it('starts workers as renders need them, and stops those that stay idle', async () => {
  const renders = pool({ size: 2, idleMs: 100 });
  expect(renders.stats()).toEqual({ workers: 0, waiting: 0 });
  expect(await Promise.all([renders.render('ten_a', ['1'], {}), renders.render('ten_b', ['2'], {}), renders.render('ten_c', ['3'], {})])).toEqual([['1'], ['2'], ['3']]);
  expect(renders.stats()).toEqual({ workers: 2, waiting: 0 });
  await new Promise((resolve) => setTimeout(resolve, 300));
  expect(renders.stats()).toEqual({ workers: 0, waiting: 0 });
  expect(await renders.render('ten_a', ['again'], {})).toEqual(['again']);
});

it('rejects what is not finished when it closes', async () => {
  const renders = createRenderPool({ size: 1 });
  const running = failure(renders.render('ten_a', [RUNAWAY], {}));
  const waiting = failure(renders.render('ten_b', ['x'], {}));
  await renders.close();
  expect([((await running) as Error).message, ((await waiting) as Error).message]).toEqual(['the render pool is closed', 'the render pool is closed']);
});
