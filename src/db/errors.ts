/**
 * A write refused by a unique index: Prisma's P2002, or a raw statement's failure (P2010) that the driver
 * adapter reports as a unique constraint violation.
 */
export const isUniqueViolation = (err: unknown): boolean => {
  const { code, meta } = (err ?? {}) as { code?: string; meta?: { driverAdapterError?: { cause?: { kind?: string } } } };
  return code === 'P2002' || (code === 'P2010' && meta?.driverAdapterError?.cause?.kind === 'UniqueConstraintViolation');
};
