// A stand-in coding agent for the local executor: a shell script whose behaviour the prompt chooses, so
// that one configured command covers success, failure, slow runs and structured results.
import { readdirSync, readFileSync } from 'node:fs';

const SCRIPT = `prompt=$(cat)
case "$prompt" in
  fail*) echo "working" ; echo "bad things happened" >&2 ; exit 3 ;;
  sleep*) echo "started" ; sleep 30 ; echo "never" ;;
  json*) echo "thinking" ; echo '{"summary":"done","pullRequestUrl":"https://example.test/pr/1"}' ;;
  *) echo "slug=$FLOWS_JOB_SLUG model=$FLOWS_MODEL effort=$FLOWS_EFFORT run=$FLOWS_RUN_ID" ;
     env | sort | cut -d= -f1 | tr '\\n' ' ' ; echo ;
     echo "dir=$PWD" ; echo "prompt=$prompt" ;;
esac
`;

/**
 * The command to configure as FLOWS_LOCAL_AGENT_COMMAND: the script itself, so that a sandboxed agent,
 * which sees none of the host's files, has it too.
 */
export function agentCommand(script = SCRIPT): string {
  return `eval "$(echo ${Buffer.from(script).toString('base64')} | base64 -d)"`;
}

/** Pids of processes that carry the run's id in their environment (the agent and what it started). */
export function processesOf(runId: string): number[] {
  return readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .filter((pid) => {
      try {
        return readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').includes(`FLOWS_RUN_ID=${runId}`);
      } catch {
        return false;
      }
    })
    .map(Number);
}
