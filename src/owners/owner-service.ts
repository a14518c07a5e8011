// Owners and their tenants: creation (CLI, bootstrap, open sign-up), sign-in, sign-out everywhere.
import type { Db } from '../db/client';
import { Conflict, ValidationFailed } from '../lib/errors';
import { newId } from '../lib/ids';
import { decoyHash, hashPassword, passwordProblem, verifyPassword } from './passwords';

export interface TenantRef {
  id: string;
  name: string;
}

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
export const normaliseEmail = (email: string) => email.trim().toLowerCase();

function checkEmail(email: string): string {
  const normalised = normaliseEmail(email);
  if (!EMAIL.test(normalised) || normalised.length > 254) throw new ValidationFailed('The email address is not valid.');
  return normalised;
}

function checkTenantName(name: string): string {
  const trimmed = name.trim();
  if (trimmed.length < 1 || trimmed.length > 120) throw new ValidationFailed('The tenant name must have 1 to 120 characters.');
  return trimmed;
}

export function createOwnerService({ db }: { db: Db }) {
  /** A new tenant with the owner as its member, written together. */
  async function newTenantFor(ownerId: string, tenantName: string): Promise<TenantRef> {
    return db.tenant.create({
      data: { id: newId('ten'), name: checkTenantName(tenantName), memberships: { create: { id: newId('mem'), ownerId } } },
      select: { id: true, name: true },
    });
  }

  /**
   * Creates the owner with a tenant of their own; for an existing owner, refuses unless `addTenant`, which
   * adds a new tenant and leaves the password as it is. Everything is checked before anything is written, and owner, tenant and
   * membership are written in one nested create (one transaction), so a failure leaves nothing behind.
   */
  async function createOwner(input: { email: string; password: string; tenantName?: string; addTenant?: boolean }): Promise<{ ownerId: string; tenant: TenantRef; created: boolean }> {
    const email = checkEmail(input.email);
    const existing = await db.owner.findUnique({ where: { email }, select: { id: true } });
    if (existing && !input.addTenant) throw new Conflict('owner_exists', `${email} is an owner already.`);
    if (existing) return { ownerId: existing.id, tenant: await newTenantFor(existing.id, input.tenantName ?? email), created: false };
    const tenantName = checkTenantName(input.tenantName ?? email.split('@')[0]);
    const problem = passwordProblem(input.password);
    if (problem) throw new ValidationFailed(problem);
    const passwordHash = await hashPassword(input.password);
    const owner = await db.owner.create({
      data: {
        id: newId('own'),
        email,
        passwordHash,
        memberships: { create: { id: newId('mem'), tenant: { create: { id: newId('ten'), name: tenantName } } } },
      },
      select: { id: true, memberships: { select: { tenant: { select: { id: true, name: true } } } } },
    });
    return { ownerId: owner.id, tenant: owner.memberships[0].tenant, created: true };
  }

  return {
    createOwner,

    /** Open sign-up: a new owner with a tenant of their own; an existing email is refused and left untouched. */
    async signUp(input: { email: string; password: string }): Promise<string> {
      const email = checkEmail(input.email);
      if (await db.owner.findUnique({ where: { email }, select: { id: true } })) {
        throw new Conflict('email_taken', 'An account with this email exists; sign in instead.');
      }
      return (await createOwner({ email, password: input.password })).ownerId;
    },

    /** First start: creates the configured owner when there is none yet; says which case held. */
    async bootstrap(owner: { email: string; password: string } | null): Promise<'exists' | 'created' | 'missing'> {
      if ((await db.owner.count()) > 0) return 'exists';
      if (!owner) return 'missing';
      await createOwner(owner);
      return 'created';
    },

    /** The owner id for matching credentials, else null; costs one password verification either way. */
    async authenticate(email: string, password: string): Promise<string | null> {
      const owner = await db.owner.findUnique({ where: { email: normaliseEmail(email) }, select: { id: true, passwordHash: true } });
      const matches = await verifyPassword(password, owner?.passwordHash ?? (await decoyHash()));
      return owner?.passwordHash && matches ? owner.id : null;
    },

    async tenantsOf(ownerId: string): Promise<TenantRef[]> {
      const memberships = await db.membership.findMany({
        where: { ownerId },
        orderBy: { createdAt: 'asc' },
        select: { tenant: { select: { id: true, name: true } } },
      });
      return memberships.map((m) => m.tenant);
    },

    async emailOf(ownerId: string): Promise<string> {
      return (await db.owner.findUniqueOrThrow({ where: { id: ownerId }, select: { email: true } })).email;
    },

    /** Ends every session and invalidates every token and grant of the owner at once. */
    async signOutEverywhere(ownerId: string): Promise<void> {
      await db.owner.update({ where: { id: ownerId }, data: { sessionVersion: { increment: 1 } } });
      await db.session.deleteMany({ where: { ownerId } });
    },
  };
}

export type OwnerService = ReturnType<typeof createOwnerService>;
