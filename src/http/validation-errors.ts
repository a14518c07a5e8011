// What a 400 `validation_failed` says of a request the contract refuses: one of Ajv's errors, in words that
// name the field as the caller wrote it (`triggers[0].cron`) and the rule it broke.
import type { ErrorObject } from 'ajv';
import { INSTANT_RANGE } from '../lib/instants';
import { clip } from '../lib/text';

/** `/requestBody/triggers/0/cron` → `triggers[0].cron`; `/query/limit` → `limit`. */
function fieldOf(error: ErrorObject): string {
  const segments = error.instancePath.split('/').slice(1).map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
  if (error.keyword === 'required') segments.push(error.params.missingProperty);
  if (error.keyword === 'additionalProperties') segments.push(error.params.additionalProperty);
  if (error.keyword === 'discriminator') segments.push(error.params.tag);
  const [where, ...path] = segments;
  if (path.length === 0) return where === undefined || where === 'requestBody' ? 'body' : where;
  return path.reduce((acc, part) => (/^\d+$/.test(part) ? `${acc}[${part}]` : acc ? `${acc}.${part}` : part), '');
}

/** A branch of a `oneOf` (or `anyOf`) that the value's own type rules out: its only error is that type, at the value itself. */
const ruledOutByType = (branch: ErrorObject[], choice: ErrorObject) => branch.every((error) => error.keyword === 'type' && error.instancePath === choice.instancePath);

/**
 * The error to report. Ajv lists a failed `oneOf`'s branches in order, then the `oneOf` itself, so the first
 * error is the first branch's, which is seldom the one the value was meant for (`{ "secret": "gh-token" }` is
 * not a string, but a reference with a bad name). The branch whose type the value has is reported instead
 * (within it, the same again for a `oneOf` inside); when every branch is ruled out by type, the types it may be.
 */
export function reportedError(errors: ErrorObject[]): ErrorObject {
  const [first] = errors;
  // The outermost choice the first error is within: the shortest schema path leading to it.
  const choice = errors
    .filter((error) => (error.keyword === 'oneOf' || error.keyword === 'anyOf') && first.schemaPath.startsWith(`${error.schemaPath}/`))
    .sort((a, b) => a.schemaPath.length - b.schemaPath.length)[0];
  if (!choice) return first;
  const branches = new Map<string, ErrorObject[]>();
  for (const error of errors) {
    const branch = error.schemaPath.startsWith(`${choice.schemaPath}/`) && error.schemaPath.slice(choice.schemaPath.length + 1).split('/')[0];
    if (branch) branches.set(branch, [...(branches.get(branch) ?? []), error]);
  }
  const meant = [...branches.values()].find((branch) => !ruledOutByType(branch, choice));
  if (meant) return reportedError(meant);
  const types = [...branches.values()].flatMap((branch) => branch.map((error) => [error.params.type].flat()).flat());
  return { ...choice, keyword: 'type', message: `must be ${[...new Set(types)].join(' or ')}`, params: { type: types } };
}

export function describeError(error: ErrorObject): string {
  const field = clip(fieldOf(error));
  if (field === 'body' && error.keyword === 'required') return 'The request body is required.';
  if (error.keyword === 'required') return `\`${field}\` is required.`;
  if (error.keyword === 'additionalProperties') return `\`${field}\` is not an allowed property.`;
  if (error.keyword === 'discriminator') {
    if (error.params.tagValue === undefined) return `\`${field}\` is required.`;
    return error.params.error === 'tag'
      ? `\`${field}\` must be a string (discriminator).`
      : `\`${field}\` must be one of the documented types, not ${clip(JSON.stringify(error.params.tagValue))} (discriminator).`;
  }
  if (error.keyword === 'format' && error.params.format === 'date-time') return `\`${field}\` must be an RFC 3339 date-time ${INSTANT_RANGE} (format).`;
  return `\`${field}\` ${error.message} (${error.keyword}).`;
}

/** The words of a 400 for Ajv's `errors`. */
export const validationMessage = (errors: ErrorObject[] | null | undefined): string => (errors?.length ? describeError(reportedError(errors)) : 'The request is invalid.');
