// Diagnostics of a VM-host connection, end to end: the token's permissions, a disposable VM that boots
// (with the image of a target on the connection), the agent on it reaching its model through the agent
// integration, and the VM destroyed. A failed step ends the probe, but a booted VM is always destroyed.
// Details say what was found, never a secret.
import type { components } from '../../generated/openapi';
import type { TenantDb } from '../db/tenant-scope';
import { NotFound } from '../lib/errors';
import { newId } from '../lib/ids';
import type { Outbound } from '../lib/outbound';
import type { SecretBox } from '../lib/secrets';
import { clip } from '../lib/text';
import { createConnectionsRepo } from './connections-repo';
import { agentClient, failureOf, ProviderError, vmhostClient } from './vmhost-client';
import { DEFAULT_TIMING, waitReady, type VmhostTiming } from './vmhost-executor';

type Diagnostics = components['schemas']['VmhostDiagnostics'];
type Step = Diagnostics['steps'][number];

const NEEDED = ['vms:create', 'vms:read', 'vms:delete'];

export function createDiagnosticsService({ box, outbound, timing = DEFAULT_TIMING }: { box: SecretBox; outbound: Outbound; timing?: VmhostTiming }) {
  const calls = { fetch: outbound.fetch, callTimeoutMs: timing.callTimeoutMs };
  return {
    async run(db: TenantDb, connectionId: string): Promise<Diagnostics> {
      const repo = createConnectionsRepo(db);
      const connection = await repo.find(connectionId);
      if (!connection) throw new NotFound('No such VM-host connection.');
      const vmhost = vmhostClient(connection.apiBaseUrl, box.open(connection.tokenCiphertext), calls);
      const startedAt = new Date();
      const steps: Step[] = [];
      const step = async (name: Step['step'], check: () => Promise<string>) => {
        const began = Date.now();
        try {
          steps.push({ step: name, ok: true, durationMs: Date.now() - began, detail: await check() });
          steps[steps.length - 1].durationMs = Date.now() - began;
          return true;
        } catch (err) {
          steps.push({ step: name, ok: false, durationMs: Date.now() - began, detail: failureOf(err) });
          return false;
        }
      };

      let vmId: string | null = null;
      const permitted = await step('token_permissions', async () => {
        const granted = await vmhost.permissions();
        const missing = NEEDED.filter((permission) => !(Array.isArray(granted) && granted.includes(permission)));
        if (missing.length) throw new ProviderError(`the token lacks ${missing.join(', ')}`);
        return 'The token may create, read and delete VMs.';
      });
      const booted =
        permitted &&
        (await step('vm_boot', async () => {
          const target = await db.executionTarget.findFirst({ where: { connectionId: connection.id, kind: 'vmhost' }, orderBy: { id: 'desc' } });
          if (!target?.image) throw new ProviderError('no execution target uses this connection; create one to name the image to boot');
          const began = Date.now();
          vmId = (await vmhost.createVm({ name: `flows-diagnostics-${newId('d')}`, image: target.image, size: target.size, region: target.region })).id;
          await waitReady(vmhost, vmId, timing, () => false);
          return `VM ${clip(vmId)} (image ${clip(target.image)}) booted in ${Math.round((Date.now() - began) / 100) / 10} s.`;
        }));
      if (booted) {
        await step('agent_model_reachability', async () => {
          const integration = await repo.findIntegration();
          if (!integration) throw new ProviderError('no agent integration is saved');
          const probe = await agentClient(integration.apiBaseUrl, box.open(integration.tokenCiphertext), calls).probe({ project: integration.project, vmId: vmId! });
          if (!probe.ok) throw new ProviderError(`the agent did not reach its model${probe.detail ? `: ${probe.detail}` : ''}`);
          return `The agent reached its model${probe.model ? ` (${probe.model})` : ''}.`;
        });
      }
      if (vmId) {
        const id: string = vmId;
        await step('vm_destroy', async () => {
          await vmhost.destroyVm(id);
          return `VM ${clip(id)} destroyed.`;
        });
      }
      const ok = steps.length === 4 && steps.every((s) => s.ok);
      if (ok) await db.vmhostConnection.updateMany({ where: { id: connection.id }, data: { lastVerifiedAt: new Date() } });
      return { connectionId: connection.id, ok, startedAt: startedAt.toISOString(), finishedAt: new Date().toISOString(), steps };
    },
  };
}

export type DiagnosticsService = ReturnType<typeof createDiagnosticsService>;
