// Turns openapi-fetch's `{ data, error, response }` into the data or a thrown FlowsApiError, so that the
// SDK's methods answer values and every non-2xx answer fails the same way.
import { answerError } from './errors';

export interface Result<T> {
  data?: T;
  error?: unknown;
  response: Response;
}

export function unwrap<T>({ data, error, response }: Result<T>): T {
  if (!response.ok) throw answerError(response, error);
  return data as T;
}
