// The payload variables of the gitlab, slack, sentry and jira formats against example bodies shaped after each
// sender's documentation (test/fixtures/webhooks/): every row an event's delivery sees is there, at its path, with
// its type (null only where the row says so); events are the format's known ones; examples have their row's type.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { SENDER_EVENTS, SENDER_ROWS, type SenderFormat, type SenderRow } from '../../src/triggers/trigger-contexts-senders';

const FIXTURES = join(__dirname, '..', 'fixtures', 'webhooks');
const FORMATS = Object.keys(SENDER_EVENTS) as SenderFormat[];

type Body = Record<string, unknown>;
const get = (value: unknown, path: string): unknown =>
  path.split('.').reduce<unknown>((at, key) => (at !== null && typeof at === 'object' && Object.hasOwn(at, key) ? (at as Body)[key] : undefined), value);
const str = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);
const jsonType = (value: unknown) => (value === null ? 'null' : Array.isArray(value) ? 'array' : Number.isInteger(value) ? 'integer' : typeof value);

/** The body Flows would hand a template: JSON, or a form-encoded slash command without Slack's deprecated `token`. */
function readBody(file: string): Body {
  const text = readFileSync(join(FIXTURES, file), 'utf8');
  if (!file.endsWith('.txt')) return JSON.parse(text) as Body;
  const body: Body = Object.fromEntries(new URLSearchParams(text.trim()));
  delete body.token;
  return body;
}

/** The `event.action` name Flows gives a delivery of the format; undefined for what it records as nothing. */
function eventName(format: SenderFormat, file: string, body: Body): string | undefined {
  const name = (event: string | undefined, action?: string) => (event && action ? `${event}.${action}` : event);
  switch (format) {
    case 'gitlab': {
      const kind = str(body.object_kind);
      const attributes = body.object_attributes;
      const action =
        kind === 'merge_request' || kind === 'issue'
          ? get(attributes, 'action')
          : kind === 'note'
            ? get(attributes, 'noteable_type')
            : kind === 'pipeline'
              ? get(attributes, 'status')
              : undefined;
      return name(kind, str(action));
    }
    case 'slack':
      if (body.type === 'url_verification') return undefined;
      if (file.endsWith('.txt')) return name('slash_command', str(body.command));
      return name(str(get(body, 'event.type')), str(get(body, 'event.subtype')));
    case 'sentry':
      return name(file.slice(file.indexOf('/') + 1).split('.')[0], str(body.action));
    case 'jira':
      return name(str(body.webhookEvent)?.replace(/^jira:/, ''), str(body.issue_event_type_name));
  }
}

const files = FORMATS.flatMap((format) =>
  readdirSync(join(FIXTURES, format))
    .filter((name) => name.endsWith('.json') || name.endsWith('.txt'))
    .map((name) => `${format}/${name}`),
);
const fixtures = files.map((file) => {
  const format = file.split('/')[0] as SenderFormat;
  const body = readBody(file);
  return { file, format, body, event: eventName(format, file, body) };
});

it('reads every fixture as the event its name promises', () => {
  expect(Object.fromEntries(fixtures.map(({ file, event }) => [file, event ?? null]))).toEqual({
    'gitlab/issue.open.json': 'issue.open',
    'gitlab/merge_request.open.json': 'merge_request.open',
    'gitlab/note.MergeRequest.json': 'note.MergeRequest',
    'gitlab/pipeline.failed.json': 'pipeline.failed',
    'slack/app_mention.json': 'app_mention',
    'slack/slash_command.txt': 'slash_command./flows',
    'slack/url_verification.json': null,
    'sentry/event_alert.triggered.json': 'event_alert.triggered',
    'sentry/issue.created.json': 'issue.created',
    'jira/comment_created.json': 'comment_created',
    'jira/issue_created.json': 'issue_created.issue_created',
    'jira/issue_updated.issue_assigned.json': 'issue_updated.issue_assigned',
  });
  for (const { format, event } of fixtures) if (event) expect(SENDER_EVENTS[format]).toContain(event);
});

it('keeps Slack’s url_verification an envelope-less challenge, and no token in a slash command', () => {
  const verification = fixtures.find((f) => f.file === 'slack/url_verification.json')!.body;
  expect(verification).toEqual({ token: expect.any(String), challenge: expect.any(String), type: 'url_verification' });
  expect(fixtures.find((f) => f.file === 'slack/slash_command.txt')!.body).not.toHaveProperty('token');
  expect(readFileSync(join(FIXTURES, 'slack/slash_command.txt'), 'utf8').trim()).not.toContain('\n');
});

const deliveries = fixtures.filter((f): f is typeof f & { event: string } => f.event !== undefined);
const rowsOf = (format: SenderFormat, event: string) => SENDER_ROWS.filter((row) => row.provider === format && (!row.events || row.events.includes(event)));
const describeRow = (row: SenderRow) => `${row.path} (${row.type})`;

it.each(deliveries.map((f) => [f.file, f]))('%s: every row of its event is there, with its type', (_file, { format, event, body }) => {
  const rows = rowsOf(format, event);
  expect(rows.length).toBeGreaterThan(3);
  const problems = rows.flatMap((row) => {
    const value = get(body, row.path.replace(/^payload\./, ''));
    if (value === undefined) return [`${describeRow(row)}: missing`];
    if (value === null) return /\bnull\b/.test(row.description) ? [] : [`${describeRow(row)}: null, which the row does not allow`];
    const type = jsonType(value);
    const matches = type === row.type || (row.type === 'number' && typeof value === 'number');
    return matches ? [] : [`${describeRow(row)}: is ${type}`];
  });
  expect(problems).toEqual([]);
});

it('checks every format against at least one fixture, and every row against at least one delivery or none of its events', () => {
  for (const format of FORMATS) expect(deliveries.some((f) => f.format === format)).toBe(true);
  const covered = new Set(deliveries.flatMap(({ format, event }) => rowsOf(format, event)));
  // A row no fixture reaches belongs to events without a fixture (comments, pushes, metric alerts, …) only.
  for (const row of SENDER_ROWS.filter((r) => !covered.has(r))) {
    expect(row.events).toBeDefined();
    expect(row.events!.some((event) => deliveries.some((f) => f.format === row.provider && f.event === event))).toBe(false);
  }
});

it('names only known events, a focused list of them per format', () => {
  for (const format of FORMATS) {
    const events = SENDER_EVENTS[format];
    expect(events.length).toBeGreaterThanOrEqual(5);
    expect(events.length).toBeLessThanOrEqual(15);
    expect(new Set(events).size).toBe(events.length);
  }
  for (const row of SENDER_ROWS) {
    expect(row.trigger).toBe('webhook');
    for (const event of row.events ?? []) expect(SENDER_EVENTS[row.provider]).toContain(event);
  }
});

it('writes payload paths once per event, with an example of their type and a one-sentence description', () => {
  for (const row of SENDER_ROWS) {
    expect(row.path).toMatch(/^payload\.[A-Za-z_][\w.]*$/);
    expect(row.description).toMatch(/^\S.*[.…]$/);
    const type = jsonType(row.example);
    expect({ path: row.path, type: type === 'integer' && row.type === 'number' ? 'number' : type }).toEqual({ path: row.path, type: row.type });
  }
  for (const format of FORMATS) {
    for (const event of SENDER_EVENTS[format]) {
      const paths = rowsOf(format, event).map((row) => row.path);
      expect({ event, duplicates: paths.filter((p, i) => paths.indexOf(p) !== i) }).toEqual({ event, duplicates: [] });
    }
  }
  // Flows removes Slack's deprecated verification token before a template sees the payload.
  expect(SENDER_ROWS.filter((row) => row.path === 'payload.token')).toEqual([]);
});

it('lists every fixture in the README with the documentation page it follows', () => {
  const readme = readFileSync(join(FIXTURES, 'README.md'), 'utf8');
  for (const file of files) expect(readme).toMatch(new RegExp(`^- \`${file.replace(/\./g, '\\.')}\`: https://\\S+`, 'm'));
});
