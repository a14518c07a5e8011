// `npm run owner:create -- --email EMAIL --password PASSWORD [--tenant NAME] [--add-tenant]`: creates an owner
// with a tenant of their own, or, told so with --add-tenant, adds an existing owner to a new tenant. Uses
// DATABASE_URL, BASE_URL and PORT like the server; without BASE_URL and PORT, the sign-in address it prints
// is the running server's (its instance row says where it serves).
import { parseArgs } from 'node:util';
import { ConfigError, loadConfig } from '../config';
import { openDatabase } from '../db/open';
import { AppError } from '../lib/errors';
import { createLogger } from '../lib/logger';
import { createOwnerService } from '../owners/owner-service';
import { servingUrl } from '../runs/runs-sweeps';

const USAGE = 'usage: npm run owner:create -- --email EMAIL --password PASSWORD [--tenant NAME] [--add-tenant]';

interface Io {
  log(line: string): void;
  error(line: string): void;
}

/** Runs the command; returns the exit code. */
export async function ownerCreate(args: string[], env: NodeJS.ProcessEnv, io: Io = console): Promise<number> {
  let values: { email?: string; password?: string; tenant?: string; 'add-tenant'?: boolean };
  try {
    ({ values } = parseArgs({ args, options: { email: { type: 'string' }, password: { type: 'string' }, tenant: { type: 'string' }, 'add-tenant': { type: 'boolean' } } }));
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
    const email = values.email.trim().toLowerCase();
    const { tenant, created } = await owners.createOwner({ email, password: values.password, tenantName: values.tenant, addTenant: values['add-tenant'] ?? false });
    // Told nothing of where the server is, the server says: it may have been started with a PORT of its own.
    const told = Boolean(env.BASE_URL?.trim() || env.PORT?.trim());
    const origin = (!told && (await servingUrl(db, config.instanceLapseSeconds * 1000))) || config.baseUrl.origin;
    io.log(
      created
        ? `Created owner ${email} with tenant "${tenant.name}" (${tenant.id}). Sign in at ${origin}/login`
        : `${email} already exists (password unchanged); added tenant "${tenant.name}" (${tenant.id}). Sign in at ${origin}/login`,
    );
    return 0;
  } catch (err) {
    if (!(err instanceof AppError)) throw err;
    io.error(err.code === 'owner_exists' ? `${err.message} To give them another tenant, run again with --add-tenant (their password stays as it is).` : err.message);
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
