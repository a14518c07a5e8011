// The `flows` command: a thin layer over @flows/sdk, one file per command group, output in one module.
// Exit codes: 0 done, 1 the server refused or could not be reached, or there is no login (any more), 2 a
// wrong command line, 3 a waited-for run ended other than succeeded.
import { Command, CommanderError } from 'commander';
import { authCommands } from './commands/auth';
import { jobsCommands } from './commands/jobs';
import { moreCommands } from './commands/more';
import { runsCommands } from './commands/runs';
import { usageCommands } from './commands/usage';
import { CliError, EXIT } from './errors';

const program = new Command('flows')
  .description('Run and follow coding-agent jobs on a Flows server.')
  .version('0.1.0')
  .option('--url <url>', 'the server (default: FLOWS_URL, else the last one signed in to, else http://localhost:3000)')
  .option('--json', 'print JSON for scripts')
  .showHelpAfterError()
  .exitOverride();
authCommands(program);
jobsCommands(program);
runsCommands(program);
usageCommands(program);
moreCommands(program);

program.parseAsync(process.argv).catch((err: unknown) => {
  if (err instanceof CommanderError) process.exit(err.exitCode === 0 ? EXIT.ok : EXIT.usage);
  if (err instanceof CliError) {
    if (err.message) process.stderr.write(`flows: ${err.message}\n`);
    process.exit(err.exitCode);
  }
  process.stderr.write(`flows: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(EXIT.failure);
});
