// What a job may read, checked when it is saved: template variables (liquidjs's own analysis, its locals left
// out), condition paths and CEL identifiers, against the roots its triggers put in a run's context.
import { checkJob, type Trigger } from '../../src/jobs/jobs-fns';
import { templateVariables, compileTemplate } from '../../src/jobs/templates-fns';
import { compileCel } from '../../src/triggers/cel-fns';
import { closestName } from '../../src/lib/text';

const webhook = (conditions?: Record<string, unknown>, id = 'trg_labeled'): Trigger =>
  ({ type: 'webhook', id, enabled: true, sourceId: 'src_1', events: ['issues.labeled'], ...(conditions && { conditions }) }) as Trigger;
const schedule: Trigger = { type: 'schedule', id: 'trg_nightly', enabled: true, cron: '0 3 * * *' } as Trigger;
const run = (conditions?: Record<string, unknown>): Trigger => ({ type: 'run', id: 'trg_after', enabled: true, jobId: 'job_1', states: ['succeeded'], ...(conditions && { conditions }) }) as Trigger;

/** The refusal `checkJob` throws (status, code, message), or null when the job passes. */
function refusal(promptTemplate: string, triggers: Trigger[], runNameTemplate?: string) {
  try {
    checkJob({ promptTemplate, runNameTemplate, triggers });
    return null;
  } catch (err) {
    const { status, code, message } = err as { status: number; code: string; message: string };
    return { status, code, message };
  }
}

describe('template variables', () => {
  it('lists what a template reads from its context, not its assign, capture and for locals', () => {
    const template = compileTemplate(
      '{% assign title = payload.issue.title %}{% capture note %}{{ title }}{% endcapture %}{% for label in payload.issue.labels %}{{ label.name }} {{ forloop.index }}{% endfor %}{{ note }}\n{{ job.slug | upcase }}',
    );
    expect(templateVariables(template)).toEqual([
      { name: 'payload', line: 1, column: 19 },
      { name: 'job', line: 2, column: 4 },
    ]);
  });

  it('accepts each root of the job\'s triggers, and refuses others naming the root, field, roots and trigger', () => {
    expect(refusal('{{ payload.issue.title }} by {{ job.name }}', [webhook()])).toBeNull();
    expect(refusal('{{ schedule.slot }} {{ data.task }}', [schedule])).toBeNull();
    expect(refusal('{{ payload.issue.title }}', [schedule])).toEqual({
      status: 400,
      code: 'invalid_template',
      message: expect.stringContaining("`promptTemplate`, line 1, column 4: `payload` is not in the context of this job's runs, which holds `job`, `data` and `schedule` (from its schedule trigger `triggers[0]`)"),
    });
  });

  it('accepts the roots of either trigger of a job with a webhook and a schedule trigger', () => {
    const both = [webhook(), schedule];
    expect(refusal('{% if payload %}{{ payload.issue.title }}{% else %}{{ schedule.slot }}{% endif %}', both)).toBeNull();
    expect(refusal('{{ delivery.id }}', both, '{{ data.task }}')).toBeNull();
  });

  it('checks the run name too, and a job without triggers against what a direct invocation provides', () => {
    expect(refusal('{{ data.issue }}', [])).toBeNull();
    expect(refusal('{{ data.issue }}', [], 'Run {{ dta.issue }}')?.message).toBe(
      "Invalid template: `runNameTemplate`, line 1, column 8: `dta` is not in the context of this job's runs, which holds `job` and `data` (from a direct invocation, as the job has no triggers) (did you mean `data`?).",
    );
  });

  it('gives a filter\'s argument the same check', () => {
    expect(refusal('{{ payload.issue.title | append: paylod.x }}', [webhook()])?.message).toContain('`paylod` is not in the context');
  });
});

describe('condition paths', () => {
  it('refuses a root the trigger type does not provide, suggesting the near one', () => {
    expect(refusal('x', [webhook({ all: [{ path: 'paylod.label.name', op: 'eq', value: 'bug' }] })])).toEqual({
      status: 400,
      code: 'invalid_conditions',
      message:
        "Invalid conditions: `triggers[0].conditions.all[0].path`: `paylod` is not in a webhook trigger's context, which holds `source`, `event`, `action`, `payload`, `headers` and `delivery` (did you mean `payload`?).",
    });
  });

  it('reads a run trigger\'s paths against the run as the API shows it', () => {
    expect(refusal('x', [run({ all: [{ path: 'result.pullRequestUrl', op: 'exists' }, { path: 'trigger.type', op: 'eq', value: 'webhook' }] })])).toBeNull();
    expect(refusal('x', [run({ none: [{ path: 'payload.issue', op: 'exists' }] })])?.message).toContain('`triggers[0].conditions.none[0].path`: `payload` is not in a run trigger\'s context');
  });

  it('makes no suggestion for a name far from every root', () => {
    expect(refusal('x', [webhook({ any: [{ path: 'github.event', op: 'eq', value: 'x' }] })])?.message).not.toContain('did you mean');
  });
});

describe('CEL identifiers', () => {
  it('lists the names an expression reads, not its macros\' variables nor type names, with their columns', () => {
    const { variables } = compileCel("payload.issue.labels.exists(l, l.name == 'bug') && type(action) == string && has(headers.x) && [1, 2].all(n, n > 0)");
    expect(variables).toEqual([
      { name: 'payload', column: 1 },
      { name: 'action', column: 57 },
      { name: 'headers', column: 82 },
    ]);
  });

  it('refuses an undeclared identifier at save, naming it and its column', () => {
    expect(refusal('x', [webhook({ if: "payload.label.name == 'bug' && webhook.payload.x" })])?.message).toBe(
      "Invalid conditions: `triggers[0].conditions.if`, column 32: `webhook` is not declared: a CEL expression reads a webhook trigger's context, which holds `source`, `event`, `action`, `payload`, `headers` and `delivery`.",
    );
    expect(refusal('x', [webhook({ if: "paylod.label.name == 'bug'" })])?.message).toContain('(did you mean `payload`?)');
    expect(refusal('x', [webhook({ if: "payload.label.name == 'bug' && event == 'issues'" })])).toBeNull();
  });
});

describe('one answer', () => {
  it('names every mistake of the job, with the code of the first', () => {
    const refused = refusal('Fix {{ webhook.payload.issue.title }}', [webhook({ all: [{ path: 'paylod.label.name', op: 'eq', value: 'bug' }], if: "webhook.payload.label.name == 'bug'" })]);
    expect(refused).toMatchObject({ status: 400, code: 'invalid_template' });
    expect(refused!.message).toMatch(/^The job has 3 problems: \(1\) `promptTemplate`, line 1, column 8: `webhook` .*; \(2\) `triggers\[0\]\.conditions\.all\[0\]\.path`: `paylod`.*\(did you mean `payload`\?\); \(3\) `triggers\[0\]\.conditions\.if`, column 1: `webhook` is not declared/);
  });

  it('also collects templates that do not parse and conditions that do not compile', () => {
    const refused = refusal('{{ payload.issue.title ', [webhook({ all: [{ path: 'payload..x', op: 'eq', value: 1 }] })], '{{ dta }}');
    expect(refused!.message).toMatch(/^The job has 3 problems: \(1\) `promptTemplate`, line 1.*; \(2\) `runNameTemplate`, line 1, column 4: `dta`.*; \(3\) `triggers\[0\]\.conditions`, all\[0\]: bad path/);
  });
});

describe('templates naming a partial', () => {
  it('are refused with 400 invalid_template and the tag\'s position, in the prompt and the run name', () => {
    expect(refusal('Fix it\n{% include "x" %}', [webhook()])).toEqual({
      status: 400,
      code: 'invalid_template',
      message: 'Invalid template: `promptTemplate`, line 2, column 1: `include` is not available: templates have no partials to include.',
    });
    expect(refusal('x', [webhook()], 'Run {% render "name" %}')?.message).toBe('Invalid template: `runNameTemplate`, line 1, column 5: `render` is not available: templates have no partials to include.');
    expect(refusal('{% layout "base" %}{{ payload.issue.title }}', [schedule])?.message).toContain('`promptTemplate`, line 1, column 1: `layout` is not available');
  });
});

describe('an update', () => {
  it('checks the saved templates against new triggers, and is not refused for parts it leaves alone', () => {
    const saved = { promptTemplate: '{{ data.task }}', runNameTemplate: null, triggers: [schedule] };
    expect(() => checkJob({ ...saved, triggers: [webhook()] }, { templates: false, triggers: true })).toThrow('`data` is not in the context');
    expect(() => checkJob({ ...saved, promptTemplate: '{{ payload }}' }, { templates: false, triggers: false })).not.toThrow();
    expect(() => checkJob({ ...saved, promptTemplate: '{{ payload }}' }, { templates: true, triggers: false })).toThrow('`payload` is not in the context');
  });
});

it('suggests a name only when it is a near miss', () => {
  expect(closestName('paylod', ['payload', 'event'])).toBe('payload');
  expect(closestName('evnt', ['payload', 'event'])).toBe('event');
  expect(closestName('webhook', ['payload', 'event', 'headers'])).toBeNull();
  expect(closestName('x', [])).toBeNull();
});
