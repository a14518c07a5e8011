// Where the real coding-agent CLIs are on this machine: named by an environment variable, else installed as
// packages, else in the folder they were first installed into by hand.
import { existsSync } from 'node:fs';
import path from 'node:path';

const CLIS = {
  claude: { variable: 'FLOWS_TEST_CLAUDE_BIN', file: '@anthropic-ai/claude-code/bin/claude.exe' },
  codex: { variable: 'FLOWS_TEST_CODEX_BIN', file: '@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex' },
} as const;

const FALLBACK_MODULES = '/tmp/agents/node_modules';

export function agentCliPath(cli: keyof typeof CLIS): string {
  const { variable, file } = CLIS[cli];
  const named = process.env[variable];
  if (named) return named;
  try {
    return require.resolve(file);
  } catch {
    // Not a dependency (yet), or the package's exports hide the file: try the fallback below.
  }
  const fallback = path.join(FALLBACK_MODULES, file);
  if (existsSync(fallback)) return fallback;
  throw new Error(`${cli} CLI not found: set ${variable}, or install ${file.split('/').slice(0, 2).join('/')}`);
}
