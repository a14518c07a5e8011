// What the render pool copies to a worker: only the part of the context a template reads, by liquidjs's
// analysis of it. Rendering with that part gives the same output, and the same problems, as with the whole.
import { compileTemplate, pickPaths, renderTemplate, templatePaths, TemplateProblem } from '../../src/jobs/templates-fns';

const context = {
  event: 'issues',
  payload: {
    issue: { number: 42, title: 'Saving twice crashes', body: 'x'.repeat(1000), labels: [{ name: 'bug' }, { name: 'agent' }], user: { login: 'octocat', first: 'Ada' } },
    repository: { full_name: 'acme/widgets', topics: ['a', 'b'] },
    commits: Array.from({ length: 50 }, (_, i) => ({ id: `c${i}`, message: 'm'.repeat(200) })),
    at: new Date(0),
  },
  job: { id: 'job_1', slug: 'fix', name: 'Fix' },
};

const outcome = async (source: string, ctx: Record<string, unknown>) => {
  try {
    return await renderTemplate(compileTemplate(source), ctx);
  } catch (err) {
    if (err instanceof TemplateProblem) return `problem: ${err.message}`;
    throw err;
  }
};

it.each([
  'Issue #{{ payload.issue.number }}: {{ payload.issue.title }}',
  '{% for l in payload.issue.labels %}[{{ l.name }}]{% endfor %}',
  '{{ payload.issue.labels | map: "name" | join: ", " }} {{ payload.issue.labels.size }} {{ payload.issue.labels.first.name }}',
  '{{ payload.commits[3].id }} {{ payload.commits | size }}',
  '{% assign k = "title" %}{{ payload.issue[k] }}',
  '{% assign i = payload.issue %}{{ i.user.login }}',
  '{{ payload.issue.user.first }} {{ payload.repository.topics.last }}',
  '{{ payload.at | date: "%Y" }} {{ job.slug }}',
  '{% if payload.issue.missing %}there{% else %}not{% endif %}',
  '{{ payload.issue.nope }}',
  '{{ payload.issue.number.deeper }}',
  '{{ event.size }} {{ payload.repository }}',
  '{% for pair in payload.issue.user %}{{ pair[0] }}={{ pair[1] }};{% endfor %}',
  '{{ payload | json | size }}',
  '{{ payload["issue"]["number"] }} {{ payload.issue["user"].login }}',
  '{% tablerow l in payload.issue.labels cols: 1 %}{{ l.name }}{% endtablerow %}',
  '{% liquid\n  for c in payload.commits limit: 2 offset: 1\n    echo c.id\n  endfor\n%}',
  '{% case payload.issue.number %}{% when 42 %}yes{% else %}no{% endcase %}',
  '{{ payload.issue.labels | where: "name", "bug" | map: "name" | first }}',
  '{% capture t %}{{ payload.issue.title | upcase }}{% endcapture %}{{ t }}',
  '{{ payload.issue.number }}{% assign payload = "shadowed" %}{{ payload }}',
  '{% unless payload.issue.user.login == "x" %}{{ payload.issue.user.login }}{% endunless %}',
  '{%- for c in payload.commits reversed -%}{%- if forloop.index > 2 -%}{%- break -%}{%- endif -%}{{ c.id }}{%- endfor -%}',
])('%s renders the same from the part it reads', async (source) => {
  const picked = pickPaths(context, templatePaths(compileTemplate(source)));
  expect(await outcome(source, picked)).toBe(await outcome(source, context));
});

it('copies only what is read', () => {
  const picked = pickPaths(context, templatePaths(compileTemplate('{{ payload.issue.number }} {{ payload.repository.full_name }} {{ job.slug }}')));
  expect(picked).toEqual({ payload: { issue: { number: 42 }, repository: { full_name: 'acme/widgets' } }, job: { slug: 'fix' } });
  // A shorter path takes the whole, whichever comes first.
  expect(pickPaths(context, [['payload', 'issue', 'number'], ['payload', 'issue']])).toEqual({ payload: { issue: context.payload.issue } });
  expect(pickPaths(context, [['payload', 'issue'], ['payload', 'issue', 'number']])).toEqual({ payload: { issue: context.payload.issue } });
  expect(pickPaths(context, [['payload', 'commits', 3, 'id']])).toEqual({ payload: { commits: context.payload.commits } });
});
