import type { components } from '../../generated/openapi';
import type { Db } from '../db/client';
import type { Principal } from '../auth/principal';
import { NotFound } from '../lib/errors';

export type Me = components['schemas']['Me'];

export function createAccountService({ db }: { db: Db }) {
  return {
    async me(principal: Principal): Promise<Me> {
      const membership = await db.membership.findUnique({
        where: { tenantId_ownerId: { tenantId: principal.tenantId, ownerId: principal.ownerId } },
        select: { owner: { select: { id: true, email: true } }, tenant: { select: { id: true, name: true } } },
      });
      if (!membership) throw new NotFound();
      return {
        owner: membership.owner,
        tenant: membership.tenant,
        credential: { type: principal.kind, scopes: [...principal.scopes].sort(), clientId: principal.clientId },
      };
    },
  };
}

export type AccountService = ReturnType<typeof createAccountService>;
