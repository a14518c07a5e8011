// What a template sees, per trigger type and webhook provider/event, and the Liquid filters: one table of
// data for template editors' autocomplete. Only webhook availability depends on the tenant.
import githubVariables from '../../generated/github-variables.json';
import { PRESETS } from './presets-fns';
import { SENDER_EVENTS, SENDER_ROWS } from './trigger-contexts-senders';
import type { components } from '../../generated/openapi';

export type TriggerContexts = components['schemas']['TriggerContexts'];
export type TriggerType = TriggerContexts['triggerTypes'][number]['type'];
export type WebhookFormat = components['schemas']['WebhookFormat'];
export type Variable = TriggerContexts['variables'][number];
type JsonType = 'string' | 'number' | 'integer' | 'boolean' | 'object' | 'array' | 'null';

export const TRIGGER_TYPES: readonly TriggerType[] = ['webhook', 'schedule', 'run', 'invocation'];

/** Known `event.action` names (`event` alone when a delivery has no action); empty when the sender defines them. */
export const PROVIDER_EVENTS: Readonly<Record<WebhookFormat, readonly string[]>> = {
  github: githubVariables.events,
  linear: ['Issue.create', 'Issue.update', 'Comment.create'],
  'standard-webhooks': [],
  'hmac-sha256': [],
  ...SENDER_EVENTS,
};

export const NO_WEBHOOK_SOURCE = 'Create a webhook source first (POST /api/v1/webhook-sources).';

interface VariableRow {
  /** `*`: runs of every trigger type see it. */
  trigger: TriggerType | '*';
  provider?: WebhookFormat;
  /** One variable per event; without it the variable is common to every event of the provider. */
  events?: readonly string[];
  path: string;
  type: JsonType;
  description: string;
  example: unknown;
}

const GH_ISSUE = ['issues.opened', 'issues.labeled', 'issue_comment.created'];
const GH_PR = ['pull_request.opened', 'pull_request.closed'];
const LN_ISSUE = ['Issue.create', 'Issue.update'];
const ISSUE_URL = 'https://github.com/acme/widgets/issues/42';
const LINEAR_URL = 'https://linear.app/acme/issue/ENG-123/export-fails-for-reports-over-10-mb';

const ROWS: readonly VariableRow[] = [
  { trigger: '*', path: 'job', type: 'object', description: 'The job being run.', example: { id: 'job_8f3k2m1q9zt4', slug: 'fix-issues', name: 'Fix labelled issues' } },
  { trigger: '*', path: 'job.id', type: 'string', description: 'Identifier of the job being run.', example: 'job_8f3k2m1q9zt4' },
  { trigger: '*', path: 'job.slug', type: 'string', description: 'Slug of the job being run.', example: 'fix-issues' },
  { trigger: '*', path: 'job.name', type: 'string', description: 'Name of the job being run.', example: 'Fix labelled issues' },

  { trigger: 'invocation', path: 'data', type: 'object', description: "The data sent by the caller, merged over the invocation trigger's `defaultData`.", example: { issueNumber: 42, branch: 'main' } },

  { trigger: 'schedule', path: 'data', type: 'object', description: 'The data configured on the schedule trigger.', example: { task: 'dependency-update' } },
  { trigger: 'schedule', path: 'schedule.slot', type: 'string', description: 'The cron slot that fired (ISO 8601 time).', example: '2025-06-04T01:00:00Z' },
  { trigger: 'schedule', path: 'schedule.cron', type: 'string', description: 'Cron expression of the schedule trigger.', example: '0 3 * * 1-5' },
  { trigger: 'schedule', path: 'schedule.timezone', type: 'string', description: 'IANA time zone the cron expression is read in.', example: 'Europe/Berlin' },

  { trigger: 'run', path: 'id', type: 'string', description: 'Identifier of the finished run of the watched job.', example: 'run_2h7d9s4k1x0p' },
  { trigger: 'run', path: 'jobId', type: 'string', description: 'Identifier of the watched job.', example: 'job_8f3k2m1q9zt4' },
  { trigger: 'run', path: 'invocationId', type: 'string', description: 'Identifier of the invocation that created the finished run; null when a trigger started it.', example: 'inv_5c8e1r7w3n2b' },
  { trigger: 'run', path: 'trigger.type', type: 'string', description: 'What started the finished run: `invocation`, `webhook`, `schedule` or `run`.', example: 'webhook' },
  { trigger: 'run', path: 'trigger.id', type: 'string', description: 'Identifier of the trigger that started the finished run; null for a direct invocation.', example: 'trg_labeled' },
  { trigger: 'run', path: 'replayOf', type: 'string', description: 'The run the finished run replayed; null when it is no replay.', example: 'run_7q1w4e8r2t6y' },
  { trigger: 'run', path: 'name', type: 'string', description: 'Name of the finished run.', example: 'Issue #42: Saving a draft twice crashes the editor' },
  { trigger: 'run', path: 'state', type: 'string', description: 'Final state: `succeeded`, `failed`, `timed_out` or `canceled`.', example: 'succeeded' },
  { trigger: 'run', path: 'result', type: 'object', description: 'Result of the finished run; null when it produced none.', example: { summary: 'Debounced the save action and added a regression test.', pullRequestUrl: 'https://github.com/acme/widgets/pull/43' } },
  { trigger: 'run', path: 'error', type: 'string', description: 'Why the run did not succeed; null when it succeeded.', example: 'The agent exited with code 1.' },
  { trigger: 'run', path: 'prompt', type: 'string', description: 'The rendered prompt of the finished run.', example: 'Investigate issue #42 in acme/widgets: "Saving a draft twice crashes the editor".' },
  { trigger: 'run', path: 'createdAt', type: 'string', description: 'When the finished run was created (ISO 8601).', example: '2025-06-04T08:21:54Z' },
  { trigger: 'run', path: 'startedAt', type: 'string', description: 'When the finished run started (ISO 8601); null when it never started.', example: '2025-06-04T08:22:10Z' },
  { trigger: 'run', path: 'finishedAt', type: 'string', description: 'When the finished run ended (ISO 8601).', example: '2025-06-04T08:31:45Z' },

  { trigger: 'webhook', path: 'source.id', type: 'string', description: 'Identifier of the webhook source that received the delivery.', example: 'src_9k2p5f8t1c4m' },
  { trigger: 'webhook', path: 'source.format', type: 'string', description: 'Format of the webhook source (see `WebhookFormat`).', example: 'github' },
  { trigger: 'webhook', path: 'event', type: 'string', description: 'Event name, as the format reads it (GitHub `X-GitHub-Event`, otherwise the body\'s `type`).', example: 'issues' },
  { trigger: 'webhook', path: 'action', type: 'string', description: "The body's `action`; null when the delivery has none.", example: 'labeled' },
  { trigger: 'webhook', path: 'payload', type: 'object', description: 'The parsed request body.', example: { type: 'invoice.paid', data: { id: 'inv_1042' } } },
  { trigger: 'webhook', path: 'headers', type: 'object', description: 'Request headers with lower-cased names; signatures and other credentials (authorization, cookies, tokens, API keys) are left out.', example: { 'content-type': 'application/json', 'user-agent': 'GitHub-Hookshot/5c5a0c1' } },
  { trigger: 'webhook', path: 'delivery.id', type: 'string', description: "The sender's delivery id; a repeated id starts nothing twice.", example: '72d3162e-cc78-11e3-81ab-4c9367dc0958' },
  { trigger: 'webhook', path: 'delivery.receivedAt', type: 'string', description: 'When the delivery was received (ISO 8601).', example: '2025-06-04T08:21:53Z' },

  { trigger: 'webhook', provider: 'github', path: 'payload.repository.full_name', type: 'string', description: 'Repository as owner/name.', example: 'acme/widgets' },
  { trigger: 'webhook', provider: 'github', path: 'payload.repository.default_branch', type: 'string', description: 'Default branch of the repository.', example: 'main' },
  { trigger: 'webhook', provider: 'github', path: 'payload.sender.login', type: 'string', description: 'Login of the user who caused the event.', example: 'octocat' },
  { trigger: 'webhook', provider: 'github', events: GH_ISSUE, path: 'payload.issue.number', type: 'integer', description: 'Number of the issue.', example: 42 },
  { trigger: 'webhook', provider: 'github', events: GH_ISSUE, path: 'payload.issue.title', type: 'string', description: 'Title of the issue.', example: 'Saving a draft twice crashes the editor' },
  { trigger: 'webhook', provider: 'github', events: GH_ISSUE, path: 'payload.issue.body', type: 'string', description: 'Body of the issue (Markdown); null when empty.', example: 'Steps: open a draft, press Save twice quickly. The editor shows a blank page.' },
  { trigger: 'webhook', provider: 'github', events: GH_ISSUE, path: 'payload.issue.html_url', type: 'string', description: 'Web address of the issue.', example: ISSUE_URL },
  { trigger: 'webhook', provider: 'github', events: GH_ISSUE, path: 'payload.issue.user.login', type: 'string', description: 'Login of the issue author.', example: 'octocat' },
  { trigger: 'webhook', provider: 'github', events: GH_ISSUE, path: 'payload.issue.labels', type: 'array', description: 'Labels of the issue (`name`, `color`, …).', example: [{ name: 'bug', color: 'd73a4a' }, { name: 'agent', color: '0e8a16' }] },
  { trigger: 'webhook', provider: 'github', events: ['issues.labeled'], path: 'payload.label.name', type: 'string', description: 'The label that was added.', example: 'agent' },
  { trigger: 'webhook', provider: 'github', events: ['issue_comment.created'], path: 'payload.comment.body', type: 'string', description: 'Body of the new comment (Markdown).', example: '@flows please fix this one.' },
  { trigger: 'webhook', provider: 'github', events: ['issue_comment.created'], path: 'payload.comment.user.login', type: 'string', description: 'Login of the comment author.', example: 'hubot' },
  { trigger: 'webhook', provider: 'github', events: ['issue_comment.created'], path: 'payload.comment.html_url', type: 'string', description: 'Web address of the comment.', example: `${ISSUE_URL}#issuecomment-2153947210` },
  { trigger: 'webhook', provider: 'github', events: GH_PR, path: 'payload.pull_request.number', type: 'integer', description: 'Number of the pull request.', example: 43 },
  { trigger: 'webhook', provider: 'github', events: GH_PR, path: 'payload.pull_request.title', type: 'string', description: 'Title of the pull request.', example: 'Debounce the save action' },
  { trigger: 'webhook', provider: 'github', events: GH_PR, path: 'payload.pull_request.body', type: 'string', description: 'Description of the pull request (Markdown); null when empty.', example: 'Fixes #42.' },
  { trigger: 'webhook', provider: 'github', events: GH_PR, path: 'payload.pull_request.head.ref', type: 'string', description: 'Branch the changes come from.', example: 'fix/double-save' },
  { trigger: 'webhook', provider: 'github', events: GH_PR, path: 'payload.pull_request.base.ref', type: 'string', description: 'Branch the changes go into.', example: 'main' },
  { trigger: 'webhook', provider: 'github', events: GH_PR, path: 'payload.pull_request.html_url', type: 'string', description: 'Web address of the pull request.', example: 'https://github.com/acme/widgets/pull/43' },
  { trigger: 'webhook', provider: 'github', events: GH_PR, path: 'payload.pull_request.user.login', type: 'string', description: 'Login of the pull request author.', example: 'octocat' },
  { trigger: 'webhook', provider: 'github', events: ['pull_request.closed'], path: 'payload.pull_request.merged', type: 'boolean', description: 'Whether the pull request was merged (false: closed without merging).', example: true },
  { trigger: 'webhook', provider: 'github', events: ['push'], path: 'payload.ref', type: 'string', description: 'The full ref that was pushed.', example: 'refs/heads/main' },
  { trigger: 'webhook', provider: 'github', events: ['push'], path: 'payload.after', type: 'string', description: 'Commit SHA the ref points to after the push.', example: '6113728f27ae82c7b1a177c8d03f9e96e0adf246' },
  { trigger: 'webhook', provider: 'github', events: ['push'], path: 'payload.head_commit.message', type: 'string', description: 'Message of the newest pushed commit; the head commit is null when a branch is deleted.', example: 'Debounce the save action (#43)' },
  { trigger: 'webhook', provider: 'github', events: ['push'], path: 'payload.head_commit.url', type: 'string', description: 'Web address of the newest pushed commit.', example: 'https://github.com/acme/widgets/commit/6113728f27ae82c7b1a177c8d03f9e96e0adf246' },
  { trigger: 'webhook', provider: 'github', events: ['push'], path: 'payload.commits', type: 'array', description: 'The pushed commits (`id`, `message`, `url`, `author`, …), at most 2048.', example: [{ id: '6113728f27ae82c7b1a177c8d03f9e96e0adf246', message: 'Debounce the save action (#43)', url: 'https://github.com/acme/widgets/commit/6113728f27ae82c7b1a177c8d03f9e96e0adf246' }] },

  { trigger: 'webhook', provider: 'linear', path: 'payload.type', type: 'string', description: 'Kind of entity the event is about.', example: 'Issue' },
  { trigger: 'webhook', provider: 'linear', path: 'payload.action', type: 'string', description: 'What happened: `create`, `update` or `remove`.', example: 'create' },
  { trigger: 'webhook', provider: 'linear', path: 'payload.url', type: 'string', description: 'Web address of the entity in Linear.', example: LINEAR_URL },
  { trigger: 'webhook', provider: 'linear', path: 'payload.actor.name', type: 'string', description: 'Name of the user or integration that caused the event.', example: 'Maria Lopez' },
  { trigger: 'webhook', provider: 'linear', events: LN_ISSUE, path: 'payload.data.id', type: 'string', description: 'Identifier (UUID) of the issue.', example: '8a9f7c31-2c4e-4b1a-9d6e-5f0b3a7e1c24' },
  { trigger: 'webhook', provider: 'linear', events: LN_ISSUE, path: 'payload.data.identifier', type: 'string', description: 'Human-readable issue key.', example: 'ENG-123' },
  { trigger: 'webhook', provider: 'linear', events: LN_ISSUE, path: 'payload.data.title', type: 'string', description: 'Title of the issue.', example: 'Export fails for reports over 10 MB' },
  { trigger: 'webhook', provider: 'linear', events: LN_ISSUE, path: 'payload.data.description', type: 'string', description: 'Description of the issue (Markdown); null when empty.', example: 'Exporting the Q2 report times out after 30 seconds.' },
  { trigger: 'webhook', provider: 'linear', events: LN_ISSUE, path: 'payload.data.url', type: 'string', description: 'Web address of the issue.', example: LINEAR_URL },
  { trigger: 'webhook', provider: 'linear', events: LN_ISSUE, path: 'payload.data.team.key', type: 'string', description: "Key of the issue's team.", example: 'ENG' },
  { trigger: 'webhook', provider: 'linear', events: LN_ISSUE, path: 'payload.data.state.name', type: 'string', description: 'Workflow state of the issue.', example: 'Todo' },
  { trigger: 'webhook', provider: 'linear', events: LN_ISSUE, path: 'payload.data.labels', type: 'array', description: 'Labels of the issue (`id`, `name`, `color`).', example: [{ id: 'c1d2e3f4-5a6b-4c7d-8e9f-0a1b2c3d4e5f', name: 'Bug', color: '#eb5757' }] },
  { trigger: 'webhook', provider: 'linear', events: ['Issue.update'], path: 'payload.updatedFrom', type: 'object', description: 'Previous values of the fields that changed.', example: { stateId: '3f2b6c1e-9a7d-4e5b-8c0f-1d2e3a4b5c6d', updatedAt: '2025-06-04T08:00:12.000Z' } },
  { trigger: 'webhook', provider: 'linear', events: ['Comment.create'], path: 'payload.data.id', type: 'string', description: 'Identifier (UUID) of the comment.', example: 'e4c1b7a2-6d3f-4a8e-9b0c-2f5d7e1a3c96' },
  { trigger: 'webhook', provider: 'linear', events: ['Comment.create'], path: 'payload.data.body', type: 'string', description: 'Body of the comment (Markdown).', example: 'Can the agent take this one?' },
  { trigger: 'webhook', provider: 'linear', events: ['Comment.create'], path: 'payload.data.issueId', type: 'string', description: 'Identifier (UUID) of the commented issue.', example: '8a9f7c31-2c4e-4b1a-9d6e-5f0b3a7e1c24' },
  ...SENDER_ROWS,
];

// Examples render against the variables' examples (test/unit/trigger-contexts.test.ts); only filters the
// engine defines, as strictFilters refuses any other.
const FILTERS: TriggerContexts['filters'] = [
  { name: 'default', description: 'Uses a fallback when the value is null, false or empty (the variable must still exist).', example: '{{ payload.issue.body | default: "(no description)" }}' },
  { name: 'truncate', description: 'Shortens a string to a number of characters, ending with "...".', example: '{{ payload.issue.title | truncate: 60 }}' },
  { name: 'truncatewords', description: 'Shortens a string to a number of words.', example: '{{ payload.issue.body | truncatewords: 30 }}' },
  { name: 'upcase', description: 'Converts a string to upper case.', example: '{{ state | upcase }}' },
  { name: 'downcase', description: 'Converts a string to lower case.', example: '{{ payload.data.identifier | downcase }}' },
  { name: 'capitalize', description: 'Capitalises the first character of a string.', example: '{{ payload.label.name | capitalize }}' },
  { name: 'strip', description: 'Removes whitespace from both ends of a string.', example: '{{ payload.comment.body | strip }}' },
  { name: 'lstrip', description: 'Removes whitespace from the start of a string.', example: '{{ payload.comment.body | lstrip }}' },
  { name: 'rstrip', description: 'Removes whitespace from the end of a string.', example: '{{ payload.comment.body | rstrip }}' },
  { name: 'strip_newlines', description: 'Removes line breaks from a string.', example: '{{ payload.pull_request.body | strip_newlines }}' },
  { name: 'strip_html', description: 'Removes HTML tags from a string.', example: '{{ payload.data.description | strip_html }}' },
  { name: 'replace', description: 'Replaces every occurrence of a substring.', example: '{{ payload.ref | replace: "refs/heads/", "" }}' },
  { name: 'replace_first', description: 'Replaces the first occurrence of a substring.', example: '{{ payload.pull_request.head.ref | replace_first: "fix/", "" }}' },
  { name: 'remove', description: 'Removes every occurrence of a substring.', example: '{{ payload.ref | remove: "refs/heads/" }}' },
  { name: 'remove_first', description: 'Removes the first occurrence of a substring.', example: '{{ payload.comment.body | remove_first: "@flows" }}' },
  { name: 'append', description: 'Adds a string at the end.', example: '{{ "agent/issue-" | append: payload.issue.number }}' },
  { name: 'prepend', description: 'Adds a string at the start.', example: '{{ payload.issue.number | prepend: "#" }}' },
  { name: 'slice', description: 'Takes a substring (or sub-array) from an offset, of a length.', example: '{{ payload.after | slice: 0, 7 }}' },
  { name: 'slugify', description: 'Turns a string into a lower-case, hyphenated slug, e.g. for branch names.', example: 'agent/{{ payload.issue.title | slugify }}' },
  { name: 'split', description: 'Splits a string into an array on a separator.', example: '{{ payload.repository.full_name | split: "/" | last }}' },
  { name: 'join', description: 'Joins the elements of an array with a separator.', example: '{{ payload.issue.labels | map: "name" | join: ", " }}' },
  { name: 'map', description: 'Takes one property of every element of an array.', example: '{{ payload.commits | map: "message" | join: "; " }}' },
  { name: 'where', description: 'Keeps the elements of an array whose property equals a value.', example: '{{ payload.issue.labels | where: "name", "agent" | size }}' },
  { name: 'reject', description: 'Drops the elements of an array whose property equals a value.', example: '{{ payload.issue.labels | reject: "name", "agent" | map: "name" | join: ", " }}' },
  { name: 'find', description: 'The first element of an array whose property equals a value.', example: '{% assign bug = payload.issue.labels | find: "name", "bug" %}{{ bug.color }}' },
  { name: 'first', description: 'The first element of an array.', example: '{{ payload.issue.labels | map: "name" | first }}' },
  { name: 'last', description: 'The last element of an array.', example: '{{ payload.data.labels | map: "name" | last }}' },
  { name: 'size', description: 'The number of elements of an array or characters of a string.', example: '{{ payload.issue.labels | size }}' },
  { name: 'sort', description: 'Sorts an array (case-sensitive).', example: '{{ payload.issue.labels | map: "name" | sort | join: ", " }}' },
  { name: 'sort_natural', description: 'Sorts an array, ignoring case.', example: '{{ payload.data.labels | map: "name" | sort_natural | join: ", " }}' },
  { name: 'uniq', description: 'Removes duplicate elements from an array.', example: '{{ payload.issue.labels | map: "name" | uniq | join: ", " }}' },
  { name: 'reverse', description: 'Reverses the order of an array.', example: '{{ payload.commits | reverse | map: "message" | join: "; " }}' },
  { name: 'compact', description: 'Removes nil elements from an array.', example: '{{ payload.commits | map: "message" | compact | size }}' },
  { name: 'plus', description: 'Adds a number.', example: '{{ payload.issue.number | plus: 1 }}' },
  { name: 'minus', description: 'Subtracts a number.', example: '{{ payload.pull_request.number | minus: 1 }}' },
  { name: 'times', description: 'Multiplies by a number.', example: '{{ payload.commits | size | times: 2 }}' },
  { name: 'divided_by', description: 'Divides by a number; with `true` as second argument, as integers.', example: '{{ payload.issue.body | size | divided_by: 80, true }}' },
  { name: 'modulo', description: 'The remainder of a division.', example: '{{ payload.issue.number | modulo: 2 }}' },
  { name: 'round', description: 'Rounds a number, to a number of decimals if given.', example: '{{ payload.issue.body | size | divided_by: 80 | round: 1 }}' },
  { name: 'ceil', description: 'Rounds a number up to an integer.', example: '{{ payload.issue.body | size | divided_by: 80 | ceil }}' },
  { name: 'floor', description: 'Rounds a number down to an integer.', example: '{{ payload.issue.body | size | divided_by: 80 | floor }}' },
  { name: 'at_least', description: 'Limits a number to a minimum.', example: '{{ payload.issue.labels | size | at_least: 1 }}' },
  { name: 'at_most', description: 'Limits a number to a maximum.', example: '{{ payload.commits | size | at_most: 20 }}' },
  { name: 'date', description: 'Formats a time (ISO 8601 string, or "now") with strftime directives.', example: '{{ schedule.slot | date: "%Y-%m-%d" }}' },
  { name: 'escape', description: 'Escapes HTML special characters.', example: '{{ payload.issue.title | escape }}' },
  { name: 'url_encode', description: 'Percent-encodes a string for use in a URL.', example: 'https://github.com/acme/widgets/issues?q={{ payload.issue.title | url_encode }}' },
  { name: 'json', description: 'Serialises a value as JSON, indented by a number of spaces if given.', example: '{{ data | json }}' },
];

/** The names a context of each trigger type holds at its top level: what its conditions may start with. */
const rootsOf = (trigger: VariableRow['trigger']): readonly string[] => [...new Set(ROWS.filter((row) => row.trigger === trigger).map((row) => row.path.split('.')[0]))];
export const CONTEXT_ROOTS: Readonly<Record<TriggerType, readonly string[]>> = { webhook: rootsOf('webhook'), schedule: rootsOf('schedule'), run: rootsOf('run'), invocation: rootsOf('invocation') };

/** What a template sees besides its trigger's context, whatever started the run. */
export const EVERY_RUN_ROOTS = rootsOf('*');

function expand({ trigger, provider, events, ...variable }: VariableRow): Variable[] {
  const triggers = trigger === '*' ? TRIGGER_TYPES : [trigger];
  return triggers.flatMap((type) => (events ?? [undefined]).map((event) => ({ trigger: type, ...(provider && { provider }), ...(event && { event }), ...variable, common: true })));
}

/**
 * The hand-written variables (the common ones), then every other GitHub payload field two levels deep that
 * GitHub's published schemas describe (generated/github-variables.json, from scripts/github-variables.mjs).
 */
function variables(): Variable[] {
  const common = ROWS.flatMap(expand);
  const known = new Set(common.filter((v) => v.provider === 'github').map((v) => `${v.event ?? '*'} ${v.path}`));
  const derived = (githubVariables.variables as { event: string; path: string; type: JsonType; description: string; example: unknown }[])
    .filter(({ event, path }) => !known.has(`${event} ${path}`) && !known.has(`* ${path}`))
    .map((variable): Variable => ({ trigger: 'webhook', provider: 'github', ...variable, common: false }));
  return [...common, ...derived];
}

function build(hasWebhookSource: boolean): TriggerContexts {
  return {
    triggerTypes: TRIGGER_TYPES.map((type) => (type === 'webhook' && !hasWebhookSource ? { type, available: false, reason: NO_WEBHOOK_SOURCE } : { type, available: true })),
    providers: (Object.keys(PROVIDER_EVENTS) as WebhookFormat[]).map((format) => ({ format, available: true, events: [...PROVIDER_EVENTS[format]] })),
    variables: variables(),
    filters: FILTERS,
    presets: PRESETS,
  };
}

const WITH_WEBHOOK_SOURCE = build(true);
const WITHOUT_WEBHOOK_SOURCE = build(false);

/** The autocomplete metadata; webhooks need a webhook source to deliver to. */
export function triggerContexts({ hasWebhookSource }: { hasWebhookSource: boolean }): TriggerContexts {
  return hasWebhookSource ? WITH_WEBHOOK_SOURCE : WITHOUT_WEBHOOK_SOURCE;
}
