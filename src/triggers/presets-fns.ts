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
];
