// `flows login`, `flows logout`, `flows whoami`.
import type { Command } from 'commander';
import { readStore, updateServer, writeStore } from '../credentials';
import { deviceLogin, discover, registerClient, revoke } from '../device-login';
import { action } from '../context';
import { bold } from '../output';

const DEFAULT_SCOPES = 'flows:read flows:write runs:read runs:write';
const SPINNER = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];

/** A spinner on a terminal while the login waits for the browser; nothing otherwise. */
function spinner() {
  let timer: NodeJS.Timeout | undefined;
  return (done: boolean) => {
    if (!process.stderr.isTTY) return;
    if (done) {
      clearInterval(timer);
      process.stderr.write('\r\u001b[K');
      return;
    }
    let i = 0;
    timer = setInterval(() => process.stderr.write(`\r${SPINNER[i++ % SPINNER.length]} Waiting for approval in the browser…`), 100);
  };
}

export function authCommands(program: Command) {
  program
    .command('login')
    .description('sign in to a Flows server with the device flow (opens the browser)')
    .option('--scopes <scopes>', 'scopes to ask for, space-separated', DEFAULT_SCOPES)
    .option('--no-browser', 'only print the URL to open')
    .action(
      action(async ({ origin, print }, options: { scopes: string; browser: boolean }) => {
        const { resource, issuer, metadata } = await discover(origin);
        const say = (line: string) => process.stderr.write(`${line}\n`);
        if (issuer !== origin) say(`${origin} calls itself ${issuer} (its BASE_URL): signing in there.`);
        let clientId = readStore().servers[origin]?.clientId;
        if (!clientId) {
          clientId = await registerClient(metadata);
          updateServer(origin, () => ({ clientId: clientId! }));
        }
        const tokens = await deviceLogin(metadata, clientId, {
          scopes: options.scopes,
          resource,
          browser: options.browser,
          say,
          waiting: spinner(),
        });
        const expiresAt = tokens.expires_in ? Date.now() + tokens.expires_in * 1000 : undefined;
        updateServer(origin, () => ({ clientId: clientId!, accessToken: tokens.access_token, refreshToken: tokens.refresh_token, expiresAt }));
        const store = readStore();
        writeStore({ ...store, current: origin });
        print.value({ server: origin, scopes: options.scopes.split(' ') }, () => print.line(`Signed in to ${bold(origin)}.`));
      }),
    );

  program
    .command('logout')
    .description('revoke this server\'s tokens and forget them')
    .action(
      action(async ({ origin, print }) => {
        const saved = readStore().servers[origin];
        if (saved) {
          const server = await discover(origin).catch(() => null);
          for (const token of [saved.refreshToken, saved.accessToken]) if (server && token) await revoke(server.metadata, saved.clientId, token);
          updateServer(origin, (current) => current && { clientId: current.clientId });
        }
        print.value({ server: origin, signedOut: true }, () => print.line(`Signed out of ${origin}.`));
      }),
    );

  program
    .command('whoami')
    .description('who the saved login acts for')
    .action(
      action(async ({ flows, print, origin }) => {
        const me = await flows.me();
        print.value(me, () => print.line(`${bold(me.owner.email)} in ${me.tenant.name} on ${origin} (${me.credential.scopes.join(' ')})`));
      }),
    );
}
