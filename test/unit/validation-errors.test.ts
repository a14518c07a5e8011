// The words of a 400 validation_failed: Ajv's errors over the contract's own schemas, as openapi-backend
// validates a request body (under `requestBody`), turned into one message naming the field and its rule.
import Ajv2020 from 'ajv/dist/2020';
import { loadContract } from '../../src/http/contract';
import { validationMessage } from '../../src/http/validation-errors';

const schemas = loadContract().inlined.components.schemas;
const ajv = new Ajv2020({ strict: false, allErrors: false, discriminator: true });

/** What a body of `schema` is refused with, or null when it is valid. */
function messageFor(schema: string, body: unknown): string | null {
  const validate = ajv.compile({ type: 'object', properties: { requestBody: schemas[schema] } });
  return validate({ requestBody: body }) ? null : validationMessage(validate.errors ?? []);
}

const job = (extra: Record<string, unknown>) => ({ name: 'Triage', promptTemplate: 'x', ...extra });

describe('a value refused by a oneOf', () => {
  it('is reported against the branch of its own type: an object as a secret reference, not as "must be string"', () => {
    expect(messageFor('JobCreate', job({ env: { GH_TOKEN: { secret: 'gh-token' } } }))).toBe('`env.GH_TOKEN.secret` must match pattern "^[A-Za-z_][A-Za-z0-9_]*$" (pattern).');
    expect(messageFor('JobCreate', job({ env: { GH_TOKEN: {} } }))).toBe('`env.GH_TOKEN.secret` is required.');
    expect(messageFor('JobCreate', job({ env: { GH_TOKEN: { secret: 'GH_TOKEN', from: 'vault' } } }))).toBe('`env.GH_TOKEN.from` is not an allowed property.');
    expect(messageFor('JobCreate', job({ env: { GIT_AUTHOR_NAME: 'x'.repeat(40_000) } }))).toBe('`env.GIT_AUTHOR_NAME` must NOT have more than 32768 characters (maxLength).');
  });

  it('names every type the value may have when it has none of them', () => {
    expect(messageFor('JobCreate', job({ env: { GH_TOKEN: 42 } }))).toBe('`env.GH_TOKEN` must be string or object (type).');
    expect(messageFor('JobUpdate', { network: 'none' })).toBe('`network` must be object or null (type).');
  });

  it('looks inside the branch of a nullable value the same way', () => {
    expect(messageFor('JobUpdate', { network: { allow: 'example.com' } })).toBe('`network.allow` must be array (type).');
    expect(messageFor('JobUpdate', { flowControl: { concurrency: { limit: 0 } } })).toBe('`flowControl.concurrency.limit` must be >= 1 (minimum).');
  });

  it('leaves other errors as Ajv reports them first, a trigger\'s shape chosen by its type', () => {
    expect(messageFor('JobCreate', job({ concurrencyLimit: 51 }))).toBe('`concurrencyLimit` must be <= 50 (maximum).');
    expect(messageFor('JobCreate', job({ triggers: [{ type: 'schedule' }] }))).toBe('`triggers[0].cron` is required.');
    expect(messageFor('JobCreate', job({ triggers: [{ type: 'nightly' }] }))).toBe('`triggers[0].type` must be one of the documented types, not "nightly" (discriminator).');
    expect(messageFor('JobCreate', job({ env: { GH_TOKEN: { secret: 'GH_TOKEN' } } }))).toBeNull();
  });
});
