// GitHub App connections: an app a tenant registered on GitHub, its private key sealed at rest and never
// answered, with diagnostics that ask GitHub what the key opens. Runs get their repository's credential
// here: an installation token for that one repository, with the permissions the job's changes need.
import { createPrivateKey } from 'node:crypto';
import type { components } from '../../generated/openapi';
import type { TenantDb } from '../db/tenant-scope';
import { Conflict, NotFound, ValidationFailed } from '../lib/errors';
import { newId } from '../lib/ids';
import { checkApiUrl, type Outbound } from '../lib/outbound';
import type { SecretBox } from '../lib/secrets';
import { clip } from '../lib/text';
import { createGithubApi, GithubFailure, type Permissions } from './github-api';
import { createGithubAppsRepo, type GithubAppRow } from './github-apps-repo';

type AppView = components['schemas']['GithubApp'];
type AppCreate = components['schemas']['GithubAppCreate'];
type AppUpdate = components['schemas']['GithubAppUpdate'];
type Diagnostics = components['schemas']['GithubAppDiagnostics'];
type Step = Diagnostics['steps'][number];

export const GITHUB_API = 'https://api.github.com';
const appNotFound = () => new NotFound('No such GitHub App connection.');

/** Where repositories are cloned from, when not given: github.com for its API, the host of a GitHub Enterprise Server API. */
export function webBaseOf(apiBaseUrl: string): string {
  const url = new URL(apiBaseUrl);
  if (url.hostname === 'api.github.com') return 'https://github.com';
  const prefix = url.pathname.replace(/\/+$/, '').replace(/\/api\/v3$/, '');
  return `${url.origin}${prefix}`;
}

/** The key must be a private RSA key in PEM, as GitHub hands them out. */
function checkKey(pem: string | undefined) {
  if (pem === undefined) return;
  let type: string | undefined;
  try {
    type = createPrivateKey(pem).asymmetricKeyType;
  } catch {
    throw new ValidationFailed('`privateKey` is not a private key in PEM: paste the whole .pem file GitHub let you download, with its BEGIN and END lines.');
  }
  if (type !== 'rsa') throw new ValidationFailed(`\`privateKey\` is a ${type} key; GitHub Apps sign with RSA keys.`);
}

function appView(row: GithubAppRow): AppView {
  return {
    id: row.id,
    name: row.name,
    appId: row.appId,
    apiBaseUrl: row.apiBaseUrl,
    webBaseUrl: row.webBaseUrl,
    hasWebhookSecret: row.webhookSecretCiphertext !== null,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
    lastVerifiedAt: row.lastVerifiedAt?.toISOString() ?? null,
  };
}

/** What a run's repository access is: the remote's site and API, and a token of the app for it alone. */
export interface RepositoryAccess {
  apiBaseUrl: string;
  webBaseUrl: string;
  token: string;
}

export function createGithubAppsService({ box, outbound }: { box: SecretBox; outbound: Outbound }) {
  const github = createGithubApi(outbound);

  async function found(db: TenantDb, id: string) {
    const row = await createGithubAppsRepo(db).find(id);
    if (!row) throw appNotFound();
    return row;
  }
  const credentials = (row: GithubAppRow) => ({ appId: row.appId, privateKey: box.open(row.privateKeyCiphertext), apiBaseUrl: row.apiBaseUrl });

  return {
    async create(db: TenantDb, input: AppCreate): Promise<AppView> {
      const apiBaseUrl = input.apiBaseUrl ?? GITHUB_API;
      checkApiUrl(outbound, apiBaseUrl, 'apiBaseUrl');
      checkApiUrl(outbound, input.webBaseUrl, 'webBaseUrl');
      checkKey(input.privateKey);
      const row = await createGithubAppsRepo(db).create({
        id: newId('gha'),
        name: input.name,
        appId: input.appId,
        apiBaseUrl,
        webBaseUrl: input.webBaseUrl ?? webBaseOf(apiBaseUrl),
        privateKeyCiphertext: box.seal(input.privateKey),
        webhookSecretCiphertext: input.webhookSecret ? box.seal(input.webhookSecret) : null,
      });
      return appView(row);
    },
    async list(db: TenantDb): Promise<AppView[]> {
      return (await createGithubAppsRepo(db).list()).map(appView);
    },
    async get(db: TenantDb, id: string): Promise<AppView> {
      return appView(await found(db, id));
    },
    async update(db: TenantDb, id: string, patch: AppUpdate): Promise<AppView> {
      checkApiUrl(outbound, patch.apiBaseUrl, 'apiBaseUrl');
      checkApiUrl(outbound, patch.webBaseUrl, 'webBaseUrl');
      checkKey(patch.privateKey);
      const { privateKey, webhookSecret, ...fields } = patch;
      const repo = createGithubAppsRepo(db);
      if (webhookSecret === null) {
        const bound = await repo.sourcesOf(id);
        if (bound > 0) throw new Conflict('in_use', `${bound === 1 ? 'A webhook source verifies' : `${bound} webhook sources verify`} deliveries with this app's webhook secret; delete ${bound === 1 ? 'it' : 'them'} first, or give the app a new secret instead.`);
      }
      const row = await repo.update(id, {
        ...fields,
        // A new API without a new site: the site follows the API, as it did at creation.
        ...(patch.apiBaseUrl && !patch.webBaseUrl ? { webBaseUrl: webBaseOf(patch.apiBaseUrl) } : {}),
        ...(privateKey ? { privateKeyCiphertext: box.seal(privateKey) } : {}),
        ...(webhookSecret !== undefined ? { webhookSecretCiphertext: webhookSecret === null ? null : box.seal(webhookSecret) } : {}),
      });
      if (!row) throw appNotFound();
      return appView(row);
    },
    async delete(db: TenantDb, id: string): Promise<void> {
      const repo = createGithubAppsRepo(db);
      await found(db, id);
      const users = await repo.usersOf(id);
      if (users > 0) throw new Conflict('in_use', `${users === 1 ? 'A job names' : `${users} jobs name`} this GitHub App connection (\`workspace.githubAppId\` or \`report.githubAppId\`); change or delete ${users === 1 ? 'it' : 'them'} first.`);
      const bound = await repo.sourcesOf(id);
      if (bound > 0) throw new Conflict('in_use', `${bound === 1 ? 'A webhook source is' : `${bound} webhook sources are`} bound to this GitHub App connection; delete ${bound === 1 ? 'it' : 'them'} first.`);
      if (!(await repo.delete(id))) throw appNotFound();
    },
    /**
     * The sealed webhook secret of the app a `github` source is bound to: the source verifies deliveries with
     * it. Refused when the app is not the tenant's or has no webhook secret.
     */
    async webhookSecretOf(db: TenantDb, id: string): Promise<string> {
      const row = await createGithubAppsRepo(db).find(id);
      if (!row) throw new ValidationFailed(`\`githubAppId\` "${clip(id)}" is not a GitHub App connection of this tenant.`);
      if (!row.webhookSecretCiphertext) throw new ValidationFailed(`The GitHub App connection ${clip(row.name)} has no webhook secret: set \`webhookSecret\` on it (PATCH /api/v1/github-apps/${row.id}) to the secret the app's settings on GitHub sign webhooks with.`);
      return row.webhookSecretCiphertext;
    },

    /** A job's workspace may name only an app of its tenant. */
    async checkExists(db: TenantDb, id: string | undefined, field: string): Promise<void> {
      if (id !== undefined && !(await createGithubAppsRepo(db).find(id))) {
        throw new ValidationFailed(`\`${field}\` "${clip(id)}" is not a GitHub App connection of this tenant.`);
      }
    },

    async diagnose(db: TenantDb, id: string): Promise<Diagnostics> {
      const row = await found(db, id);
      const startedAt = new Date();
      const steps: Step[] = [];
      const installations: Diagnostics['installations'] = [];
      const step = async (name: Step['step'], check: () => Promise<string>) => {
        const began = Date.now();
        try {
          const detail = await check();
          steps.push({ step: name, ok: true, durationMs: Date.now() - began, detail });
          return true;
        } catch (err) {
          const detail = err instanceof GithubFailure ? err.message : `The check failed: ${clip((err as Error).message)}`;
          steps.push({ step: name, ok: false, durationMs: Date.now() - began, detail });
          return false;
        }
      };
      const app = await github.asApp(credentials(row));
      const authenticated = await step('app_authentication', async () => {
        const about = await app.about();
        return `GitHub accepted the key for the app ${clip(about.slug ?? about.name ?? '?')} (app id ${row.appId}).`;
      });
      if (authenticated) {
        await step('installations', async () => {
          for (const installation of await app.installations()) {
            const { token } = await app.token(installation.id);
            const api = await github.withToken(row.apiBaseUrl, token);
            const reached = await api.repositories().finally(() => api.revoke().catch(() => {}));
            const account = installation.account as { login?: string; slug?: string } | null;
            installations.push({
              id: installation.id,
              account: account?.login ?? account?.slug ?? '?',
              repositorySelection: installation.repository_selection,
              repositories: reached.repositories.map((repository) => repository.full_name),
            });
          }
          if (!installations.length) throw new GithubFailure('The app is not installed anywhere: install it on the repositories its jobs work on (the app\'s page on GitHub, "Install App").', null);
          const repositories = installations.reduce((sum, installation) => sum + installation.repositories.length, 0);
          return `Installed on ${installations.length} account${installations.length === 1 ? '' : 's'}, reaching ${repositories} repositor${repositories === 1 ? 'y' : 'ies'}.`;
        });
      }
      const ok = steps.length === 2 && steps.every((s) => s.ok);
      if (ok) await createGithubAppsRepo(db).verified(row.id);
      return { githubAppId: row.id, ok, startedAt: startedAt.toISOString(), finishedAt: new Date().toISOString(), steps, installations };
    },

    /**
     * A token of the app for `owner/name` alone, with `permissions`; or why there is none (the connection is
     * gone, the app is not installed there, GitHub refused). `installationId`: the installation a delivery
     * came through (a source bound to the app), which spares asking GitHub for it.
     */
    async accessTo(db: TenantDb, id: string, owner: string, name: string, permissions: Permissions, installationId: number | null = null): Promise<{ access: RepositoryAccess; revoke(): Promise<void> } | { problem: string }> {
      const row = await createGithubAppsRepo(db).find(id);
      if (!row) return { problem: `The GitHub App connection ${clip(id)} that \`workspace.githubAppId\` names no longer exists.` };
      try {
        const app = await github.asApp(credentials(row));
        const installation = installationId ?? (await app.installationOf(owner, name));
        if (installation === null) return { problem: `The GitHub App ${clip(row.name)} is not installed on ${owner}/${name}, or cannot see it: install it there (the app's page on GitHub, "Install App").` };
        const { token } = await app.token(installation, [name], permissions);
        const access = { apiBaseUrl: row.apiBaseUrl, webBaseUrl: row.webBaseUrl, token };
        return { access, revoke: async () => void (await (await github.withToken(row.apiBaseUrl, token)).revoke().catch(() => {})) };
      } catch (err) {
        return { problem: err instanceof GithubFailure ? err.message : `GitHub could not be asked for a token: ${clip((err as Error).message)}` };
      }
    },

    github,
  };
}

export type GithubAppsService = ReturnType<typeof createGithubAppsService>;
