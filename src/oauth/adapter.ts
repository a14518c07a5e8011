// Storage of the authorization server's records (clients, grants, codes, tokens, sessions,
// interactions) in the OidcPayload table, so that every instance shares them.
import { errors, type Adapter, type AdapterPayload } from 'oidc-provider';
import type { Db } from '../db/client';
import { accessTokenHandle, parseAccountId } from '../auth/accounts';
import { EXPIRED_GRACE_MS } from '../auth/lifetimes';

export function prismaAdapterFactory(db: Db, now = () => Date.now()) {
  return class PrismaAdapter implements Adapter {
    constructor(private readonly type: string) {}

    async upsert(id: string, payload: AdapterPayload, expiresIn: number): Promise<void> {
      const account = parseAccountId(payload.accountId);
      const columns = {
        payload: payload as object,
        grantId: this.type === 'Grant' ? id : (payload.grantId ?? null),
        userCode: payload.userCode ?? null,
        uid: payload.uid ?? null,
        accountId: account?.ownerId ?? null,
        tenantId: account?.tenantId ?? null,
        expiresAt: expiresIn ? new Date(now() + expiresIn * 1000) : null,
      };
      await db.oidcPayload.upsert({
        where: { type_id: { type: this.type, id } },
        create: { type: this.type, id, ...columns, handle: this.type === 'AccessToken' ? accessTokenHandle(id) : null },
        update: columns,
      });
    }

    find(id: string) {
      return this.findOne({ type: this.type, id });
    }

    findByUserCode(userCode: string) {
      return this.findOne({ type: this.type, userCode });
    }

    findByUid(uid: string) {
      return this.findOne({ type: this.type, uid });
    }

    /** Once only: of two exchanges racing with the same code or refresh token, the second is refused. */
    async consume(id: string): Promise<void> {
      const consumedAt = new Date(now());
      const row = await db.oidcPayload.findUnique({ where: { type_id: { type: this.type, id } }, select: { payload: true } });
      if (!row) return;
      const payload = { ...(row.payload as object), consumed: Math.floor(consumedAt.getTime() / 1000) };
      const { count } = await db.oidcPayload.updateMany({ where: { type: this.type, id, consumedAt: null }, data: { consumedAt, payload } });
      if (count === 0) throw new errors.InvalidGrant('grant already used');
    }

    async destroy(id: string): Promise<void> {
      await db.oidcPayload.deleteMany({ where: { type: this.type, id } });
    }

    /** The provider calls this once per kind of record; the grant itself goes through destroy(). */
    async revokeByGrantId(grantId: string): Promise<void> {
      await db.oidcPayload.deleteMany({ where: { type: this.type, grantId } });
    }

    private async findOne(where: { type: string; id?: string; userCode?: string; uid?: string }): Promise<AdapterPayload | undefined> {
      const row = await db.oidcPayload.findFirst({
        where: { ...where, OR: [{ expiresAt: null }, { expiresAt: { gt: new Date(now() - EXPIRED_GRACE_MS) } }] },
        select: { payload: true },
      });
      return (row?.payload as AdapterPayload | undefined) ?? undefined;
    }
  };
}
