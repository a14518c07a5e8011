// Sign-in throttling on the rate-limit store (memory on SQLite, the RateLimit table on PostgreSQL, so that
// every instance sees the same counts). An attempt is counted before its password is checked, so that a
// burst cannot outrun the counts; one that is refused or succeeds is given back, so what stays counted are
// failures. Only a failing pair of account and address waits, and only an address that fails across
// accounts is refused outright: nobody elsewhere can lock the owner out.
import { RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import { accountKey, freeAttempts, pairKey, waitAfter } from './sign-in-throttle-fns';

export type SignInVerdict = { allowed: true } | { allowed: false; retryAfterSeconds: number };

export interface SignInThrottle {
  /** Counts an attempt at `email` from `address` before its password is checked; a refusal says how long to wait. */
  attempt(email: string, address: string): Promise<SignInVerdict>;
  /** The password was right: the pair's failures are forgotten, and this attempt was none. */
  succeeded(email: string, address: string): Promise<void>;
}

/** A failure counter and its number: the pair's free failures, the address's limit, the account's brake. */
export interface Counter {
  limiter: RateLimiterAbstract;
  points: number;
}

export interface SignInThrottleDeps {
  /** Failures per account and address; null: no waits. */
  pair: Counter | null;
  /** Failures per address, whatever the account; past `points` the address is refused until its window ends. */
  address: Counter | null;
  /** Failures per account from every address; past `points`, every address waits from its first failure. */
  account: Counter | null;
  /** One point per window: the wait an attempt opens for the pair's next one. */
  waits: RateLimiterAbstract;
  /** Runs a store operation, answering `fallback` when the store fails. */
  guard: <T>(operation: string, fallback: T, run: () => Promise<T>) => Promise<T>;
}

const ALLOWED: SignInVerdict = Object.freeze({ allowed: true });
const NOT_COUNTED = new RateLimiterRes(0, 0, 0);

/** The library rejects a consume past its points with the count; either way the count is what matters here. */
async function counted(operation: Promise<RateLimiterRes>): Promise<RateLimiterRes> {
  try {
    return await operation;
  } catch (err) {
    if (err instanceof RateLimiterRes) return err;
    throw err;
  }
}

const seconds = (res: RateLimiterRes) => Math.max(1, Math.ceil(res.msBeforeNext / 1000));

export function createSignInThrottle({ pair, address, account, waits, guard }: SignInThrottleDeps): SignInThrottle {
  const keysOf = (email: string, from: string) => ({ pair: pairKey(email, from), address: from, account: accountKey(email) });
  const count = (counter: Counter | null, key: string) => (counter ? counted(counter.limiter.consume(key)) : Promise.resolve(NOT_COUNTED));

  /**
   * Seconds this attempt must still wait (0: none). From the pair's `free`-th attempt on, an attempt goes only
   * by opening the wait window for the next one, and a window opens only where none is open: of attempts
   * arriving together, one goes.
   */
  async function waitFor(keys: ReturnType<typeof keysOf>, byPair: RateLimiterRes, byAddress: RateLimiterRes, byAccount: RateLimiterRes): Promise<number> {
    if (address && byAddress.consumedPoints > address.points) return seconds(byAddress);
    if (!pair) return 0;
    const free = freeAttempts({ pairFree: pair.points, accountFailures: byAccount.consumedPoints, accountBrake: account?.points ?? 0 });
    const next = waitAfter(byPair.consumedPoints, free);
    if (next === 0) return 0;
    const window = await counted(waits.consume(keys.pair, 1, { customDuration: next }));
    return window.consumedPoints > 1 ? seconds(window) : 0;
  }

  /** Takes back the attempt's points: what stays counted are failed password checks. */
  const giveBack = (keys: ReturnType<typeof keysOf>, counters: ['pair' | 'address' | 'account', Counter | null][]) =>
    Promise.all(counters.map(([name, counter]) => counter?.limiter.reward(keys[name], 1)));

  return {
    attempt: (email, from) =>
      guard('sign-in attempt', ALLOWED, async () => {
        const keys = keysOf(email, from);
        const [byPair, byAddress, byAccount] = await Promise.all([count(pair, keys.pair), count(address, keys.address), count(account, keys.account)]);
        const wait = await waitFor(keys, byPair, byAddress, byAccount);
        if (wait === 0) return ALLOWED;
        await giveBack(keys, [['pair', pair], ['address', address], ['account', account]]);
        return { allowed: false, retryAfterSeconds: wait };
      }),

    succeeded: (email, from) =>
      guard('sign-in success', undefined, async () => {
        const keys = keysOf(email, from);
        await Promise.all([pair?.limiter.delete(keys.pair), waits.delete(keys.pair), giveBack(keys, [['address', address], ['account', account]])]);
      }),
  };
}
