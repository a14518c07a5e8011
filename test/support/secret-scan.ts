// The suite's secret scan. Every app a test starts records the answers it gives (bodies and headers) and
// the log lines it writes at the most talkative level; when it closes, no secret it ever held may appear in
// any of them, nor in any row of its database outside the sealed columns (traces, runs, activity, event
// payloads). The secrets are the VM-host and agent tokens, the webhook and event signing secrets and the
// tenants' secrets for runs: those sealed in the database at the end, those a request gave, and those an
// answer showed once.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Db } from '../../src/db/client';
import { createLogger, type Logger } from '../../src/lib/logger';
import type { SecretBox } from '../../src/lib/secrets';
import { postgresUrl } from './databases';

/** Answers that show a signing secret, once, by design: create (and rotate) a source or a subscription. */
const SHOWS_SECRET = /^\/api\/v1\/(webhook-sources(\/[^/]+\/rotate-secret)?|event-subscriptions)$/;
/** Console pages that do the same, in the input `signing-secret`. */
const SHOWS_SECRET_PAGE = /^\/console\/(sources(\/[^/]+\/rotate)?|subscriptions)$/;
const SECRET_INPUT = /(id="signing-secret" readonly value=")([^"]*)(")/;
/** Requests that give a token, and the field it is in. */
const GIVES_TOKEN: [RegExp, string][] = [
  [/^\/api\/v1\/vmhost-connections(\/[^/]+)?$/, 'apiToken'],
  [/^\/api\/v1\/integrations\/agent-integration$/, 'accessToken'],
  [/^\/api\/v1\/secrets(\/[^/]+)?$/, 'value'],
];
/** Shorter values (tests' throwaway `t`) would match by chance. */
const MIN_SECRET_LENGTH = 8;
/** One character repeated (tests' length limits) matches filler of the same character by chance. */
const FILLER = /^(.)\1*$/s;

export interface SecretRecorder {
  logger: Logger;
  logLines: string[];
  /** Wraps the app: every answer it gives is recorded. */
  record(app: (req: IncomingMessage, res: ServerResponse) => void): (req: IncomingMessage, res: ServerResponse) => void;
  /** Throws when a secret shows anywhere recorded or in the database. */
  scan(db: Db, box: SecretBox): Promise<void>;
  /** A secret the app holds but never stored sealed (a token it minted): scanned for like the others. */
  remember(value: string): void;
}

type Chunk = string | Uint8Array;

export function createSecretRecorder(): SecretRecorder {
  const logLines: string[] = [];
  const answers: { where: string; text: string }[] = [];
  const secrets = new Set<string>();

  function remember(value: unknown) {
    if (typeof value === 'string' && value.length >= MIN_SECRET_LENGTH && !FILLER.test(value)) secrets.add(value);
  }

  function recordAnswer(method: string, path: string, req: IncomingMessage & { body?: unknown }, res: ServerResponse, headers: string, text: string) {
    const given = GIVES_TOKEN.find(([pattern]) => pattern.test(path));
    if (given && req.body && typeof req.body === 'object') remember((req.body as Record<string, unknown>)[given[1]]);
    if (method === 'POST' && SHOWS_SECRET.test(path) && res.statusCode < 300 && res.writableFinished) {
      const body = JSON.parse(text) as Record<string, unknown>;
      remember(body.signingSecret);
      delete body.signingSecret;
      text = JSON.stringify(body);
    }
    const shown = method === 'POST' && SHOWS_SECRET_PAGE.test(path) && res.statusCode < 300 ? SECRET_INPUT.exec(text) : null;
    if (shown) {
      remember(shown[2]);
      text = text.replace(SECRET_INPUT, '$1[shown once]$3');
    }
    answers.push({ where: `${method} ${path} → ${res.statusCode}`, text: `${JSON.stringify(res.getHeaders())}${headers}\n${text}` });
  }

  return {
    logger: createLogger('trace', { write: (line: string) => void logLines.push(line) }),
    logLines,
    remember,
    record: (app) => (req, res) => {
      const method = req.method ?? 'GET';
      const path = (req.url ?? '/').split('?')[0];
      const chunks: Buffer[] = [];
      const keep = (chunk: unknown) => {
        if (chunk !== undefined && chunk !== null && typeof chunk !== 'function') chunks.push(Buffer.from(chunk as Chunk));
      };
      let written = '';
      const { write, end, writeHead } = res;
      // Headers given to writeHead directly never show in getHeaders().
      res.writeHead = function (this: ServerResponse, ...args: unknown[]) {
        written += JSON.stringify(args.filter((arg) => typeof arg === 'object'));
        return (writeHead as (...a: unknown[]) => ServerResponse).apply(this, args);
      } as typeof res.writeHead;
      res.write = function (this: ServerResponse, chunk: unknown, ...rest: unknown[]) {
        keep(chunk);
        return (write as (...args: unknown[]) => boolean).call(this, chunk, ...rest);
      } as typeof res.write;
      res.end = function (this: ServerResponse, chunk?: unknown, ...rest: unknown[]) {
        keep(chunk);
        return (end as (...args: unknown[]) => ServerResponse).call(this, chunk, ...rest);
      } as typeof res.end;
      // Once, when it finished or, for an answer cut short, when it closed.
      let recorded = false;
      const recordOnce = () => {
        if (recorded) return;
        recorded = true;
        recordAnswer(method, path, req, res, written, Buffer.concat(chunks).toString('utf8'));
      };
      res.once('finish', recordOnce);
      res.once('close', recordOnce);
      app(req, res);
    },
    async scan(db, box) {
      for (const row of [
        ...(await db.webhookSource.findMany({ select: { secretCiphertext: true } })).map((r) => r.secretCiphertext),
        ...(await db.eventSubscription.findMany({ select: { secretCiphertext: true } })).map((r) => r.secretCiphertext),
        ...(await db.vmhostConnection.findMany({ select: { tokenCiphertext: true } })).map((r) => r.tokenCiphertext),
        ...(await db.agentIntegration.findMany({ select: { tokenCiphertext: true } })).map((r) => r.tokenCiphertext),
        ...(await db.secret.findMany({ select: { valueCiphertext: true } })).map((r) => r.valueCiphertext),
        ...(await db.githubApp.findMany({ select: { privateKeyCiphertext: true, webhookSecretCiphertext: true } })).flatMap((r) => [r.privateKeyCiphertext, ...(r.webhookSecretCiphertext ? [r.webhookSecretCiphertext] : [])]),
      ]) {
        remember(openedOrNull(box, row));
      }
      if (secrets.size === 0) return;
      const places = [...answers, ...logLines.map((text, i) => ({ where: `log line ${i + 1}`, text })), ...(await databaseRows(db))];
      const found: string[] = [];
      for (const secret of secrets) {
        const forms = new Set([secret, uriFormOf(secret), JSON.stringify(secret).slice(1, -1), secret.replace(/^whsec_/, ''), Buffer.from(secret).toString('base64')]);
        for (const { where, text } of places) {
          const form = [...forms].find((candidate) => text.includes(candidate));
          if (form) found.push(`${where}: …${text.slice(Math.max(0, text.indexOf(form) - 60), text.indexOf(form)).replace(/\s+/g, ' ')}[a secret]…`);
        }
      }
      if (found.length) throw new Error(`secrets showed where they must not (${found.length}):\n${found.slice(0, 20).join('\n')}`);
    },
  };
}

/** A request may give a token holding an unpaired surrogate (refused, but remembered): it has no URI form. */
function uriFormOf(secret: string) {
  try {
    return encodeURIComponent(secret);
  } catch {
    return secret;
  }
}

/** A sealed value opened, or null for a row a test wrote directly with a placeholder. */
function openedOrNull(box: SecretBox, sealed: string) {
  try {
    return box.open(sealed);
  } catch {
    return null;
  }
}

/** Every row of every table, sealed columns left out, as text. */
async function databaseRows(db: Db): Promise<{ where: string; text: string }[]> {
  const tables = await db.$queryRawUnsafe<{ name: string }[]>(
    postgresUrl
      ? `SELECT tablename::text AS name FROM pg_tables WHERE schemaname = 'public' AND tablename NOT LIKE '\\_prisma%'`
      : `SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' AND name NOT LIKE '\\_prisma%' ESCAPE '\\'`,
  );
  const rows: { where: string; text: string }[] = [];
  for (const { name } of tables) {
    for (const row of await db.$queryRawUnsafe<Record<string, unknown>[]>(`SELECT * FROM "${name}"`)) {
      const open = Object.fromEntries(Object.entries(row).filter(([column]) => !column.endsWith('Ciphertext')));
      rows.push({ where: `table ${name}`, text: JSON.stringify(open, (_key, value) => (typeof value === 'bigint' ? String(value) : value)) });
    }
  }
  return rows;
}
