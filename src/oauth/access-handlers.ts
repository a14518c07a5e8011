import { paginate } from '../http/pagination';
import type { HandlerMap } from '../http/types';
import type { AccessService } from './access-service';

export function accessHandlers(access: AccessService): HandlerMap {
  return {
    listAccessTokens: async ({ principal }) => ({ status: 200, body: await access.listAccessTokens(principal) }),
    revokeAccessToken: async ({ principal, params }) => {
      await access.revokeAccessToken(principal, params.tokenId);
      return { status: 204, body: undefined };
    },
    listAuthorizedClients: async ({ principal, query, req }) => {
      const { page, headers } = paginate(req, 'authorized-clients', await access.listAuthorizedClients(principal), query);
      return { status: 200, body: page, headers };
    },
    revokeAuthorizedClient: async ({ principal, params }) => {
      await access.revokeAuthorizedClient(principal, params.clientId);
      return { status: 204, body: undefined };
    },
  };
}
