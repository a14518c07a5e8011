import type { HandlerMap } from '../http/types';
import type { AccountService } from './account-service';

export function accountHandlers(account: AccountService): HandlerMap {
  return {
    getMe: async ({ principal }) => ({ status: 200, body: await account.me(principal) }),
  };
}
