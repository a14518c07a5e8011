// Templates: strict variables and filters, the standard filters, errors with line and column, no file
// system, own properties only, and the output cap.
import { compileTemplate, MAX_OUTPUT, renderTemplate, TemplateProblem } from '../../src/jobs/templates-fns';

const context = { payload: { issue: { number: 42, title: 'Saving a draft twice crashes the editor', labels: [{ name: 'bug' }, { name: 'agent' }] } }, data: { note: '' } };
const render = (source: string, ctx: Record<string, unknown> = context) => renderTemplate(compileTemplate(source), ctx);
const failure = async (source: string, ctx?: Record<string, unknown>) => {
  try {
    await render(source, ctx);
  } catch (err) {
    if (err instanceof TemplateProblem) return err.message;
    throw err;
  }
  throw new Error(`rendered ${source}`);
};

it.each([
  ['Issue #{{ payload.issue.number }}', 'Issue #42'],
  ['{{ payload.issue.title | truncate: 20 }}', 'Saving a draft tw...'],
  ['{{ payload.issue.labels | map: "name" | join: ", " }}', 'bug, agent'],
  ['{{ payload.issue.labels[1].name | upcase }}', 'AGENT'],
  ['{{ data.note | default: "none" }}', 'none'],
  ['{% for l in payload.issue.labels %}[{{ l.name }}]{% endfor %}', '[bug][agent]'],
  ['{% if payload.issue.number > 40 %}big{% else %}small{% endif %}', 'big'],
  ['{% if payload.missing %}there{% else %}optional values are asked for in if{% endif %}', 'optional values are asked for in if'],
])('renders %s', async (source, output) => {
  expect(await render(source)).toBe(output);
});

it.each([
  ['Hi {{ payload.issue.missing }}', 'line 1, column 7: undefined variable: payload.issue.missing'],
  ['line one\n  {{ payload | shout }}', 'line 2, column 3: undefined filter: shout'],
  ['{% if payload %}', 'line 1, column 1: tag {% if payload %} not closed'],
  ['{{ payload.constructor }}', 'line 1, column 4: undefined variable: payload.constructor'],
])('refuses %j with its position', async (source, message) => {
  expect(await failure(source)).toBe(message);
});

it('reads no file, whatever the template asks: the tags that name a partial do not parse, with their position', async () => {
  for (const tag of ['{% include "/etc/passwd" %}', '{% render "../package.json" %}', '{% layout "x" %}']) {
    expect(await failure(tag)).toMatch(/^line 1, column 1: `(include|render|layout)` is not available: templates have no partials to include$/);
  }
  expect(() => compileTemplate('Hi\n  {% if data.x %}{%- render "x", a: 1 -%}{% endif %}')).toThrow(new TemplateProblem('line 2, column 18: `render` is not available: templates have no partials to include'));
  expect(() => compileTemplate('{% liquid\n  include data.name %}')).toThrow(/^line 2, column 3: `include`/);
});

it('stops a render that would run away, and caps the output', async () => {
  expect(await failure('{% for i in (1..100000000) %}x{% endfor %}')).toContain('limit');
  const big = { text: 'x'.repeat(MAX_OUTPUT) };
  expect(await failure('{{ text }}!', big)).toBe(`the rendered output exceeds ${MAX_OUTPUT} characters`);
  expect(await render('{{ text }}', big)).toHaveLength(MAX_OUTPUT);
});
