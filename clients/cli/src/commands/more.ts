// `flows conditions test`, `flows templates test`, `flows activity …` and `flows sources …`.
import type { Command } from 'commander';
import { action, all } from '../context';
import { bold, dim, jsonArgument } from '../output';

export function moreCommands(program: Command) {
  program
    .command('conditions')
    .description('trigger conditions')
    .command('test')
    .description('evaluate conditions against a prepared webhook context')
    .requiredOption('--webhook <file>', 'the webhook context as JSON (as webhook activity stores it)')
    .option('--conditions <file>', 'the conditions as JSON')
    .option('--flow-control <file>', "a job's flowControl as JSON: says which key each keyed part gives this delivery's run")
    .action(
      action(async ({ flows, print }, options: { webhook: string; conditions?: string; flowControl?: string }) => {
        const result = await flows.conditions.test({
          webhook: jsonArgument(`@${options.webhook}`, 'the webhook context') as Record<string, unknown>,
          ...(options.conditions ? { conditions: jsonArgument(`@${options.conditions}`, 'the conditions') as Record<string, unknown> } : {}),
          ...(options.flowControl ? { flowControl: jsonArgument(`@${options.flowControl}`, 'the flow control') as NonNullable<Parameters<typeof flows.conditions.test>[0]['flowControl']> } : {}),
        });
        print.value(result, () => {
          print.line(`${bold(result.decision)}${'error' in result && result.error ? `: ${result.error}` : ''}`);
          const flow = result.flowControl;
          if (flow?.error) print.line(`flow control: no key (${flow.error})`);
          for (const [part, key] of Object.entries(flow?.keys ?? {})) print.line(`${part} key: ${key ?? dim('none: the whole job is one key')}`);
        });
      }),
    );

  program
    .command('templates')
    .description('prompt and run-name templates')
    .command('test')
    .description('render a Liquid template with a context')
    .requiredOption('--template <file>', 'the template (a file)')
    .option('--context <json>', 'the variables: inline JSON or @file.json', '{}')
    .action(
      action(async ({ flows, print }, options: { template: string; context: string }) => {
        const { readFileSync } = await import('node:fs');
        const result = await flows.templates.test({ template: readFileSync(options.template, 'utf8'), context: jsonArgument(options.context, '--context') as Record<string, unknown> });
        print.value(result, () => print.line(result.output));
      }),
    );

  const activity = program.command('activity').description('webhook deliveries and what each trigger decided');
  activity
    .command('list')
    .option('--source <id>', 'only deliveries to this source')
    .action(
      action(async ({ flows, print }, options: { source?: string }) => {
        const rows = await all(flows.activity.list(options.source ? { sourceId: options.source } : {}));
        print.table(rows, [
          ['id', (row) => row.id],
          ['event', (row) => [row.event, row.action].filter(Boolean).join('.')],
          ['received', (row) => row.receivedAt],
          ['runs', (row) => String(row.runIds.length)],
        ]);
      }),
    );
  activity.command('get <activity>').action(
    action(async ({ flows, print }, id: string) => {
      const row = await flows.activity.get(id);
      print.value(row, () => {
        print.line(`${bold(row.id)} ${[row.event, row.action].filter(Boolean).join('.')} ${dim(row.receivedAt)}`);
        for (const decision of row.decisions) print.line(`  ${decision.triggerId}: ${decision.decision}${decision.runId ? ` → ${decision.runId}` : ''}`);
      });
    }),
  );

  const sources = program.command('sources').description('webhook sources');
  sources.command('list').action(
    action(async ({ flows, print }) => {
      print.table(await flows.sources.list(), [
        ['id', (source) => source.id],
        ['name', (source) => source.name],
        ['format', (source) => source.format],
        ['intake', (source) => source.intakeUrl],
      ]);
    }),
  );
  sources
    .command('create')
    .requiredOption('--name <name>', 'a name')
    .requiredOption('--format <format>', 'github, gitlab, linear, slack, sentry, jira, standard-webhooks or hmac-sha256')
    .option('--github-app <id>', "a GitHub App connection whose webhook secret verifies the deliveries (github format)")
    .option('--signing-secret <secret>', "the secret the sender made (Slack's signing secret, Sentry's client secret, a GitLab signing token)")
    .action(
      action(async ({ flows, print }, options: { name: string; format: string; githubApp?: string; signingSecret?: string }) => {
        const source = await flows.sources.create({ name: options.name, format: options.format as never, ...(options.githubApp && { githubAppId: options.githubApp }), ...(options.signingSecret && { signingSecret: options.signingSecret }) });
        const signed = source.githubAppId ? `signed with the webhook secret of ${source.githubAppId}` : source.signingSecret === null ? "signed with the sender's secret" : `signed with ${source.signingSecret} (shown once)`;
        print.value(source, () => print.line(`Created ${source.id}: deliveries go to ${source.intakeUrl}, ${signed}.`));
      }),
    );
  sources
    .command('rotate <source>')
    .option('--signing-secret <secret>', "the sender's new secret, for a sender that makes its own (Slack, Sentry)")
    .action(
      action(async ({ flows, print }, id: string, options: { signingSecret?: string }) => {
        const source = await flows.sources.rotate(id, options.signingSecret);
        print.value(source, () => print.line(source.signingSecret === null ? `${source.id} now verifies with the sender's new secret.` : `New signing secret of ${source.id}: ${source.signingSecret} (shown once).`));
      }),
    );
}
