// Waiting on background work (event attempts, runs) that a test cannot await directly.

/** The first truthy value `probe` gives, asked every `everyMs` up to `tries` times; fails naming `what`. */
export async function until<T>(what: string, probe: () => Promise<T | false | undefined>, { tries = 200, everyMs = 25 } = {}): Promise<T> {
  for (let i = 0; i < tries; i++) {
    const value = await probe();
    if (value) return value;
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
  throw new Error(`timed out waiting for ${what}`);
}
