import { createHash } from 'node:crypto';

/** SHA-256 as base64url: how credentials and personal keys are stored or counted without keeping them. */
export const sha256 = (value: string) => createHash('sha256').update(value).digest('base64url');
