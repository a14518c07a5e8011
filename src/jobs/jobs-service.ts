// The rules of jobs. So far: rendering a template against a sample context, as a job's templates render.
import { AppError } from '../lib/errors';
import { compileTemplate, renderTemplate, TemplateProblem } from './templates-fns';

export class InvalidTemplate extends AppError {
  constructor(message: string) {
    super(400, 'invalid_template', `Invalid template: ${message}.`);
  }
}

export function createJobsService() {
  return {
    async testTemplate(input: { template: string; context: Record<string, unknown> }): Promise<{ output: string }> {
      try {
        return { output: await renderTemplate(compileTemplate(input.template), input.context) };
      } catch (err) {
        if (err instanceof TemplateProblem) throw new InvalidTemplate(err.message);
        throw err;
      }
    },
  };
}

export type JobsService = ReturnType<typeof createJobsService>;
