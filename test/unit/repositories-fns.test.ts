// The rules of repository workspaces and reporting that need no git and no network.
import { elapsed, progressBody, stepOf } from '../../src/lib/progress';
import { conclusionOf, githubTargetOf } from '../../src/repositories/report-fns';
import { apiOf, commitMessageOf, parseProjectPath, parseRepository, permissionsFor, pullRequestBody, spentLine } from '../../src/repositories/workspace-fns';
import { webBaseOf } from '../../src/repositories/github-apps-service';

describe('workspace rules', () => {
  it('read `owner/name`, and nothing that could lead elsewhere', () => {
    expect(parseRepository(' acme/widgets.git ')).toEqual({ owner: 'acme', name: 'widgets', site: null });
    expect(parseRepository('acme/wid.gets_2')).toEqual({ owner: 'acme', name: 'wid.gets_2', site: null });
    expect(parseRepository('https://github.com/acme/widgets')).toEqual({ owner: 'acme', name: 'widgets', site: 'https://github.com' });
    expect(parseRepository('https://ghe.example.com/git/acme/widgets.git')).toEqual({ owner: 'acme', name: 'widgets', site: 'https://ghe.example.com/git' });
    for (const bad of ['acme', 'acme/widgets/extra', '../etc/passwd', 'acme/..', '-x/y', 'acme/wid gets', 'https://u:p@github.com/acme/widgets', 'https://github.com/acme/widgets?x=1', 'ftp://github.com/acme/widgets']) {
      expect(parseRepository(bad)).toBeNull();
    }
    expect(apiOf('https://github.com')).toBe('https://api.github.com');
    expect(apiOf('https://ghe.example.com/')).toBe('https://ghe.example.com/api/v3');
  });

  it('ask for the least a run needs', () => {
    expect(permissionsFor('patch-only')).toEqual({ contents: 'read', metadata: 'read' });
    expect(permissionsFor('push')).toEqual({ contents: 'write', metadata: 'read' });
    expect(permissionsFor('pull-request')).toEqual({ contents: 'write', pull_requests: 'write', metadata: 'read' });
  });

  it('write a commit message from the job, else the run\'s name over the agent\'s summary', () => {
    expect(commitMessageOf('  Fix it  ', 'Run', 'Done.')).toBe('Fix it');
    expect(commitMessageOf(null, 'Issue #42: typo', 'Fixed the typo.')).toBe('Issue #42: typo\n\nFixed the typo.');
    expect(commitMessageOf(null, 'x'.repeat(100), null)).toBe(`${'x'.repeat(71)}…`);
  });

  it('show what a run spent, and say so when its cost is unknown', () => {
    expect(spentLine({ inputTokens: 24310, outputTokens: 566, cachedTokens: 0, turns: 3, costUsd: 0.1843, costSource: 'reported' })).toBe('24,310 tokens in, 566 out, 3 turns, $0.18');
    expect(spentLine({ inputTokens: 10, outputTokens: 1, cachedTokens: 0, turns: 1, costUsd: null, costSource: null } as never)).toBe('10 tokens in, 1 out, 1 turn, cost unknown');
    expect(spentLine(null)).toBeNull();
    const body = pullRequestBody({ summary: null, runUrl: 'https://flows.example/console/runs/run_1', usage: null, diffStat: { files: 1, insertions: 2, deletions: 0 } });
    expect(body).toContain('Run: https://flows.example/console/runs/run_1');
    expect(body).toContain('Changes: 1 file, +2 −0');
  });

  it('find the site of a GitHub API: github.com, or the host of an Enterprise Server', () => {
    expect(webBaseOf('https://api.github.com')).toBe('https://github.com');
    expect(webBaseOf('https://ghe.example.com/api/v3/')).toBe('https://ghe.example.com');
    expect(webBaseOf('http://127.0.0.1:8080/prefix/api/v3')).toBe('http://127.0.0.1:8080/prefix');
  });
});

describe('reporting rules', () => {
  const context = (event: string, payload: Record<string, unknown>) => ({ source: { id: 'src_1', format: 'github' }, event, payload });

  it('find where a GitHub delivery asked: the comment, the issue or pull request, the head commit', () => {
    expect(githubTargetOf(context('issue_comment', { repository: { full_name: 'acme/widgets' }, issue: { number: 5 }, comment: { id: 9 } }))).toEqual({
      owner: 'acme',
      name: 'widgets',
      number: 5,
      comment: { id: 9, review: false },
      isPullRequest: false,
      headSha: null,
    });
    expect(githubTargetOf(context('pull_request_review_comment', { repository: { full_name: 'acme/widgets' }, pull_request: { number: 7, head: { sha: 'abc' } }, comment: { id: 3 } }))).toMatchObject({
      number: 7,
      comment: { id: 3, review: true },
      isPullRequest: true,
      headSha: 'abc',
    });
    expect(githubTargetOf(context('issue_comment', { repository: { full_name: 'acme/widgets' }, issue: { number: 5, pull_request: {} }, comment: { id: 9 } }))?.isPullRequest).toBe(true);
    expect(githubTargetOf({ source: { format: 'linear' }, payload: { repository: { full_name: 'acme/widgets' } } })).toBeNull();
    expect(githubTargetOf({ data: {} })).toBeNull();
  });

  it('tell steps from milestones', () => {
    expect(stepOf('workspace', { step: 'pushed', branch: 'flows/issue-5' })).toEqual({ milestone: 'Pushed `flows/issue-5`' });
    expect(stepOf('command', { command: 'npm test' })).toEqual({ current: 'Ran `npm test`' });
    expect(stepOf('agent_output', { text: 'x' })).toBeNull();
  });

  it('write the progress comment while the run goes and when it ends', () => {
    const going = progressBody({ runName: '#5: fix', runUrl: 'https://f/console/runs/r', elapsedMs: 72_000, milestones: ['Cloned acme/widgets at `main`'], current: 'Ran `npm test`', final: null });
    expect(going).toBe('### Flows: #5: fix\n**⏳ Working** · 1 min 12 s · [view the run](https://f/console/runs/r)\n\n- Cloned acme/widgets at `main`\n- Ran `npm test` …');
    const done = progressBody({ runName: '#5: fix', runUrl: 'u', elapsedMs: 5_000, milestones: [], current: 'Ran `x`', final: { state: 'succeeded', error: null, summary: 'Fixed.', pullRequestUrl: 'https://github.com/acme/widgets/pull/6', spent: '1 tokens in, $0.01' } });
    expect(done).toContain('**✅ Succeeded** after 5 s');
    expect(done).not.toContain('Ran `x`');
    expect(done).toContain('- Pull request: https://github.com/acme/widgets/pull/6\n- Spent: 1 tokens in, $0.01');
    expect(progressBody({ runName: 'r', runUrl: 'u', elapsedMs: 0, milestones: [], current: null, final: { state: 'failed', error: 'The agent exited with code 1.', summary: null, pullRequestUrl: null, spent: null } })).toContain('> The agent exited with code 1.');
    expect(elapsed(3_725_000)).toBe('1 h 2 min');
    expect([conclusionOf('succeeded'), conclusionOf('failed'), conclusionOf('timed_out'), conclusionOf('canceled')]).toEqual(['success', 'failure', 'timed_out', 'cancelled']);
  });
});

describe('a GitLab project\'s path', () => {
  it('takes groups and subgroups, and nothing that is not a path', () => {
    expect(parseProjectPath('acme/widgets')).toBe('acme/widgets');
    expect(parseProjectPath(' acme/platform/widgets.git ')).toBe('acme/platform/widgets');
    expect(parseProjectPath('widgets')).toBeNull();
    expect(parseProjectPath('acme/../etc')).toBeNull();
    expect(parseProjectPath('acme/wid gets')).toBeNull();
    expect(parseProjectPath('https://gitlab.example.com/acme/widgets')).toBeNull();
  });
});
