// `npm run owner:create` against a real database: creation, a second tenant for an existing owner, and
// the refusals, with passwords stored only as scrypt hashes.
import { ownerCreate } from '../../src/cli/owner-create';
import { createTestDatabase, type TestDatabase } from '../support/databases';
import { createOwnerService } from '../../src/owners/owner-service';
import { createLogger } from '../../src/lib/logger';
import { createRunsSweeps } from '../../src/runs/runs-sweeps';

let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(() => database.drop());

async function run(...args: string[]) {
  return runWith({}, ...args);
}

async function runWith(env: NodeJS.ProcessEnv, ...args: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await ownerCreate(args, { DATABASE_URL: database.url, FLOWS_SECRET_KEY: 'a'.repeat(64), LOG_LEVEL: 'silent', ...env }, { log: (l) => out.push(l), error: (l) => err.push(l) });
  return { code, out: out.join('\n'), err: err.join('\n') };
}

it('creates an owner with a tenant; the password is stored hashed and signs in', async () => {
  const res = await run('--email', 'Maria@Acme.example', '--password', 'correct horse battery', '--tenant', 'Acme');
  expect(res).toMatchObject({ code: 0, err: '' });
  expect(res.out).toContain('Created owner maria@acme.example with tenant "Acme"');
  const owner = await database.db.owner.findUniqueOrThrow({ where: { email: 'maria@acme.example' }, include: { memberships: { include: { tenant: true } } } });
  expect(owner.memberships.map((m) => m.tenant.name)).toEqual(['Acme']);
  expect(owner.passwordHash).toMatch(/^scrypt\$32768\$8\$1\$/);
  expect(owner.passwordHash).not.toContain('correct horse battery');
  const owners = createOwnerService({ db: database.db });
  expect(await owners.authenticate('maria@acme.example', 'correct horse battery')).toBe(owner.id);
  expect(await owners.authenticate('maria@acme.example', 'wrong horse battery')).toBeNull();
});

it('refuses an email that has an owner, adding nothing, unless told to add a tenant', async () => {
  const tenants = await database.db.tenant.count();
  const again = await run('--email', 'Maria@acme.example', '--password', 'another password entirely', '--tenant', 'Globex');
  expect(again).toEqual({ code: 1, out: '', err: 'maria@acme.example is an owner already. To give them another tenant, run again with --add-tenant (their password stays as it is).' });
  expect(await database.db.tenant.count()).toBe(tenants);
});

it('adds an existing owner to a new tenant without changing the password, with --add-tenant', async () => {
  const res = await run('--email', 'maria@acme.example', '--password', 'another password entirely', '--tenant', 'Globex', '--add-tenant');
  expect(res.code).toBe(0);
  expect(res.out).toContain('already exists (password unchanged); added tenant "Globex"');
  const owners = createOwnerService({ db: database.db });
  const ownerId = await owners.authenticate('maria@acme.example', 'correct horse battery');
  expect((await owners.tenantsOf(ownerId!)).map((t) => t.name)).toEqual(['Acme', 'Globex']);
});

it('says where to sign in as the server would answer: BASE_URL, else PORT on localhost', async () => {
  const byPort = await runWith({ PORT: '4567' }, '--email', 'port@example.test', '--password', 'long enough password');
  expect(byPort.out).toMatch(/Sign in at http:\/\/localhost:4567\/login$/);
  const byBase = await runWith({ PORT: '4567', BASE_URL: 'https://flows.example.test' }, '--email', 'port@example.test', '--password', 'long enough password', '--tenant', 'Second', '--add-tenant');
  expect(byBase.out).toMatch(/Sign in at https:\/\/flows.example.test\/login$/);
});

it('told neither, says where the running server serves, as its instance row records it', async () => {
  const sweeps = createRunsSweeps({ db: database.db, instanceId: 'inst_owner_create', url: 'http://localhost:3300', lapseMs: 30_000, now: () => new Date(), logger: createLogger('silent') });
  await sweeps.join();
  try {
    const res = await run('--email', 'running@example.test', '--password', 'long enough password');
    expect(res.out).toMatch(/Sign in at http:\/\/localhost:3300\/login$/);
    // Told a PORT, it believes what it was told.
    const told = await runWith({ PORT: '4567' }, '--email', 'running@example.test', '--password', 'long enough password', '--tenant', 'Told', '--add-tenant');
    expect(told.out).toMatch(/Sign in at http:\/\/localhost:4567\/login$/);
  } finally {
    await sweeps.leave();
  }
  // With no server beating, the default.
  const none = await run('--email', 'stopped@example.test', '--password', 'long enough password');
  expect(none.out).toMatch(/Sign in at http:\/\/localhost:3000\/login$/);
});

it.each([
  [['--email', 'x@example.test'], 2, 'usage:'],
  [['--email', 'x@example.test', '--password', 'short'], 1, 'at least 10 characters'],
  [['--email', 'not-an-email', '--password', 'long enough password'], 1, 'email address is not valid'],
  [['--email', 'x@example.test', '--password', 'long enough password', '--bogus'], 2, "Unknown option '--bogus'"],
])('refuses %j with exit code %i', async (args, code, message) => {
  const res = await run(...args);
  expect(res.code).toBe(code);
  expect(res.err).toContain(message);
});

it.each([[''], ['   '], ['x'.repeat(121)]])('writes nothing when the tenant name %j is refused', async (tenant) => {
  const [owners, tenants] = await Promise.all([database.db.owner.count(), database.db.tenant.count()]);
  for (const email of ['orphan@example.test', 'maria@acme.example']) {
    const res = await run('--email', email, '--password', 'long enough password', '--tenant', tenant, '--add-tenant');
    expect(res.code).toBe(1);
    expect(res.err).toContain('tenant name must have 1 to 120 characters');
  }
  expect(await database.db.owner.count()).toBe(owners);
  expect(await database.db.tenant.count()).toBe(tenants);
  expect(await database.db.owner.findUnique({ where: { email: 'orphan@example.test' } })).toBeNull();
});

describe('bootstrap on first start', () => {
  it('creates the configured owner only while no owner exists', async () => {
    const fresh = await createTestDatabase();
    try {
      const owners = createOwnerService({ db: fresh.db });
      expect(await owners.bootstrap(null)).toBe('missing');
      expect(await owners.bootstrap({ email: 'first@example.test', password: 'first password here' })).toBe('created');
      expect(await owners.authenticate('first@example.test', 'first password here')).not.toBeNull();
      expect(await owners.bootstrap({ email: 'second@example.test', password: 'second password here' })).toBe('exists');
      expect(await fresh.db.owner.count()).toBe(1);
    } finally {
      await fresh.drop();
    }
  });
});
