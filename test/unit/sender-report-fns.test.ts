// Where a Slack, Linear, Jira or GitLab delivery asked for the work, read from the senders' example payloads,
// and the progress message in each one's markup.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { gitlabTargetOf, jiraIssueOf, jiraProgress, linearTargetOf, slackProgress, slackTargetOf } from '../../src/senders/report-fns';

const payload = (name: string) => JSON.parse(readFileSync(path.join(__dirname, '../fixtures/webhooks', name), 'utf8'));
const context = (format: string, body: unknown) => ({ source: { format }, payload: body });

describe('where a delivery asked', () => {
  it('GitLab: the merge request or issue, with the note that asked and a merge request\'s head commit', () => {
    const note = payload('gitlab/note.MergeRequest.json');
    expect(gitlabTargetOf(context('gitlab', note))).toEqual({ projectId: note.project.id, kind: 'merge_requests', iid: note.merge_request.iid, noteId: note.object_attributes.id, sha: note.merge_request.last_commit.id });
    const opened = payload('gitlab/merge_request.open.json');
    expect(gitlabTargetOf(context('gitlab', opened))).toMatchObject({ kind: 'merge_requests', iid: opened.object_attributes.iid, noteId: null, sha: opened.object_attributes.last_commit.id });
    const issue = payload('gitlab/issue.open.json');
    expect(gitlabTargetOf(context('gitlab', issue))).toMatchObject({ kind: 'issues', iid: issue.object_attributes.iid, sha: null });
    // A pipeline asks nowhere; another sender's delivery is not GitLab's.
    expect(gitlabTargetOf(context('gitlab', payload('gitlab/pipeline.failed.json')))).toBeNull();
    expect(gitlabTargetOf(context('github', note))).toBeNull();
  });

  it('Slack: the message and its thread; a slash command has only its channel', () => {
    const mention = payload('slack/app_mention.json');
    expect(slackTargetOf(context('slack', mention))).toEqual({ channel: mention.event.channel, ts: mention.event.ts, threadTs: mention.event.thread_ts ?? mention.event.ts });
    expect(slackTargetOf(context('slack', { command: '/flows', channel_id: 'C1' }))).toEqual({ channel: 'C1', ts: null, threadTs: null });
  });

  it('Linear: a comment\'s issue and the comment; Jira: the issue\'s key', () => {
    expect(linearTargetOf(context('linear', { type: 'Comment', data: { id: 'c1', issueId: 'i1' } }))).toEqual({ issueId: 'i1', commentId: 'c1' });
    expect(linearTargetOf(context('linear', { type: 'Issue', data: { id: 'i2' } }))).toEqual({ issueId: 'i2', commentId: null });
    expect(linearTargetOf(context('linear', { type: 'Project', data: { id: 'p' } }))).toBeNull();
    expect(jiraIssueOf(context('jira', payload('jira/comment_created.json')))).toBe(payload('jira/comment_created.json').issue.key);
  });
});

describe('the progress message', () => {
  const progress = { runName: 'Fix <all> & *more*', runUrl: 'https://flows.example/console/runs/run_1', elapsedMs: 65_000, milestones: ['Pushed `flows/x_y`'], current: null, final: { state: 'succeeded', error: null, summary: 'Done [really] {now}', pullRequestUrl: 'https://github.com/a/b/pull/1', spent: null } };
  it('in Slack: control characters escaped, the run linked', () => {
    const text = slackProgress(progress);
    expect(text).toContain('*Flows: Fix &lt;all&gt; &amp; *more**');
    expect(text).toContain('*✅ Succeeded* after 1 min 5 s · <https://flows.example/console/runs/run_1|view the run>');
    expect(text).toContain('• Pull request: https://github.com/a/b/pull/1');
  });
  it('in Jira: markup escaped in what the run wrote, the pull request linked as it is', () => {
    const text = jiraProgress(progress);
    expect(text).toContain('*Flows: Fix <all> & \\*more\\**');
    expect(text).toContain('Done \\[really\\] \\{now\\}');
    expect(text).toContain('* Pushed `flows/x\\_y`');
    expect(text).toContain('* Pull request: https://github.com/a/b/pull/1');
  });
});
