// What the operator says models cost (FLOWS_MODEL_PRICES), for agents that report tokens but no cost:
// US dollars per million tokens, input read from the provider's cache at its own price when given.

export interface ModelPrice {
  input: number;
  output: number;
  /** Input tokens read from the cache; `input`'s price when not given. */
  cachedInput?: number;
}

export type ModelPrices = Record<string, ModelPrice>;

/** The cost of `tokens` at `price`, in US dollars. */
export function costOf(price: ModelPrice, tokens: { inputTokens: number; cachedTokens: number; outputTokens: number }): number {
  const fresh = Math.max(0, tokens.inputTokens - tokens.cachedTokens);
  return (fresh * price.input + tokens.cachedTokens * (price.cachedInput ?? price.input) + tokens.outputTokens * price.output) / 1_000_000;
}

/** Why `value` is not a price table, or null: `{ "<model>": { "input": n, "output": n, "cachedInput"?: n } }`, numbers ≥ 0. */
export function pricesProblem(value: unknown): string | null {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return 'must be a JSON object of models';
  for (const [model, price] of Object.entries(value)) {
    if (typeof price !== 'object' || price === null) return `${model}: must be an object with input and output`;
    for (const field of ['input', 'output', 'cachedInput']) {
      const amount = (price as Record<string, unknown>)[field];
      if (amount === undefined && field === 'cachedInput') continue;
      if (typeof amount !== 'number' || !(amount >= 0)) return `${model}.${field}: must be a number of US dollars per million tokens, 0 or more`;
    }
    const extra = Object.keys(price).find((field) => !['input', 'output', 'cachedInput'].includes(field));
    if (extra) return `${model}.${extra}: is not a field of a price (input, output, cachedInput)`;
  }
  return null;
}
