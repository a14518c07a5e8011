import { randomBytes } from 'node:crypto';

const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz'; // Crockford base32, lower case

function base32(bytes: Uint8Array): string {
  let out = '';
  for (const byte of bytes) out += ALPHABET[byte & 31];
  return out;
}

/**
 * A new opaque id such as `job_01jd4k8m2q7zr5x9c3vh6tnbwe`: a prefix naming the kind, ten characters of
 * millisecond time (so ids sort by creation, which keyset pagination relies on) and sixteen random ones.
 */
export function newId(prefix: string, now = Date.now()): string {
  let time = '';
  for (let rest = now, i = 0; i < 10; i++, rest = Math.floor(rest / 32)) time = ALPHABET[rest % 32] + time;
  return `${prefix}_${time}${base32(randomBytes(16))}`;
}
