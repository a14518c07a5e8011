// Template autocomplete metadata: every filter example renders in the strict engine against a context made
// of the variables' examples, paths are unique in every context a run can see, types match examples,
// and the providers are exactly the contract's formats.
import { loadContract } from '../../src/http/contract';
import { compileTemplate, renderTemplate } from '../../src/jobs/templates-fns';
import { PROVIDER_EVENTS, triggerContexts, TRIGGER_TYPES, type Variable, type WebhookFormat } from '../../src/triggers/trigger-contexts-fns';

const metadata = triggerContexts({ hasWebhookSource: true });

/** Each (trigger, provider, event) a run can be started by, with the variables its templates see. */
function scopes(): { name: string; variables: Variable[] }[] {
  const of = (trigger: string, provider?: string, event?: string) => ({
    name: [trigger, provider, event].filter(Boolean).join(' '),
    variables: metadata.variables.filter(
      (v) => v.trigger === trigger && (v.provider === undefined || v.provider === provider) && (v.event === undefined || v.event === event),
    ),
  });
  const webhook = metadata.providers.flatMap(({ format, events }) => (events.length ? events.map((event) => of('webhook', format, event)) : [of('webhook', format)]));
  return [...TRIGGER_TYPES.filter((t) => t !== 'webhook').map((t) => of(t)), ...webhook];
}

/** A nested context from dotted paths and examples; shallower paths first, so deeper ones add to them. */
function sampleContext(variables: Variable[]): Record<string, unknown> {
  const context: Record<string, unknown> = {};
  const byDepth = [...variables].sort((a, b) => a.path.split('.').length - b.path.split('.').length);
  for (const { path, example } of byDepth) {
    const keys = path.split('.');
    let parent = context;
    for (const key of keys.slice(0, -1)) {
      parent[key] ??= {};
      const next = parent[key];
      if (next === null || typeof next !== 'object' || Array.isArray(next)) throw new Error(`${path}: ${key} is not an object`);
      parent = next as Record<string, unknown>;
    }
    const last = keys[keys.length - 1];
    const existing = parent[last];
    parent[last] = existing && typeof existing === 'object' ? { ...(existing as object), ...(example as object) } : structuredClone(example);
  }
  return context;
}

const contexts = scopes().map(({ name, variables }) => ({ name, context: sampleContext(variables) }));

async function rendersIn(template: string, context: Record<string, unknown>): Promise<boolean> {
  try {
    await renderTemplate(compileTemplate(template), context);
    return true;
  } catch {
    return false;
  }
}

it.each(metadata.filters.map((f) => [f.name, f.example]))('%s: its example uses it and renders in some trigger context', async (name, example) => {
  expect(example).toMatch(new RegExp(`\\| ${name}\\b`));
  const where = [];
  for (const { name: scope, context } of contexts) if (await rendersIn(example, context)) where.push(scope);
  expect(where).not.toEqual([]);
});

it('renders the filter examples to what they promise', async () => {
  const github = contexts.find((c) => c.name === 'webhook github issues.labeled')!.context;
  const render = (source: string) => renderTemplate(compileTemplate(source), github);
  expect(await render('{{ payload.issue.labels | map: "name" | join: ", " }}')).toBe('bug, agent');
  expect(await render('agent/{{ payload.issue.title | slugify }}')).toBe('agent/saving-a-draft-twice-crashes-the-editor');
  expect(await render('{{ payload.repository.full_name | split: "/" | last }}')).toBe('widgets');
});

it('lists each filter once', () => {
  const names = metadata.filters.map((f) => f.name);
  expect(names.length).toBe(new Set(names).size);
});

it.each(scopes().map(({ name, variables }) => [name, variables]))('%s: each path once, and the job fields', (_name, variables) => {
  const paths = (variables as Variable[]).map((v) => v.path);
  expect(paths.filter((p, i) => paths.indexOf(p) !== i)).toEqual([]);
  expect(paths).toEqual(expect.arrayContaining(['job.id', 'job.slug', 'job.name']));
});

const jsonType = (value: unknown) =>
  value === null ? 'null' : Array.isArray(value) ? 'array' : Number.isInteger(value) ? 'integer' : typeof value;

it('gives every variable an example of its type', () => {
  const mismatched = metadata.variables.filter((v) => jsonType(v.example) !== v.type && !(v.type === 'number' && typeof v.example === 'number'));
  expect(mismatched).toEqual([]);
});

it('names provider-specific variables only for webhooks, and events only among the provider\'s', () => {
  for (const v of metadata.variables) {
    if (v.provider) expect(v.trigger).toBe('webhook');
    if (v.event) expect(PROVIDER_EVENTS[v.provider as WebhookFormat]).toContain(v.event);
  }
});

it('lists every webhook format of the contract, with events for all but the generic ones', () => {
  const formats: string[] = loadContract().inlined.components.schemas.WebhookFormat.enum;
  expect(metadata.providers.map((p) => p.format)).toEqual(formats);
  expect(metadata.providers.every((p) => p.available)).toBe(true);
  expect(Object.fromEntries(metadata.providers.map((p) => [p.format, p.events.length > 0]))).toEqual({ github: true, linear: true, 'standard-webhooks': false, 'hmac-sha256': false, gitlab: true, slack: true, sentry: true, jira: true });
});

it('offers webhooks only to a tenant with a webhook source', () => {
  const webhook = (has: boolean) => triggerContexts({ hasWebhookSource: has }).triggerTypes.find((t) => t.type === 'webhook');
  expect(webhook(true)).toEqual({ type: 'webhook', available: true });
  expect(webhook(false)).toEqual({ type: 'webhook', available: false, reason: 'Create a webhook source first (POST /api/v1/webhook-sources).' });
  expect(triggerContexts({ hasWebhookSource: false }).triggerTypes.filter((t) => t.available).map((t) => t.type)).toEqual(['schedule', 'run', 'invocation']);
});

it("lists every GitHub payload field two levels deep from GitHub's schemas, after the common ones it marks", () => {
  const labeled = metadata.variables.filter((v) => v.provider === 'github' && v.event === 'issues.labeled');
  expect(labeled.find((v) => v.path === 'payload.issue.title')).toMatchObject({ common: true, description: 'Title of the issue.' });
  expect(labeled.find((v) => v.path === 'payload.issue.state')).toEqual({
    trigger: 'webhook',
    provider: 'github',
    event: 'issues.labeled',
    path: 'payload.issue.state',
    type: 'string',
    description: expect.stringMatching(/state of the issue/i),
    example: 'open',
    common: false,
  });
  expect(labeled.find((v) => v.path === 'payload.repository.visibility')).toMatchObject({ common: false, type: 'string' });
  expect(labeled.filter((v) => !v.common).every((v) => v.path.split('.').length <= 3)).toBe(true);
  expect(labeled.length).toBeGreaterThan(100);
  const firstDerived = metadata.variables.findIndex((v) => !v.common);
  expect(metadata.variables.slice(firstDerived).every((v) => !v.common)).toBe(true);
});
