// Handlers receive the database as the caller's tenant sees it: whatever a handler asks, it reads and
// writes that tenant's rows only.
import express from 'express';
import request from 'supertest';
import { SCOPES, type Principal } from '../../src/auth/principal';
import { createApi } from '../../src/http/api';
import { jsonBody } from '../../src/http/body';
import { loadContract } from '../../src/http/contract';
import { errorHandler } from '../../src/http/error-handler';
import { requestContext } from '../../src/http/request-context';
import { newId } from '../../src/lib/ids';
import { createLogger } from '../../src/lib/logger';
import { createTestDatabase, type TestDatabase } from '../support/databases';

let database: TestDatabase;
const A = newId('ten');
const B = newId('ten');

beforeAll(async () => {
  database = await createTestDatabase();
  await database.db.tenant.createMany({ data: [{ id: A, name: 'A' }, { id: B, name: 'B' }] });
  const connection = (tenantId: string, name: string) => ({ id: newId('vmc'), tenantId, name, apiBaseUrl: 'https://vmhost.example', tokenCiphertext: 'x' });
  await database.db.vmhostConnection.createMany({ data: [connection(A, 'a-1'), connection(B, 'b-1'), connection(B, 'b-2')] });
});
afterAll(() => database.drop());

/** An API whose listVmhostConnections handler answers what its `db` sees, for a caller in `tenantId`. */
async function appFor(tenantId: string) {
  const principal: Principal = { kind: 'session', ownerId: newId('own'), tenantId, sessionVersion: 1, scopes: new Set(SCOPES), clientId: null };
  const api = await createApi({
    db: database.db,
    contract: loadContract(),
    authorizer: { authorize: async () => principal },
    handlers: {
      listVmhostConnections: async ({ db }) => {
        const rows = await db.vmhostConnection.findMany({ orderBy: { name: 'asc' } });
        return { status: 200, body: rows.map((row) => ({ id: row.id, name: row.name })) as any };
      },
    },
  });
  return express().use(requestContext(createLogger('silent'))).use('/api', jsonBody, api.handle).use(errorHandler);
}

it('gives each handler the tenant-bound client of its caller', async () => {
  const names = async (tenantId: string) => (await request(await appFor(tenantId)).get('/api/v1/vmhost-connections')).body.map((c: { name: string }) => c.name);
  expect(await names(A)).toEqual(['a-1']);
  expect(await names(B)).toEqual(['b-1', 'b-2']);
});
