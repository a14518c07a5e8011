// VM-host targets: every run boots a disposable VM through the target's connection, starts the coding
// agent on it through the agent integration, follows its output into the trace, and destroys the VM on
// every path (success, failure, timeout, stop; after a crash, `reap` destroys it at the next start).
// Tokens are opened from their sealed form here, for the calls, and go nowhere else.
import type { TenantDb } from '../db/tenant-scope';
import type { Outbound } from '../lib/outbound';
import { clip } from '../lib/text';
import type { SecretBox } from '../lib/secrets';
import { createConnectionsRepo } from './connections-repo';
import { failedAtStart, type Execution, type ExecutionEvents, type Executor, type Outcome, type RunSpec } from './executor';
import { createTargetsRepo } from './targets-repo';
import { agentClient, failureOf, ProviderError, vmhostClient, type ClientOptions } from './vmhost-client';

export interface VmhostTiming {
  /** How long a VM may take to boot. */
  bootTimeoutMs: number;
  /** How often the VM state and the agent output are read. */
  pollMs: number;
  /** How long one provider call may wait for its answer (15 s). */
  callTimeoutMs?: number;
}

export const DEFAULT_TIMING: VmhostTiming = { bootTimeoutMs: 5 * 60_000, pollMs: 1_000 };
/** Tries a poll gets when its failures may pass (a 5xx, 429, no answer): providers have hiccups. */
const POLL_ATTEMPTS = 3;

/** Reads by `poll`, trying again after a passing failure, POLL_ATTEMPTS times at most, until `givenUp`. */
function forgiving<A extends unknown[], T>(poll: (...args: A) => Promise<T>, pollMs: number, givenUp: () => boolean): (...args: A) => Promise<T> {
  return async (...args) => {
    for (let attempt = 1; ; attempt++) {
      try {
        return await poll(...args);
      } catch (err) {
        if (!(err instanceof ProviderError && err.transient) || attempt >= POLL_ATTEMPTS || givenUp()) throw err;
        await sleep(pollMs);
      }
    }
  };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The clients a run on `targetId` needs, or why it cannot run. */
export async function vmhostSetup(db: TenantDb, box: SecretBox, targetId: string, calls: ClientOptions) {
  const target = await createTargetsRepo(db).find(targetId);
  if (!target?.connectionId || !target.image) throw new ProviderError('the execution target no longer exists or has no connection and image');
  const repo = createConnectionsRepo(db);
  const connection = await repo.find(target.connectionId);
  if (!connection) throw new ProviderError('the VM-host connection of the target no longer exists');
  const integration = await repo.findIntegration();
  if (!integration) throw new ProviderError('no agent integration is saved (PUT /api/v1/integrations/agent-integration)');
  return {
    target,
    connection,
    vmhost: vmhostClient(connection.apiBaseUrl, box.open(connection.tokenCiphertext), calls),
    agent: agentClient(integration.apiBaseUrl, box.open(integration.tokenCiphertext), calls),
    project: integration.project,
  };
}

/** Waits until the VM is ready; throws when it fails or does not boot in time. */
export async function waitReady(vmhost: ReturnType<typeof vmhostClient>, vmId: string, { bootTimeoutMs, pollMs }: VmhostTiming, stopped: () => boolean) {
  const deadline = Date.now() + bootTimeoutMs;
  const getVm = forgiving(vmhost.getVm, pollMs, stopped);
  for (;;) {
    const vm = await getVm(vmId);
    if (vm?.status === 'ready') return;
    if (vm?.status === 'failed') throw new ProviderError('the VM failed to boot');
    if (stopped()) throw new ProviderError('stopped while the VM booted');
    if (Date.now() > deadline) throw new ProviderError(`the VM did not boot within ${bootTimeoutMs / 1000} seconds`);
    await sleep(pollMs);
  }
}

export interface VmhostDeps {
  tenantDb: (tenantId: string) => TenantDb;
  box: SecretBox;
  outbound: Outbound;
  timing?: VmhostTiming;
}

export function createVmhostExecutor({ tenantDb, box, outbound, timing = DEFAULT_TIMING }: VmhostDeps): Executor {
  const calls: ClientOptions = { fetch: outbound.fetch, callTimeoutMs: timing.callTimeoutMs };
  return {
    clonesRepository: true,
    async start(spec: RunSpec, events: ExecutionEvents): Promise<Execution> {
      // The provider's VM has its provider's network: a job's allowlist cannot hold there, so the run does not start.
      if (spec.network) return failedAtStart('vmhost', "The job sets a network allowlist, which a vmhost target cannot enforce: run it on a local or docker target, or remove the job's network.", 'setup');
      // Saving refuses this pairing; a job saved onto such a target some other way still does not start.
      if (spec.agent && spec.agent.kind !== 'command') return failedAtStart('vmhost', `A vmhost target runs only its own agent (\`command\`), not \`${spec.agent.kind}\`: run the job on a local or docker target.`, 'setup');
      let ending: 'timed_out' | 'canceled' | null = null;
      const deadline = Date.now() + spec.timeoutSeconds * 1000;
      let setup: Awaited<ReturnType<typeof vmhostSetup>>;
      let vmId: string;
      try {
        setup = await vmhostSetup(tenantDb(spec.tenantId), box, spec.targetId, calls);
        const vm = await setup.vmhost.createVm({ name: `flows-${spec.runId}`, image: setup.target.image!, size: setup.target.size, region: setup.target.region });
        vmId = vm.id;
      } catch (err) {
        return { ref: 'vmhost:none', done: Promise.resolve({ state: 'failed', error: `The VM could not be created: ${failureOf(err)}.`, cause: 'infrastructure' }), stop() {} };
      }
      const { vmhost, agent, connection } = setup;
      events.provisioning({ status: 'vm_requested', vmId });

      /** The run was stopped or ran out of time: nothing more is waited for. */
      const givenUp = () => ending !== null || Date.now() > deadline;
      const done = (async (): Promise<Outcome> => {
        let sessionId: string | null = null;
        try {
          await waitReady(vmhost, vmId, timing, givenUp);
          events.provisioning({ status: 'vm_ready', vmId });
          sessionId = await agent.start({ project: setup.project, vmId, prompt: spec.prompt, ...(spec.model ? { model: spec.model } : {}), ...(spec.effort ? { effort: spec.effort } : {}), ...(Object.keys(spec.env).length ? { env: spec.env } : {}), ...(spec.repository ? { repository: spec.repository } : {}) });
          const output = forgiving(agent.output, timing.pollMs, givenUp);
          let after = 0;
          for (;;) {
            if (ending === null && Date.now() > deadline) ending = 'timed_out';
            if (ending) {
              await agent.cancel(sessionId);
              break;
            }
            const out = await output(sessionId, after);
            for (const line of out.output) {
              events.output(line.stream === 'stderr' ? 'stderr' : 'stdout', String(line.text).slice(0, 8_000));
              after = Math.max(after, line.seq);
            }
            if (out.state === 'succeeded') return { state: 'succeeded', result: out.result && typeof out.result === 'object' ? out.result : {} };
            if (out.state === 'failed') return { state: 'failed', error: `The agent failed${out.error ? `: ${clip(out.error)}` : '.'}`, cause: 'agent' };
            await sleep(timing.pollMs);
          }
        } catch (err) {
          if (!ending) return { state: 'failed', error: `The run failed on the VM host: ${failureOf(err)}.`, cause: 'infrastructure' };
        } finally {
          // Every path ends here: the VM goes, whatever happened to the agent.
          await destroy(vmhost, vmId, events);
        }
        return ending === 'timed_out'
          ? { state: 'timed_out', error: `The run was still going after ${spec.timeoutSeconds} seconds.` }
          : { state: 'canceled', error: 'The run was stopped.' };
      })();
      return {
        ref: `vmhost:${spec.tenantId}:${connection.id}:${vmId}`,
        done,
        stop: () => {
          ending ??= 'canceled';
        },
      };
    },

    async reap(ref: string) {
      const [, tenantId, connectionId, vmId] = ref.split(':');
      if (!tenantId || !connectionId || !vmId) return;
      const connection = await createConnectionsRepo(tenantDb(tenantId)).find(connectionId);
      if (connection) await vmhostClient(connection.apiBaseUrl, box.open(connection.tokenCiphertext), calls).destroyVm(vmId).catch(() => {});
    },
  };
}

async function destroy(vmhost: ReturnType<typeof vmhostClient>, vmId: string, events: ExecutionEvents) {
  for (let attempt = 1; attempt <= 3; attempt++) {
    try {
      await vmhost.destroyVm(vmId);
      events.provisioning({ status: 'vm_destroyed', vmId });
      return;
    } catch (err) {
      if (attempt === 3) events.provisioning({ status: 'vm_destroy_failed', vmId, detail: clip((err as Error).message) });
      else await sleep(500 * attempt);
    }
  }
}
