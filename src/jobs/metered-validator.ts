// An input schema's validation under a work meter (lib/work-meter.ts): its patterns run on RE2, and what
// they cost grows with the data (triggers/regex.ts), so a validation whose matches would cost more than the
// meter allows answers "invalid" with that reason instead of holding the process.
import type { ValidateFunction } from 'ajv/dist/2020';
import { metered, WorkLimitExceeded } from '../lib/work-meter';

/** `validate` under a work meter: data whose patterns would cost more than the meter allows is invalid. */
export function meteredValidator(validate: ValidateFunction): ValidateFunction {
  const checked = ((data: unknown) => {
    try {
      const valid = metered(() => validate(data));
      checked.errors = validate.errors;
      return valid;
    } catch (err) {
      if (!(err instanceof WorkLimitExceeded)) throw err;
      checked.errors = [{ instancePath: '', schemaPath: '#', keyword: 'pattern', params: {}, message: `is too costly to check against the schema's patterns: ${err.message}` }];
      return false;
    }
  }) as ValidateFunction;
  return Object.assign(checked, { schema: validate.schema, schemaEnv: validate.schemaEnv });
}
