// Which errors mean the database is out of reach (a 503 with Retry-After), whatever layer raised them.
import { isDatabaseUnavailable } from '../../src/db/errors';

it.each([
  ['Prisma cannot reach the server', Object.assign(new Error("Can't reach database server at 127.0.0.1:5432"), { code: 'P1001' })],
  ['a raw statement on a closed connection', Object.assign(new Error('x'), { code: 'P2010', meta: { driverAdapterError: { cause: { kind: 'ConnectionClosed' } } } })],
  ['a reset socket', Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' })],
  ['a rollback on a broken node-postgres client', new Error('Client has encountered a connection error and is not queryable')],
  ['a pool that cannot connect in time', new Error('timeout exceeded when trying to connect')],
  ['a connection ended under a query', new Error('Connection terminated unexpectedly')],
  ['any of these as a cause', new Error('wrapped', { cause: new Error('Connection terminated unexpectedly') })],
])('%s is unavailability', (_, err) => expect(isDatabaseUnavailable(err)).toBe(true));

it.each([
  ['a unique violation', Object.assign(new Error('Unique constraint failed'), { code: 'P2002' })],
  ['a programming error', new TypeError("Cannot read properties of undefined (reading 'id')")],
  ['nothing', undefined],
])('%s is not', (_, err) => expect(isDatabaseUnavailable(err)).toBe(false));
