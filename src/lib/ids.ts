import { randomBytes } from 'node:crypto';

const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz'; // Crockford base32, lower case


let lastTime = -1;
let lastRandom: number[] = [];

/** The next value of `digits` as a base-32 number (carrying to the left). */
function increment(digits: number[]): number[] {
  const next = [...digits];
  for (let i = next.length - 1; i >= 0; i--) {
    next[i] = (next[i] + 1) % 32;
    if (next[i] !== 0) break;
  }
  return next;
}

/**
 * A new opaque id such as `job_01jd4k8m2q7zr5x9c3vh6tnbwe`: a prefix naming the kind, ten characters of
 * millisecond time and sixteen random ones. Ids sort by creation, which keyset pagination and the order
 * queued runs start in rely on: within one millisecond, the random part of the previous id is counted up.
 */
export function newId(prefix: string, now = Date.now()): string {
  let time = '';
  for (let rest = now, i = 0; i < 10; i++, rest = Math.floor(rest / 32)) time = ALPHABET[rest % 32] + time;
  const random = now === lastTime ? increment(lastRandom) : [...randomBytes(16)].map((byte) => byte & 31);
  if (now >= lastTime) [lastTime, lastRandom] = [now, random];
  return `${prefix}_${time}${random.map((digit) => ALPHABET[digit]).join('')}`;
}

/** When an id of `newId` was made (epoch ms), from its ten characters of time; null for anything else. */
export function idTime(id: string): number | null {
  const time = id.slice(id.lastIndexOf('_') + 1, id.lastIndexOf('_') + 11);
  if (time.length !== 10) return null;
  let ms = 0;
  for (const char of time) {
    const digit = ALPHABET.indexOf(char);
    if (digit < 0) return null;
    ms = ms * 32 + digit;
  }
  return ms;
}
