// What every command starts from: the global options (--url, --json), the server, a printer, and a way to
// run its body so that API failures end as CLI errors.
import type { Command } from 'commander';
import type { Flows } from '@flows/sdk';
import { printer, type Printer } from './output';
import { asCliError, serverOf, signedIn } from './session';

export interface CommandContext {
  origin: string;
  print: Printer;
  /** The SDK client, signed in (made on first use: `login` needs none). */
  readonly flows: Flows;
}

export function contextOf(command: Command): CommandContext {
  const options = command.optsWithGlobals<{ url?: string; json?: boolean }>();
  const origin = serverOf(options.url);
  let flows: Flows | undefined;
  return {
    origin,
    print: printer(Boolean(options.json)),
    get flows() {
      return (flows ??= signedIn(origin));
    },
  };
}

/** The action of a command: its context and arguments in, API errors out as CLI errors. */
export function action<A extends unknown[]>(run: (context: CommandContext, ...args: A) => Promise<void>) {
  return async (...args: unknown[]) => {
    const command = args[args.length - 1] as Command;
    const context = contextOf(command);
    try {
      await run(context, ...(args.slice(0, -1) as A));
    } catch (err) {
      throw asCliError(err, context.origin);
    }
  };
}

/** Every item of an async list. */
export async function all<T>(items: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of items) out.push(item);
  return out;
}
