/**
 * A write refused by a unique index: Prisma's P2002, a raw statement's failure (P2010) that the driver
 * adapter reports as a unique constraint violation, or the database's own (a statement run directly,
 * sqlite-direct.ts and pg-direct.ts: PostgreSQL's 23505).
 */
export const isUniqueViolation = (err: unknown): boolean => {
  const { code, meta } = (err ?? {}) as { code?: string; meta?: { driverAdapterError?: { cause?: { kind?: string } } } };
  return code === 'P2002' || code === '23505' || code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY' || (code === 'P2010' && meta?.driverAdapterError?.cause?.kind === 'UniqueConstraintViolation');
};

const UNAVAILABLE_CODES = new Set(['P1001', 'P1002', 'P1008', 'P1017', 'P2024', 'ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'SQLITE_BUSY', '57P01', '57P03']);

const UNAVAILABLE_KINDS = new Set(['DatabaseNotReachable', 'SocketTimeout', 'TooManyConnections', 'ConnectionClosed']);

/** A database that cannot be reached (or is busy beyond its timeout) is a 503, not a 500. */
export function isDatabaseUnavailable(err: any): boolean {
  for (let e = err, depth = 0; e && depth < 5; e = e.cause, depth++) {
    if (e.name === 'PrismaClientInitializationError') return true;
    if (UNAVAILABLE_CODES.has(e.code) || UNAVAILABLE_CODES.has(e.errorCode)) return true;
    // The driver adapter's kind, on the error itself or on a raw statement's failure (P2010).
    if (UNAVAILABLE_KINDS.has(e.kind) || UNAVAILABLE_KINDS.has(e.meta?.driverAdapterError?.cause?.kind)) return true;
    // node-postgres's own: a broken connection (also when a transaction is rolled back on it), a pool that cannot connect.
    const lost = /ECONNREFUSED|Can't reach database|database is locked|Connection terminated|not queryable|timeout exceeded when trying to connect/i;
    if (typeof e.message === 'string' && lost.test(e.message)) return true;
  }
  return false;
}
