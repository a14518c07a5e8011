// Paths a job's deliveries may never carry: GitHub's published schemas (checked against GitHub's own example
// payloads, @octokit/webhooks-examples) and the recent recorded deliveries of a trigger's events.
import examples from '@octokit/webhooks-examples';
import type { Step } from '../../src/triggers/condition-paths';
import { eventsWithRoom, githubEventNames } from '../../src/triggers/github-payloads-fns';
import { jobWarnings, type RecordedDelivery } from '../../src/jobs/job-warnings-fns';
import type { Trigger } from '../../src/jobs/jobs-fns';


/** Every path to a leaf of a payload, an array read through its first element. */
function leafPaths(value: unknown, steps: Step[] = [], found: Step[][] = []): Step[][] {
  if (Array.isArray(value)) return value.length ? leafPaths(value[0], [...steps, { each: true }], found) : (found.push(steps), found);
  if (value && typeof value === 'object' && Object.keys(value).length) {
    for (const [key, inner] of Object.entries(value)) leafPaths(inner, [...steps, { key }], found);
    return found;
  }
  found.push(steps);
  return found;
}

describe("GitHub's published schemas", () => {
  it('have room for every field of GitHub\'s example payloads, but for the few where the schemas lag', () => {
    const lagging: string[] = [];
    let checked = 0;
    for (const event of examples as { name: string; examples: Record<string, any>[] }[]) {
      for (const payload of event.examples) {
        const name = payload.action ? `${event.name}.${payload.action}` : event.name;
        if (!githubEventNames().includes(name)) continue; // an example of an action the schemas do not list
        for (const steps of leafPaths(payload)) {
          checked++;
          if (!eventsWithRoom([name], steps).length) lagging.push(`${name} ${steps.map((step) => ('key' in step ? step.key : '[*]')).join('.')}`);
        }
      }
    }
    expect(checked).toBeGreaterThan(50_000);
    expect(lagging).toEqual(['code_scanning_alert.reopened alert.updated_at', 'code_scanning_alert.reopened alert.fixed_at', 'code_scanning_alert.reopened alert.rule.tags.[*]']);
  });

  it('tell a field of one listed event from one of no listed event', () => {
    const path = (text: string): Step[] => text.split('.').map((key) => ({ key }));
    expect(eventsWithRoom(['issues.labeled', 'issues.opened'], path('label.name'))).toEqual(['issues.labeled']);
    expect(eventsWithRoom(['issues.opened'], path('label.name'))).toEqual([]);
    expect(eventsWithRoom(['issues.labeled'], path('issue.titel'))).toEqual([]);
    expect(eventsWithRoom(['issues.labeled'], path('issue.title.length'))).toEqual([]);
    expect(eventsWithRoom(['issues.labeled'], [{ key: 'issue' }, { key: 'labels' }, { each: true }, { key: 'name' }])).toEqual(['issues.labeled']);
  });
});

const github = new Map([['src_gh', 'github'], ['src_hooks', 'standard-webhooks']]);
const labeled = (conditions?: Record<string, unknown>, events = ['issues.labeled'], sourceId = 'src_gh'): Trigger =>
  ({ type: 'webhook', id: `trg_${sourceId}`, enabled: true, sourceId, events, ...(conditions && { conditions }) }) as Trigger;
const warningsOf = (promptTemplate: string, triggers: Trigger[], recorded = new Map<string, RecordedDelivery[]>()) => jobWarnings({ promptTemplate, triggers }, github, recorded);

describe('job warnings', () => {
  it('flag a path no listed GitHub event carries, in a template, a leaf and a CEL selection, and nothing else', () => {
    const trigger = labeled({ all: [{ path: 'payload.issue.titel', op: 'exists' }], if: "payload.repository.visibility == 'public' && payload.sender.logn == 'x'" });
    expect(warningsOf('{{ payload.issue.title }} {{ payload.issue.state }} {{ payload.isue.number }} {{ job.slug }} {{ headers["x-github-event"] }}', [trigger])).toEqual([
      { field: 'triggers[0].conditions.all[0].path', message: "`payload.issue.titel` is in no payload of the listed GitHub events (issues.labeled), by GitHub's published webhook schemas." },
      { field: 'triggers[0].conditions.if', message: expect.stringContaining('`payload.sender.logn` is in no payload') },
      { field: 'promptTemplate', message: expect.stringContaining('`payload.isue.number` is in no payload') },
    ]);
  });

  it('accept a path one of the listed events carries', () => {
    expect(warningsOf('{{ payload.label.name }}', [labeled(undefined, ['issues.labeled', 'issues.opened'])])).toEqual([]);
    expect(warningsOf('{{ payload.label.name }}', [labeled(undefined, ['issues.opened'])])).toHaveLength(1);
    expect(warningsOf('{{ payload.label.name }}', [labeled(undefined, ['issues.*'])])).toEqual([]);
  });

  it('flag a path absent from every recorded delivery of the trigger\'s events, with the count, for any format', () => {
    const hooks = labeled({ any: [{ path: 'payload.data.amount', op: 'gt', value: 0 }, { path: 'payload.data.id', op: 'exists' }] }, ['invoice.paid'], 'src_hooks');
    const recorded = new Map([
      ['trg_src_hooks', [
        ...Array.from({ length: 3 }, (_, n): RecordedDelivery => ({ name: 'invoice.paid', context: { payload: { data: { id: `inv_${n}` } } } })),
        { name: 'invoice.voided', context: { payload: { data: { amount: 5 } } } },
      ]],
    ]);
    expect(warningsOf('{{ payload.data.id }}', [hooks], recorded)).toEqual([
      { field: 'triggers[0].conditions.any[0].path', message: '`payload.data.amount` is absent in 3 of 3 recorded invoice.paid deliveries.' },
    ]);
    expect(warningsOf('{{ payload.data.customer }}', [hooks], recorded)).toContainEqual({ field: 'promptTemplate', message: '`payload.data.customer` is absent in 3 of 3 recorded invoice.paid deliveries.' });
    expect(warningsOf('{{ payload.data.customer }}', [hooks])).toEqual([]); // nothing recorded, nothing to say
  });

  it('flag a flow-control key that reads what the listed events never carry, as a template is judged', () => {
    const keyed = (flowControl: Record<string, unknown>, triggers = [labeled()]) => jobWarnings({ promptTemplate: 'x', triggers, flowControl }, github, new Map());
    expect(keyed({ concurrency: { key: 'payload.pull_request.number', limit: 1 } })).toEqual([
      { field: 'flowControl.concurrency.key', message: "`payload.pull_request.number` is in no payload of the listed GitHub events (issues.labeled), by GitHub's published webhook schemas." },
    ]);
    expect(keyed({ rateLimit: { key: 'payload.issue.number', limit: 5, period: '1h' }, debounce: { key: 'payload.repository.full_name + "/" + payload.sender.logn', period: '30s' } })).toEqual([
      { field: 'flowControl.debounce.key', message: expect.stringContaining('`payload.sender.logn` is in no payload') },
    ]);
    expect(keyed({ concurrency: { key: 'payload.pull_request.number', limit: 1 } }, [labeled(undefined, ['issues.labeled', 'pull_request.opened'])])).toEqual([]);
    expect(keyed({ concurrency: { limit: 1 } })).toEqual([]);
    // A key that does not compile was refused at save; a job saved before stays readable.
    expect(keyed({ concurrency: { key: 'payload.(', limit: 1 } })).toEqual([]);
  });

  it('judge a template by the schemas only when every webhook source is GitHub', () => {
    expect(warningsOf('{{ payload.issue.titel }}', [labeled(), labeled(undefined, ['invoice.paid'], 'src_hooks')])).toEqual([]);
  });
});
