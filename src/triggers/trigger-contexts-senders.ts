// What a template sees in the payload of the four sender formats `gitlab`, `slack`, `sentry` and `jira`: their
// well-known `event.action` names and one row per payload variable, in the style of trigger-contexts-fns.ts.
// Written from each sender's published webhook documentation; test/fixtures/webhooks/ holds an example body per
// documented shape (its README names the pages) and test/unit/trigger-contexts-senders.test.ts checks every row
// against them.
//
// Event names, as Flows reads them (see `WebhookFormat` in the contract):
// - gitlab: the body's `object_kind`, then `object_attributes.action` (merge requests, issues),
//   `object_attributes.noteable_type` (notes) or `object_attributes.status` (pipelines); pushes have no action.
// - slack: Events API deliveries `event.type`, then `event.subtype` when present; slash commands `slash_command`,
//   then the command (`/flows` here; a workspace's own commands give their own names).
// - sentry: the `Sentry-Hook-Resource` header, then the body's `action`.
// - jira: the body's `webhookEvent` without `jira:`, then `issue_event_type_name` when present.

export type SenderFormat = 'gitlab' | 'slack' | 'sentry' | 'jira';

export interface SenderRow {
  trigger: 'webhook';
  provider: SenderFormat;
  /** One variable per event; without it the variable is on every delivery of the format. */
  events?: readonly string[];
  path: string;
  type: 'string' | 'number' | 'integer' | 'boolean' | 'object' | 'array' | 'null';
  description: string;
  example: unknown;
}

// GitLab
const GL_MR = ['merge_request.open', 'merge_request.update', 'merge_request.reopen', 'merge_request.merge'];
const GL_NOTE = ['note.MergeRequest', 'note.Issue', 'note.Commit'];
const GL_ISSUE = ['issue.open', 'issue.update', 'issue.reopen'];
const GL_PIPELINE = ['pipeline.failed', 'pipeline.success'];
const GL_PUSH = ['push', 'tag_push'];
/** Events whose body always has a `user` object (pushes name the user in top-level `user_*` fields instead). */
const GL_USER = [...GL_MR, ...GL_NOTE, ...GL_ISSUE];
/** GitLab's group-only events (members, subgroups, projects) carry neither `object_kind` nor `project`. */
const GL_ALL = [...GL_MR, ...GL_NOTE, ...GL_ISSUE, ...GL_PIPELINE, ...GL_PUSH];

// Slack
const SL_MESSAGE = ['message', 'message.thread_broadcast', 'message.file_share'];
const SL_EVENTS = ['app_mention', ...SL_MESSAGE];
const SL_COMMAND = ['slash_command./flows'];

// Sentry
const SN_ISSUE = ['issue.created', 'issue.resolved', 'issue.assigned', 'issue.unresolved', 'issue.ignored', 'issue.archived'];
const SN_ALERT = ['event_alert.triggered'];
const SN_ERROR = ['error.created'];
const SN_COMMENT = ['comment.created'];
const SN_METRIC = ['metric_alert.critical', 'metric_alert.resolved'];

// Jira
const JR_UPDATE = ['issue_updated.issue_updated', 'issue_updated.issue_assigned', 'issue_updated.issue_generic', 'issue_updated.issue_resolved'];
const JR_ISSUE = ['issue_created.issue_created', ...JR_UPDATE, 'issue_updated.issue_commented'];
const JR_COMMENT = ['comment_created', 'comment_updated'];
/** Events whose body carries the issue: comment events carry it too, with a subset of its fields. */
const JR_WITH_ISSUE = [...JR_ISSUE, ...JR_COMMENT];
const JR_WITH_COMMENT = ['issue_updated.issue_commented', ...JR_COMMENT];

/** Known `event.action` names (`event` alone when a delivery has no action) of each sender format. */
export const SENDER_EVENTS: Readonly<Record<SenderFormat, readonly string[]>> = {
  gitlab: GL_ALL,
  slack: [...SL_EVENTS, ...SL_COMMAND],
  sentry: [...SN_ISSUE, ...SN_ALERT, ...SN_ERROR, ...SN_COMMENT, ...SN_METRIC],
  jira: [...JR_ISSUE, ...JR_COMMENT],
};

const GL_PROJECT = 'https://gitlab.example.com/acme/widgets';
const GL_MR_URL = `${GL_PROJECT}/-/merge_requests/17`;
const GL_ISSUE_URL = `${GL_PROJECT}/-/issues/42`;
const GL_LABELS = [{ id: 206, title: 'agent', color: '#0e8a16', project_id: 7, type: 'ProjectLabel' }];
const GL_SHA = '6113728f27ae82c7b1a177c8d03f9e96e0adf246';

const SN_ISSUE_ID = '4509012345';
const SN_EVENT_ID = 'bb78c1407cea4519aa397afc059c793d';
const SN_ISSUE_WEB = `https://acme.sentry.io/issues/${SN_ISSUE_ID}/`;
const SN_EVENT_WEB = `${SN_ISSUE_WEB}events/${SN_EVENT_ID}/`;
const SN_ISSUE_API = `https://sentry.io/api/0/organizations/acme/issues/${SN_ISSUE_ID}/`;
const SN_TITLE = "TypeError: Cannot read properties of undefined (reading 'total')";
const SN_TAGS = [['browser', 'Chrome 125.0.0'], ['environment', 'production'], ['level', 'error'], ['release', 'widgets@2.4.1']];

const JR_ISSUE_API = 'https://acme.atlassian.net/rest/api/2/issue/10042';
const JR_CHANGE = [{ field: 'assignee', fieldtype: 'jira', fieldId: 'assignee', from: null, fromString: null, to: '712020:3f9b2c7e-5a41-4d8e-9c0b-7e1f2a3b4c5d', toString: 'Flows Agent' }];

export const SENDER_ROWS: readonly SenderRow[] = [
  { trigger: 'webhook', provider: 'gitlab', events: GL_ALL, path: 'payload.object_kind', type: 'string', description: 'Kind of event (`merge_request`, `note`, `issue`, `pipeline`, `push`, …).', example: 'merge_request' },
  { trigger: 'webhook', provider: 'gitlab', events: GL_ALL, path: 'payload.project.path_with_namespace', type: 'string', description: 'Project path as namespace/name.', example: 'acme/widgets' },
  { trigger: 'webhook', provider: 'gitlab', events: GL_ALL, path: 'payload.project.web_url', type: 'string', description: 'Web address of the project.', example: GL_PROJECT },
  { trigger: 'webhook', provider: 'gitlab', events: GL_ALL, path: 'payload.project.git_http_url', type: 'string', description: 'HTTPS clone address of the project.', example: `${GL_PROJECT}.git` },
  { trigger: 'webhook', provider: 'gitlab', events: GL_ALL, path: 'payload.project.default_branch', type: 'string', description: 'Default branch of the project.', example: 'main' },
  { trigger: 'webhook', provider: 'gitlab', events: GL_USER, path: 'payload.user.username', type: 'string', description: 'Username of the user who caused the event.', example: 'mlopez' },
  { trigger: 'webhook', provider: 'gitlab', events: GL_MR, path: 'payload.object_attributes.iid', type: 'integer', description: 'Number of the merge request within the project (`!17`).', example: 17 },
  { trigger: 'webhook', provider: 'gitlab', events: GL_MR, path: 'payload.object_attributes.title', type: 'string', description: 'Title of the merge request.', example: 'Debounce the save action' },
  { trigger: 'webhook', provider: 'gitlab', events: GL_MR, path: 'payload.object_attributes.description', type: 'string', description: 'Description of the merge request (Markdown); empty or null when there is none.', example: 'Closes #42.' },
  { trigger: 'webhook', provider: 'gitlab', events: GL_MR, path: 'payload.object_attributes.source_branch', type: 'string', description: 'Branch the changes come from.', example: 'fix/double-save' },
  { trigger: 'webhook', provider: 'gitlab', events: GL_MR, path: 'payload.object_attributes.target_branch', type: 'string', description: 'Branch the changes go into.', example: 'main' },
  { trigger: 'webhook', provider: 'gitlab', events: GL_MR, path: 'payload.object_attributes.url', type: 'string', description: 'Web address of the merge request.', example: GL_MR_URL },
  { trigger: 'webhook', provider: 'gitlab', events: GL_MR, path: 'payload.object_attributes.state', type: 'string', description: 'State of the merge request: `opened`, `closed`, `merged` or `locked`.', example: 'opened' },
  { trigger: 'webhook', provider: 'gitlab', events: GL_MR, path: 'payload.object_attributes.action', type: 'string', description: 'What happened: `open`, `update`, `reopen`, `merge`, `close`, `approved`, …', example: 'open' },
  { trigger: 'webhook', provider: 'gitlab', events: GL_MR, path: 'payload.object_attributes.draft', type: 'boolean', description: 'Whether the merge request is a draft.', example: false },
  { trigger: 'webhook', provider: 'gitlab', events: GL_MR, path: 'payload.object_attributes.last_commit.id', type: 'string', description: 'SHA of the newest commit on the source branch.', example: GL_SHA },
  { trigger: 'webhook', provider: 'gitlab', events: GL_MR, path: 'payload.labels', type: 'array', description: 'Labels of the merge request (`title`, `color`, …).', example: GL_LABELS },
  { trigger: 'webhook', provider: 'gitlab', events: ['merge_request.update', 'issue.update'], path: 'payload.changes', type: 'object', description: 'The attributes that changed, each as `previous` and `current`.', example: { title: { previous: 'Draft: Debounce the save action', current: 'Debounce the save action' } } },
  { trigger: 'webhook', provider: 'gitlab', events: GL_NOTE, path: 'payload.object_attributes.id', type: 'integer', description: 'Identifier of the comment.', example: 5678 },
  { trigger: 'webhook', provider: 'gitlab', events: GL_NOTE, path: 'payload.object_attributes.note', type: 'string', description: 'Body of the comment (Markdown).', example: '@flows please add a regression test for this.' },
  { trigger: 'webhook', provider: 'gitlab', events: GL_NOTE, path: 'payload.object_attributes.noteable_type', type: 'string', description: 'What was commented on: `MergeRequest`, `Issue`, `Commit` or `Snippet`.', example: 'MergeRequest' },
  { trigger: 'webhook', provider: 'gitlab', events: GL_NOTE, path: 'payload.object_attributes.url', type: 'string', description: 'Web address of the comment.', example: `${GL_MR_URL}#note_5678` },
  { trigger: 'webhook', provider: 'gitlab', events: ['note.MergeRequest'], path: 'payload.merge_request.iid', type: 'integer', description: 'Number of the commented merge request within the project.', example: 17 },
  { trigger: 'webhook', provider: 'gitlab', events: ['note.MergeRequest'], path: 'payload.merge_request.title', type: 'string', description: 'Title of the commented merge request.', example: 'Debounce the save action' },
  { trigger: 'webhook', provider: 'gitlab', events: ['note.MergeRequest'], path: 'payload.merge_request.source_branch', type: 'string', description: 'Source branch of the commented merge request.', example: 'fix/double-save' },
  { trigger: 'webhook', provider: 'gitlab', events: ['note.MergeRequest'], path: 'payload.merge_request.target_branch', type: 'string', description: 'Target branch of the commented merge request.', example: 'main' },
  { trigger: 'webhook', provider: 'gitlab', events: ['note.Issue'], path: 'payload.issue.iid', type: 'integer', description: 'Number of the commented issue within the project.', example: 42 },
  { trigger: 'webhook', provider: 'gitlab', events: ['note.Issue'], path: 'payload.issue.title', type: 'string', description: 'Title of the commented issue.', example: 'Saving a draft twice crashes the editor' },
  { trigger: 'webhook', provider: 'gitlab', events: ['note.Commit'], path: 'payload.commit.id', type: 'string', description: 'SHA of the commented commit.', example: GL_SHA },
  { trigger: 'webhook', provider: 'gitlab', events: GL_ISSUE, path: 'payload.object_attributes.iid', type: 'integer', description: 'Number of the issue within the project (`#42`).', example: 42 },
  { trigger: 'webhook', provider: 'gitlab', events: GL_ISSUE, path: 'payload.object_attributes.title', type: 'string', description: 'Title of the issue.', example: 'Saving a draft twice crashes the editor' },
  { trigger: 'webhook', provider: 'gitlab', events: GL_ISSUE, path: 'payload.object_attributes.description', type: 'string', description: 'Description of the issue (Markdown); empty or null when there is none.', example: 'Steps: open a draft, press Save twice quickly. The editor shows a blank page.' },
  { trigger: 'webhook', provider: 'gitlab', events: GL_ISSUE, path: 'payload.object_attributes.url', type: 'string', description: 'Web address of the issue.', example: GL_ISSUE_URL },
  { trigger: 'webhook', provider: 'gitlab', events: GL_ISSUE, path: 'payload.object_attributes.state', type: 'string', description: 'State of the issue: `opened` or `closed`.', example: 'opened' },
  { trigger: 'webhook', provider: 'gitlab', events: GL_ISSUE, path: 'payload.object_attributes.action', type: 'string', description: 'What happened: `open`, `update`, `close` or `reopen`.', example: 'open' },
  { trigger: 'webhook', provider: 'gitlab', events: GL_ISSUE, path: 'payload.labels', type: 'array', description: 'Labels of the issue (`title`, `color`, …).', example: GL_LABELS },
  { trigger: 'webhook', provider: 'gitlab', events: GL_PIPELINE, path: 'payload.user.username', type: 'string', description: 'Username of the user who started the pipeline; `user` is null when no user did.', example: 'mlopez' },
  { trigger: 'webhook', provider: 'gitlab', events: GL_PIPELINE, path: 'payload.object_attributes.id', type: 'integer', description: 'Identifier of the pipeline.', example: 1234 },
  { trigger: 'webhook', provider: 'gitlab', events: GL_PIPELINE, path: 'payload.object_attributes.status', type: 'string', description: 'Status of the pipeline: `failed`, `success`, `running`, `canceled`, …', example: 'failed' },
  { trigger: 'webhook', provider: 'gitlab', events: GL_PIPELINE, path: 'payload.object_attributes.ref', type: 'string', description: 'Branch or tag the pipeline ran for.', example: 'fix/double-save' },
  { trigger: 'webhook', provider: 'gitlab', events: GL_PIPELINE, path: 'payload.object_attributes.sha', type: 'string', description: 'SHA of the commit the pipeline ran for.', example: GL_SHA },
  { trigger: 'webhook', provider: 'gitlab', events: GL_PIPELINE, path: 'payload.object_attributes.source', type: 'string', description: 'What started the pipeline: `push`, `merge_request_event`, `schedule`, `web`, …', example: 'merge_request_event' },
  { trigger: 'webhook', provider: 'gitlab', events: GL_PIPELINE, path: 'payload.object_attributes.url', type: 'string', description: 'Web address of the pipeline.', example: `${GL_PROJECT}/-/pipelines/1234` },
  { trigger: 'webhook', provider: 'gitlab', events: GL_PIPELINE, path: 'payload.merge_request', type: 'object', description: 'The merge request the pipeline ran for (`iid`, `title`, `source_branch`, `target_branch`, `url`, …); null when it ran for none.', example: { id: 99, iid: 17, title: 'Debounce the save action', source_branch: 'fix/double-save', target_branch: 'main', state: 'opened', url: GL_MR_URL } },
  { trigger: 'webhook', provider: 'gitlab', events: GL_PIPELINE, path: 'payload.builds', type: 'array', description: 'Jobs of the pipeline (`name`, `stage`, `status`, `failure_reason`, …).', example: [{ id: 5611, stage: 'test', name: 'unit-tests', status: 'failed', failure_reason: 'script_failure' }] },
  { trigger: 'webhook', provider: 'gitlab', events: GL_PUSH, path: 'payload.user_username', type: 'string', description: 'Username of the user who pushed.', example: 'mlopez' },
  { trigger: 'webhook', provider: 'gitlab', events: GL_PUSH, path: 'payload.ref', type: 'string', description: 'The full ref that was pushed.', example: 'refs/heads/main' },
  { trigger: 'webhook', provider: 'gitlab', events: GL_PUSH, path: 'payload.after', type: 'string', description: 'SHA the ref points to after the push (all zeros when it was deleted).', example: GL_SHA },
  { trigger: 'webhook', provider: 'gitlab', events: ['push'], path: 'payload.commits', type: 'array', description: 'The pushed commits (`id`, `message`, `url`, `author`, …), at most the newest 20.', example: [{ id: GL_SHA, message: 'Debounce the save action', url: `${GL_PROJECT}/-/commit/${GL_SHA}` }] },

  { trigger: 'webhook', provider: 'slack', path: 'payload.team_id', type: 'string', description: 'Identifier of the Slack workspace.', example: 'T0ACME0001' },
  { trigger: 'webhook', provider: 'slack', path: 'payload.api_app_id', type: 'string', description: 'Identifier of the Slack app the delivery is for.', example: 'A0FLOWS001' },
  { trigger: 'webhook', provider: 'slack', events: SL_EVENTS, path: 'payload.event_id', type: 'string', description: 'Identifier of the event, the same on every retry.', example: 'Ev08ABCD1234' },
  { trigger: 'webhook', provider: 'slack', events: SL_EVENTS, path: 'payload.event_time', type: 'integer', description: 'When the event happened (Unix seconds).', example: 1749025313 },
  { trigger: 'webhook', provider: 'slack', events: SL_EVENTS, path: 'payload.authorizations', type: 'array', description: 'One installation of the app that can see the event (`team_id`, `user_id`, `is_bot`, …).', example: [{ enterprise_id: null, team_id: 'T0ACME0001', user_id: 'U0FLOWSBOT', is_bot: true, is_enterprise_install: false }] },
  { trigger: 'webhook', provider: 'slack', events: SL_EVENTS, path: 'payload.event.type', type: 'string', description: 'Type of the event: `app_mention` or `message`.', example: 'app_mention' },
  { trigger: 'webhook', provider: 'slack', events: SL_EVENTS, path: 'payload.event.user', type: 'string', description: 'Identifier of the user who wrote the message.', example: 'U0MLOPEZ01' },
  { trigger: 'webhook', provider: 'slack', events: SL_EVENTS, path: 'payload.event.text', type: 'string', description: 'Text of the message, with mentions as `<@U…>`.', example: '<@U0FLOWSBOT> the export to acme/widgets fails for large reports, can you fix it?' },
  { trigger: 'webhook', provider: 'slack', events: SL_EVENTS, path: 'payload.event.channel', type: 'string', description: 'Identifier of the channel or conversation.', example: 'C0WIDGETS1' },
  { trigger: 'webhook', provider: 'slack', events: SL_EVENTS, path: 'payload.event.ts', type: 'string', description: 'Timestamp of the message, which identifies it in its channel.', example: '1749025313.271449' },
  { trigger: 'webhook', provider: 'slack', events: SL_EVENTS, path: 'payload.event.thread_ts', type: 'string', description: "Timestamp of the thread's first message; absent when the message is not in a thread.", example: '1749025101.918209' },
  { trigger: 'webhook', provider: 'slack', events: SL_MESSAGE, path: 'payload.event.channel_type', type: 'string', description: 'Kind of conversation: `channel`, `group`, `im` or `mpim`.', example: 'channel' },
  { trigger: 'webhook', provider: 'slack', events: ['message.thread_broadcast', 'message.file_share'], path: 'payload.event.subtype', type: 'string', description: 'Subtype of the message.', example: 'thread_broadcast' },
  { trigger: 'webhook', provider: 'slack', events: ['message.file_share'], path: 'payload.event.files', type: 'array', description: 'The shared files (`id`, `name`, `mimetype`, `url_private`, …).', example: [{ id: 'F0LOGS0001', name: 'export-error.log', mimetype: 'text/plain' }] },
  { trigger: 'webhook', provider: 'slack', events: SL_COMMAND, path: 'payload.command', type: 'string', description: 'The slash command that was typed.', example: '/flows' },
  { trigger: 'webhook', provider: 'slack', events: SL_COMMAND, path: 'payload.text', type: 'string', description: 'What was typed after the command; empty when nothing was.', example: 'fix the flaky export test in acme/widgets' },
  { trigger: 'webhook', provider: 'slack', events: SL_COMMAND, path: 'payload.user_id', type: 'string', description: 'Identifier of the user who typed the command.', example: 'U0MLOPEZ01' },
  { trigger: 'webhook', provider: 'slack', events: SL_COMMAND, path: 'payload.user_name', type: 'string', description: 'Name of the user who typed the command (deprecated by Slack; prefer `user_id`).', example: 'mlopez' },
  { trigger: 'webhook', provider: 'slack', events: SL_COMMAND, path: 'payload.channel_id', type: 'string', description: 'Identifier of the channel the command was typed in.', example: 'C0WIDGETS1' },
  { trigger: 'webhook', provider: 'slack', events: SL_COMMAND, path: 'payload.channel_name', type: 'string', description: 'Name of the channel the command was typed in.', example: 'widgets' },
  { trigger: 'webhook', provider: 'slack', events: SL_COMMAND, path: 'payload.team_domain', type: 'string', description: 'Subdomain of the Slack workspace.', example: 'acme' },
  { trigger: 'webhook', provider: 'slack', events: SL_COMMAND, path: 'payload.trigger_id', type: 'string', description: 'Short-lived identifier for opening a modal in answer to the command.', example: '7213960592.1749025313.8b2f5c0e4d6a19f3c7e8a0b1d2c3e4f5' },
  { trigger: 'webhook', provider: 'slack', events: SL_COMMAND, path: 'payload.response_url', type: 'string', description: 'Address that accepts replies to the command for 30 minutes.', example: 'https://hooks.slack.com/commands/T0ACME0001/7213960592/Zq8RxT2mWv4nYp6bLk0sJd3F' },

  { trigger: 'webhook', provider: 'sentry', path: 'payload.action', type: 'string', description: 'What happened: `created`, `resolved`, `assigned`, `triggered`, …', example: 'created' },
  { trigger: 'webhook', provider: 'sentry', path: 'payload.installation.uuid', type: 'string', description: 'Identifier of the Sentry integration installation that sent the delivery.', example: '7c1d9e2a-4b3f-4e8a-9d6c-0f5b2a1e8c37' },
  { trigger: 'webhook', provider: 'sentry', path: 'payload.actor.type', type: 'string', description: 'Who caused the event: `user`, or `application` for Sentry itself.', example: 'application' },
  { trigger: 'webhook', provider: 'sentry', path: 'payload.actor.name', type: 'string', description: 'Name of the user who caused the event, or `Sentry`.', example: 'Sentry' },
  { trigger: 'webhook', provider: 'sentry', events: SN_ISSUE, path: 'payload.data.issue.id', type: 'string', description: 'Identifier of the issue.', example: SN_ISSUE_ID },
  { trigger: 'webhook', provider: 'sentry', events: SN_ISSUE, path: 'payload.data.issue.shortId', type: 'string', description: 'Short key of the issue.', example: 'WIDGETS-3K' },
  { trigger: 'webhook', provider: 'sentry', events: SN_ISSUE, path: 'payload.data.issue.title', type: 'string', description: 'Title of the issue, usually the error type and message.', example: SN_TITLE },
  { trigger: 'webhook', provider: 'sentry', events: SN_ISSUE, path: 'payload.data.issue.culprit', type: 'string', description: 'Where the error happened (function or transaction).', example: 'renderTotals(app/reports/summary)' },
  { trigger: 'webhook', provider: 'sentry', events: SN_ISSUE, path: 'payload.data.issue.level', type: 'string', description: 'Level of the issue: `fatal`, `error`, `warning`, `info` or `debug`.', example: 'error' },
  { trigger: 'webhook', provider: 'sentry', events: SN_ISSUE, path: 'payload.data.issue.status', type: 'string', description: 'Status of the issue: `unresolved`, `resolved` or `ignored`.', example: 'unresolved' },
  { trigger: 'webhook', provider: 'sentry', events: SN_ISSUE, path: 'payload.data.issue.substatus', type: 'string', description: 'Detail of the status: `new`, `ongoing`, `escalating`, `regressed`, `archived_forever`, …', example: 'new' },
  { trigger: 'webhook', provider: 'sentry', events: SN_ISSUE, path: 'payload.data.issue.platform', type: 'string', description: 'Platform of the project (`javascript`, `python`, …).', example: 'javascript' },
  { trigger: 'webhook', provider: 'sentry', events: SN_ISSUE, path: 'payload.data.issue.metadata', type: 'object', description: 'Error details (`type`, `value`, `filename`, …).', example: { type: 'TypeError', value: "Cannot read properties of undefined (reading 'total')", filename: 'app/reports/summary.ts' } },
  { trigger: 'webhook', provider: 'sentry', events: SN_ISSUE, path: 'payload.data.issue.permalink', type: 'string', description: 'Web address of the issue as Sentry serialises it, often null in webhooks (use `web_url`).', example: SN_ISSUE_WEB },
  { trigger: 'webhook', provider: 'sentry', events: SN_ISSUE, path: 'payload.data.issue.web_url', type: 'string', description: 'Web address of the issue.', example: SN_ISSUE_WEB },
  { trigger: 'webhook', provider: 'sentry', events: SN_ISSUE, path: 'payload.data.issue.project.slug', type: 'string', description: 'Slug of the Sentry project.', example: 'widgets' },
  { trigger: 'webhook', provider: 'sentry', events: SN_ISSUE, path: 'payload.data.issue.assignedTo', type: 'object', description: 'Who the issue is assigned to (`type`, `id`, `name`, `email`); null when unassigned.', example: { type: 'user', id: '2', name: 'Maria Lopez', email: 'maria@acme.example' } },
  { trigger: 'webhook', provider: 'sentry', events: SN_ALERT, path: 'payload.data.triggered_rule', type: 'string', description: 'Name of the alert rule that fired.', example: 'New error in widgets' },
  { trigger: 'webhook', provider: 'sentry', events: SN_ALERT, path: 'payload.data.event.event_id', type: 'string', description: 'Identifier of the event that fired the rule.', example: SN_EVENT_ID },
  { trigger: 'webhook', provider: 'sentry', events: SN_ALERT, path: 'payload.data.event.title', type: 'string', description: 'Title of the event, usually the error type and message.', example: SN_TITLE },
  { trigger: 'webhook', provider: 'sentry', events: SN_ALERT, path: 'payload.data.event.message', type: 'string', description: 'Logged message of the event; empty for most exceptions.', example: '' },
  { trigger: 'webhook', provider: 'sentry', events: SN_ALERT, path: 'payload.data.event.culprit', type: 'string', description: 'Where the error happened (function or transaction).', example: 'renderTotals(app/reports/summary)' },
  { trigger: 'webhook', provider: 'sentry', events: SN_ALERT, path: 'payload.data.event.level', type: 'string', description: 'Level of the event.', example: 'error' },
  { trigger: 'webhook', provider: 'sentry', events: SN_ALERT, path: 'payload.data.event.platform', type: 'string', description: 'Platform the event came from.', example: 'javascript' },
  { trigger: 'webhook', provider: 'sentry', events: SN_ALERT, path: 'payload.data.event.tags', type: 'array', description: 'Tags of the event, as `[key, value]` pairs.', example: SN_TAGS },
  { trigger: 'webhook', provider: 'sentry', events: SN_ALERT, path: 'payload.data.event.issue_id', type: 'string', description: 'Identifier of the issue the event belongs to.', example: SN_ISSUE_ID },
  { trigger: 'webhook', provider: 'sentry', events: SN_ALERT, path: 'payload.data.event.issue_url', type: 'string', description: 'API address of the issue the event belongs to.', example: SN_ISSUE_API },
  { trigger: 'webhook', provider: 'sentry', events: SN_ALERT, path: 'payload.data.event.web_url', type: 'string', description: 'Web address of the event.', example: SN_EVENT_WEB },
  { trigger: 'webhook', provider: 'sentry', events: SN_ERROR, path: 'payload.data.error.event_id', type: 'string', description: 'Identifier of the error event.', example: SN_EVENT_ID },
  { trigger: 'webhook', provider: 'sentry', events: SN_ERROR, path: 'payload.data.error.title', type: 'string', description: 'Title of the error, usually its type and message.', example: SN_TITLE },
  { trigger: 'webhook', provider: 'sentry', events: SN_ERROR, path: 'payload.data.error.message', type: 'string', description: 'Logged message of the error; empty for most exceptions.', example: '' },
  { trigger: 'webhook', provider: 'sentry', events: SN_ERROR, path: 'payload.data.error.culprit', type: 'string', description: 'Where the error happened (function or transaction).', example: 'renderTotals(app/reports/summary)' },
  { trigger: 'webhook', provider: 'sentry', events: SN_ERROR, path: 'payload.data.error.level', type: 'string', description: 'Level of the error.', example: 'error' },
  { trigger: 'webhook', provider: 'sentry', events: SN_ERROR, path: 'payload.data.error.platform', type: 'string', description: 'Platform the error came from.', example: 'javascript' },
  { trigger: 'webhook', provider: 'sentry', events: SN_ERROR, path: 'payload.data.error.tags', type: 'array', description: 'Tags of the error, as `[key, value]` pairs.', example: SN_TAGS },
  { trigger: 'webhook', provider: 'sentry', events: SN_ERROR, path: 'payload.data.error.issue_id', type: 'string', description: 'Identifier of the issue the error belongs to.', example: SN_ISSUE_ID },
  { trigger: 'webhook', provider: 'sentry', events: SN_ERROR, path: 'payload.data.error.web_url', type: 'string', description: 'Web address of the error event.', example: SN_EVENT_WEB },
  { trigger: 'webhook', provider: 'sentry', events: SN_COMMENT, path: 'payload.data.comment', type: 'string', description: 'Text of the comment on the issue.', example: '@flows can you look into this one?' },
  { trigger: 'webhook', provider: 'sentry', events: SN_COMMENT, path: 'payload.data.issue_id', type: 'integer', description: 'Identifier of the commented issue.', example: 4509012345 },
  { trigger: 'webhook', provider: 'sentry', events: SN_COMMENT, path: 'payload.data.project_slug', type: 'string', description: "Slug of the commented issue's project.", example: 'widgets' },
  { trigger: 'webhook', provider: 'sentry', events: SN_METRIC, path: 'payload.data.description_title', type: 'string', description: 'Title of the metric alert.', example: 'Critical: Error rate in widgets' },
  { trigger: 'webhook', provider: 'sentry', events: SN_METRIC, path: 'payload.data.description_text', type: 'string', description: 'What the metric alert measured.', example: '1000 events in the last 10 minutes' },
  { trigger: 'webhook', provider: 'sentry', events: SN_METRIC, path: 'payload.data.web_url', type: 'string', description: 'Web address of the alert.', example: 'https://acme.sentry.io/alerts/rules/details/12/' },

  { trigger: 'webhook', provider: 'jira', path: 'payload.webhookEvent', type: 'string', description: 'The event as Jira names it (`jira:issue_created`, `jira:issue_updated`, `comment_created`, …).', example: 'jira:issue_created' },
  { trigger: 'webhook', provider: 'jira', path: 'payload.timestamp', type: 'integer', description: 'When the event happened (Unix milliseconds).', example: 1749025313271 },
  { trigger: 'webhook', provider: 'jira', events: JR_ISSUE, path: 'payload.issue_event_type_name', type: 'string', description: 'What happened to the issue: `issue_created`, `issue_updated`, `issue_assigned`, `issue_generic`, `issue_commented`, …', example: 'issue_created' },
  { trigger: 'webhook', provider: 'jira', events: JR_ISSUE, path: 'payload.user.displayName', type: 'string', description: 'Display name of the user who caused the event.', example: 'Maria Lopez' },
  { trigger: 'webhook', provider: 'jira', events: JR_ISSUE, path: 'payload.user.accountId', type: 'string', description: 'Atlassian account id of the user who caused the event.', example: '5b10ac8d82e05b22cc7d4ef5' },
  { trigger: 'webhook', provider: 'jira', events: JR_WITH_ISSUE, path: 'payload.issue.id', type: 'string', description: 'Identifier of the issue.', example: '10042' },
  { trigger: 'webhook', provider: 'jira', events: JR_WITH_ISSUE, path: 'payload.issue.key', type: 'string', description: 'Key of the issue.', example: 'WID-42' },
  { trigger: 'webhook', provider: 'jira', events: JR_WITH_ISSUE, path: 'payload.issue.self', type: 'string', description: 'REST API address of the issue (its web page is `/browse/<key>` on the site).', example: JR_ISSUE_API },
  { trigger: 'webhook', provider: 'jira', events: JR_WITH_ISSUE, path: 'payload.issue.fields.summary', type: 'string', description: 'Summary (title) of the issue.', example: 'Export fails for reports over 10 MB' },
  { trigger: 'webhook', provider: 'jira', events: JR_WITH_ISSUE, path: 'payload.issue.fields.status.name', type: 'string', description: 'Workflow status of the issue.', example: 'To Do' },
  { trigger: 'webhook', provider: 'jira', events: JR_WITH_ISSUE, path: 'payload.issue.fields.issuetype.name', type: 'string', description: 'Type of the issue (`Bug`, `Story`, `Task`, …).', example: 'Bug' },
  { trigger: 'webhook', provider: 'jira', events: JR_WITH_ISSUE, path: 'payload.issue.fields.project.key', type: 'string', description: "Key of the issue's project.", example: 'WID' },
  { trigger: 'webhook', provider: 'jira', events: JR_WITH_ISSUE, path: 'payload.issue.fields.assignee.displayName', type: 'string', description: 'Display name of the assignee; the assignee is null when the issue is unassigned.', example: 'Flows Agent' },
  { trigger: 'webhook', provider: 'jira', events: JR_ISSUE, path: 'payload.issue.fields.description', type: 'string', description: 'Description of the issue (Jira wiki markup); null when empty.', example: 'Exporting the Q2 report times out after 30 seconds.' },
  { trigger: 'webhook', provider: 'jira', events: JR_ISSUE, path: 'payload.issue.fields.labels', type: 'array', description: 'Labels of the issue, as strings.', example: ['agent', 'export'] },
  { trigger: 'webhook', provider: 'jira', events: JR_UPDATE, path: 'payload.changelog.items', type: 'array', description: 'The fields that changed (`field`, `fromString`, `toString`, …).', example: JR_CHANGE },
  { trigger: 'webhook', provider: 'jira', events: JR_WITH_COMMENT, path: 'payload.comment.id', type: 'string', description: 'Identifier of the comment.', example: '10301' },
  { trigger: 'webhook', provider: 'jira', events: JR_WITH_COMMENT, path: 'payload.comment.body', type: 'string', description: 'Body of the comment (Jira wiki markup).', example: '[~accountid:712020:3f9b2c7e-5a41-4d8e-9c0b-7e1f2a3b4c5d] please take this one.' },
  { trigger: 'webhook', provider: 'jira', events: JR_WITH_COMMENT, path: 'payload.comment.author.displayName', type: 'string', description: 'Display name of the comment author.', example: 'Maria Lopez' },
];
