import type { HandlerMap } from '../http/types';
import type { GithubAppsService } from './github-apps-service';

export function githubAppsHandlers(apps: GithubAppsService): HandlerMap {
  return {
    listGithubApps: async ({ db }) => ({ status: 200, body: await apps.list(db) }),
    createGithubApp: async ({ db, body }) => ({ status: 201, body: await apps.create(db, body) }),
    getGithubApp: async ({ db, params }) => ({ status: 200, body: await apps.get(db, params.githubAppId) }),
    updateGithubApp: async ({ db, params, body }) => ({ status: 200, body: await apps.update(db, params.githubAppId, body) }),
    deleteGithubApp: async ({ db, params }) => {
      await apps.delete(db, params.githubAppId);
      return { status: 204, body: undefined };
    },
    runGithubAppDiagnostics: async ({ db, params }) => ({ status: 200, body: await apps.diagnose(db, params.githubAppId) }),
  };
}
