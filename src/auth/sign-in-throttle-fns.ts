// The rules of sign-in throttling (OWASP's authentication cheat sheet): failures are counted per account
// and address together, so that guesses made elsewhere never slow the owner down; past a few free ones,
// each next attempt of that pair waits twice as long as the one before.
import { sha256 } from '../lib/hash';

/** The first wait, and the longest: one guess per 15 minutes per account and address, however long it goes on. */
export const FIRST_WAIT_SECONDS = 1;
export const MAX_WAIT_SECONDS = 15 * 60;

/**
 * Seconds the next attempt of a pair must wait after its attempt number `attempt` (counted since its last
 * success, this one included): none before the `free`-th, then 1 s, 2 s, 4 s… up to MAX_WAIT_SECONDS. With
 * 5 free, the sixth attempt waits 1 s after the fifth, the seventh 2 s after the sixth.
 */
export function waitAfter(attempt: number, free: number): number {
  if (attempt < free) return 0;
  return Math.min(FIRST_WAIT_SECONDS * 2 ** (attempt - free), MAX_WAIT_SECONDS);
}

/**
 * Failed attempts a pair makes before it waits. While the account fails from everywhere beyond its brake
 * (many addresses guessing), every address waits from its first failure; its first attempt still never
 * waits, so the owner at an address that has not failed signs in at once.
 */
export const freeAttempts = ({ pairFree, accountFailures, accountBrake }: { pairFree: number; accountFailures: number; accountBrake: number }) =>
  accountBrake > 0 && accountFailures > accountBrake ? Math.min(pairFree, 1) : pairFree;

/** Counters keep hashes, not email addresses; the pair's key joins both with a character neither can hold. */
export const accountKey = (email: string) => sha256(email);
export const pairKey = (email: string, address: string) => sha256(`${email}\n${address}`);

/** "1 second", "40 seconds", "3 minutes": a wait as the sign-in page says it (minutes rounded up). */
export function inWords(seconds: number): string {
  const s = Math.max(1, Math.ceil(seconds));
  if (s < 90) return `${s} second${s === 1 ? '' : 's'}`;
  return `${Math.ceil(s / 60)} minutes`;
}
