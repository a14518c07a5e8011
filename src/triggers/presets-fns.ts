// Jobs that are often wanted, offered with the trigger contexts: each is a job body to adapt, its conditions
// written out so that what it starts on, and what it refuses, is there to read and change.
import type { components } from '../../generated/openapi';

type Preset = NonNullable<components['schemas']['TriggerContexts']['presets']>[number];

/** Who may start work with a mention, as claude-code-action lets them: people with write access to the repository. */
export const WRITE_ACCESS = ['OWNER', 'MEMBER', 'COLLABORATOR'];

export const PRESETS: Preset[] = [
  {
    id: 'github-mention',
    name: 'Someone with write access mentions @flows in an issue or pull-request comment',
    description:
      'A webhook trigger on `issue_comment.created` that starts a run when the comment contains `@flows` (replace it with the name people will write), ' +
      "its author has write access (`author_association` OWNER, MEMBER or COLLABORATOR) and is not a bot: a comment by anyone else starts nothing, and the delivery's decision says which condition it failed. " +
      "The prompt gives the agent the comment's text; the workspace clones the repository onto `flows/issue-<number>`, so that a follow-up comment continues the same branch and pull request; " +
      "`report` reacts, keeps a progress comment and a check run. Fill in the trigger's `sourceId` (a GitHub webhook source), and `workspace.githubAppId`.",
    job: {
      name: 'Answer @flows mentions',
      promptTemplate:
        '{{ payload.comment.user.login }} asked, on {{ payload.repository.full_name }}#{{ payload.issue.number }} ("{{ payload.issue.title }}"):\n\n{{ payload.comment.body }}\n\nThe issue says:\n\n{{ payload.issue.body | default: "(no description)" }}',
      runNameTemplate: '#{{ payload.issue.number }}: {{ payload.comment.body | truncate: 60 }}',
      triggers: [
        {
          type: 'webhook',
          events: ['issue_comment.created'],
          conditions: {
            all: [
              { path: 'payload.comment.body', op: 'contains', value: '@flows' },
              { path: 'payload.comment.author_association', op: 'in', value: WRITE_ACCESS },
            ],
            none: [{ path: 'payload.comment.user.type', op: 'eq', value: 'Bot' }],
          },
        },
      ],
      agent: { kind: 'claude-code', continue: { key: 'payload.repository.full_name + "#" + string(payload.issue.number)' } },
      workspace: { repository: '{{ payload.repository.full_name }}', branch: 'flows/issue-{{ payload.issue.number }}', changes: 'pull-request' },
      report: { reaction: true, comment: true, checkRun: true },
    },
  },
  {
    id: 'slack-mention',
    name: 'Someone mentions the app in Slack',
    description:
      'A webhook trigger on `app_mention` (a Slack source, the app subscribed to the `app_mention` bot event) that starts a run for each mention of the app by a person: ' +
      "a message posted by a bot (`event.bot_id` set) starts nothing, so that bots cannot start work on each other's messages. " +
      'The prompt gives the agent the message; a mention in the same thread continues the same agent session; ' +
      '`report` puts 👀 on the mention and keeps one reply in its thread up to date with the run and its result. Fill in the trigger\'s `sourceId` (a Slack webhook source) and `report.senderConnectionId` (a Slack connection holding the app\'s bot token).',
    job: {
      name: 'Answer Slack mentions',
      promptTemplate: '<@{{ payload.event.user }}> asked in Slack:\n\n{{ payload.event.text }}',
      runNameTemplate: 'Slack: {{ payload.event.text | truncate: 60 }}',
      triggers: [{ type: 'webhook', events: ['app_mention'], conditions: { none: [{ path: 'payload.event.bot_id', op: 'exists', value: true }] } }],
      agent: { kind: 'claude-code', continue: { key: 'payload.event.channel + ":" + (has(payload.event.thread_ts) ? payload.event.thread_ts : payload.event.ts)' } },
      report: { reaction: true, comment: true },
    },
  },
  {
    id: 'sentry-issue',
    name: 'A Sentry issue was created for a project',
    description:
      'A webhook trigger on `issue.created` (a Sentry source, the integration subscribed to issue events) that starts a run for new issues of one project (replace `widgets` with its slug) at level `error` or worse. ' +
      "The prompt gives the agent the issue's title, culprit and link. Fill in the trigger's `sourceId` (a Sentry webhook source); add a `workspace` to let the agent work on the repository.",
    job: {
      name: 'Investigate new Sentry issues',
      promptTemplate: 'Sentry reported a new issue in {{ payload.data.issue.project.slug }}: "{{ payload.data.issue.title }}" ({{ payload.data.issue.culprit }}).\nDetails: {{ payload.data.issue.web_url }}\n\nFind the cause and propose a fix.',
      runNameTemplate: 'Sentry {{ payload.data.issue.shortId }}: {{ payload.data.issue.title | truncate: 60 }}',
      triggers: [
        {
          type: 'webhook',
          events: ['issue.created'],
          conditions: {
            all: [
              { path: 'payload.data.issue.project.slug', op: 'eq', value: 'widgets' },
              { path: 'payload.data.issue.level', op: 'in', value: ['error', 'fatal'] },
            ],
          },
        },
      ],
    },
  },
  {
    id: 'gitlab-mention',
    name: 'A merge request note mentions @flows',
    description:
      'A webhook trigger on `note.MergeRequest` (a GitLab source, the webhook sending comment events) that starts a run when the note contains `@flows` (replace it with the name people will write) and is not a system note. ' +
      "The prompt gives the agent the note and the merge request; a later note on the same merge request continues the same agent session. `report` puts 👀 on the note, keeps one note on the merge request up to date and a commit status on its head commit. Fill in the trigger's `sourceId` (a GitLab webhook source) and `report.senderConnectionId` (a GitLab connection).",
    job: {
      name: 'Answer @flows on merge requests',
      promptTemplate:
        '{{ payload.user.username }} asked, on {{ payload.project.path_with_namespace }}!{{ payload.merge_request.iid }} ("{{ payload.merge_request.title }}", branch `{{ payload.merge_request.source_branch }}`):\n\n{{ payload.object_attributes.note }}',
      runNameTemplate: '!{{ payload.merge_request.iid }}: {{ payload.object_attributes.note | truncate: 60 }}',
      triggers: [
        {
          type: 'webhook',
          events: ['note.MergeRequest'],
          conditions: {
            all: [{ path: 'payload.object_attributes.note', op: 'contains', value: '@flows' }],
            none: [{ path: 'payload.object_attributes.system', op: 'eq', value: true }],
          },
        },
      ],
      agent: { kind: 'claude-code', continue: { key: 'payload.project.path_with_namespace + "!" + string(payload.merge_request.iid)' } },
      report: { reaction: true, comment: true, checkRun: true },
    },
  },
];
