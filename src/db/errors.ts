/** A write refused by a unique index (Prisma's P2002, whichever driver adapter reported it). */
export const isUniqueViolation = (err: unknown): boolean => (err as { code?: string } | null)?.code === 'P2002';
