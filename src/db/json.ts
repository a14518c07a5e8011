import type { Prisma } from '../../generated/prisma/sqlite/client';

/** A value for a Json column: Prisma's input type admits no `unknown`, though any JSON value is stored as is. */
export const toJson = (value: unknown) => value as Prisma.InputJsonValue;
