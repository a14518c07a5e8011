// `npm run owner:create -- --email EMAIL --password PASSWORD [--tenant NAME]`: creates an owner with a
// tenant of their own, or adds an existing owner to a new tenant. Uses DATABASE_URL like the server.
import { parseArgs } from 'node:util';
import { ConfigError, loadConfig } from '../config';
import { openDatabase } from '../db/open';
import { AppError } from '../lib/errors';
import { createLogger } from '../lib/logger';
import { createOwnerService } from '../owners/owner-service';

const USAGE = 'usage: npm run owner:create -- --email EMAIL --password PASSWORD [--tenant NAME]';

interface Io {
  log(line: string): void;
  error(line: string): void;
}

/** Runs the command; returns the exit code. */
export async function ownerCreate(args: string[], env: NodeJS.ProcessEnv, io: Io = console): Promise<number> {
  let values: { email?: string; password?: string; tenant?: string };
  try {
    ({ values } = parseArgs({ args, options: { email: { type: 'string' }, password: { type: 'string' }, tenant: { type: 'string' } } }));
  } catch (err) {
    io.error(`${(err as Error).message}\n${USAGE}`);
    return 2;
  }
  if (!values.email || !values.password) {
    io.error(USAGE);
    return 2;
  }
  const config = loadConfig(env);
  const db = await openDatabase(config, createLogger(config.logLevel === 'info' ? 'warn' : config.logLevel));
  try {
    const owners = createOwnerService({ db });
    const { tenant, created } = await owners.createOwner({ email: values.email, password: values.password, tenantName: values.tenant });
    io.log(
      created
        ? `Created owner ${values.email.trim().toLowerCase()} with tenant "${tenant.name}" (${tenant.id}). Sign in at ${config.baseUrl.origin}/login`
        : `${values.email.trim().toLowerCase()} already exists (password unchanged); added tenant "${tenant.name}" (${tenant.id}).`,
    );
    return 0;
  } catch (err) {
    if (!(err instanceof AppError)) throw err;
    io.error(err.message);
    return 1;
  } finally {
    await db.$disconnect();
  }
}

if (require.main === module) {
  ownerCreate(process.argv.slice(2), process.env).then(
    (code) => process.exit(code),
    (err) => {
      console.error(err instanceof ConfigError ? err.message : `owner:create failed: ${err instanceof Error ? err.message : err}`);
      process.exit(1);
    },
  );
}
