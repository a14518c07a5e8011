// Used only by the Prisma CLI config. Works around Prisma issue 27403: with @prisma/adapter-pg 6.19,
// `migrate deploy` fails with "Column type 'name' could not be deserialized" because the adapter has no
// mapping for some catalog column types. Report those columns as text (or text[]) before Prisma reads them.
import { createRequire } from 'node:module';
import { PrismaPg } from '@prisma/adapter-pg';
import type pgTypes from 'pg';

// The adapter checks `instanceof Pool`: take `pg` from where the adapter loads it.
const pg: typeof pgTypes = createRequire(require.resolve('@prisma/adapter-pg'))('pg');

const TEXT = 25;
const TEXT_ARRAY = 1009;
// char, name, int2vector, regproc, oidvector, pg_node_tree, regclass
const AS_TEXT = new Set([18, 19, 22, 24, 30, 194, 2205]);
// char[], name[]
const AS_TEXT_ARRAY = new Set([1002, 1003]);
const patched = Symbol('flows.patchedQuery');

type Queryable = { query: (...args: any[]) => any; [patched]?: true };

function remapFields(result: { fields?: { dataTypeID: number }[] } | undefined) {
  for (const field of result?.fields ?? []) {
    if (AS_TEXT.has(field.dataTypeID)) field.dataTypeID = TEXT;
    else if (AS_TEXT_ARRAY.has(field.dataTypeID)) field.dataTypeID = TEXT_ARRAY;
  }
  return result;
}

function patchQuery<T extends Queryable>(target: T): T {
  if (target[patched]) return target;
  const query = target.query.bind(target);
  target.query = async (...args: unknown[]) => remapFields(await query(...args));
  target[patched] = true;
  return target;
}

export function migrationAdapter(url: string): PrismaPg {
  const pool = patchQuery(new pg.Pool({ connectionString: url }) as pgTypes.Pool & Queryable);
  const connect = pool.connect.bind(pool) as (callback?: unknown) => Promise<pgTypes.PoolClient> | void;
  // pg calls connect(callback) itself for pool.query; only the promise form hands a client to the adapter.
  (pool as { connect: unknown }).connect = (callback?: unknown) =>
    callback ? connect(callback) : (connect() as Promise<pgTypes.PoolClient & Queryable>).then(patchQuery);
  return new PrismaPg(pool);
}
