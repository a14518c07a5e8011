// The instants this service takes: RFC 3339 date-times from 1970-01-01T00:00:00Z to 9999-12-31T23:59:59.999Z.
// Outside that range a date has no `date-time` form to answer with (year 0 prints as `-000001-…`) and the
// databases cannot hold it; a leap second (`…T23:59:60Z`) is valid RFC 3339 that a Date cannot hold.
import { fullFormats } from 'ajv-formats/dist/formats';
import { ValidationFailed } from './errors';

export const EARLIEST_INSTANT = new Date(Date.UTC(1970, 0, 1));
export const LATEST_INSTANT = new Date(Date.UTC(9999, 11, 31, 23, 59, 59, 999));
export const INSTANT_RANGE = `from ${EARLIEST_INSTANT.toISOString().replace('.000', '')} to ${LATEST_INSTANT.toISOString().replace('.999', '')}`;

const rfc3339 = fullFormats['date-time'] as { validate: (text: string) => boolean };
const inRange = (ms: number) => ms >= EARLIEST_INSTANT.getTime() && ms <= LATEST_INSTANT.getTime();

/** The contract's `date-time` format: RFC 3339, an instant a Date holds, within the range. */
export function isUsableDateTime(text: string): boolean {
  return rfc3339.validate(text) && inRange(Date.parse(text));
}

/** An instant the service derived (a default bound, say), refused with 400 naming `field` when out of range. */
export function checkInstant(at: Date, field: string, how: string): Date {
  if (!inRange(at.getTime())) throw new ValidationFailed(`\`${field}\` (${how}) would fall outside the supported range, ${INSTANT_RANGE}.`);
  return at;
}
