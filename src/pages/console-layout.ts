// The owner console's frame and parts: navigation with the signed-in owner and tenant, tables, times,
// pagination and the not-found page, so that each console page only says what it shows.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Router, type Request, type Response } from 'express';
import type { OwnerService } from '../owners/owner-service';
import { html, page, type Html } from '../http/html';
import type { SessionService } from '../auth/session-service';
import type { TenantDb } from '../db/tenant-scope';
import { NotFound } from '../lib/errors';
import { projectRoot } from '../lib/paths';
import { signedInOrSentToLogin, type SignedIn } from './session-pages';

export interface ConsoleDeps {
  sessions: SessionService;
  owners: OwnerService;
  tenantDb: (tenantId: string) => TenantDb;
}

type Visitor = SignedIn & { email: string; tenantName: string };

/** The console's sections; `short` is the label on a narrow screen, where the navigation must stay a line or two. */
const SECTIONS = [
  { href: '/console/jobs', label: 'Jobs' },
  { href: '/console/runs', label: 'Runs' },
  { href: '/console/activity', label: 'Webhook activity', short: 'Activity' },
  { href: '/console/sources', label: 'Sources' },
  { href: '/console/subscriptions', label: 'Event subscriptions', short: 'Subscriptions' },
  { href: '/console/targets', label: 'Targets' },
  { href: '/console/connections', label: 'VM hosts and agent', short: 'VM hosts' },
  { href: '/console', label: 'Tokens and applications', short: 'Tokens' },
] as const satisfies readonly { href: string; label: string; short?: string }[];
export type Section = (typeof SECTIONS)[number]['href'];

/**
 * A console form's action: `act` with the signed-in owner's tenant, or the visitor is sent to sign in. It
 * answers with a redirect, or with a page of its own (which reads the visitor itself).
 */
export function consoleAction(deps: Pick<ConsoleDeps, 'sessions' | 'tenantDb'>, act: (req: Request, res: Response, db: TenantDb) => Promise<unknown>) {
  return async (req: Request, res: Response): Promise<void> => {
    const session = await signedInOrSentToLogin(req, res, deps.sessions);
    if (session) await act(req, res, deps.tenantDb(session.principal.tenantId));
  };
}

/** The signed-in owner of a console page (or null once sent to sign in), with what the frame shows of them. */
export async function consoleVisitor(deps: Pick<ConsoleDeps, 'sessions' | 'owners'>, req: Request, res: Response): Promise<Visitor | null> {
  const session = await signedInOrSentToLogin(req, res, deps.sessions);
  if (!session) return null;
  const { ownerId, tenantId } = session.principal;
  const [email, tenants] = await Promise.all([deps.owners.emailOf(ownerId), deps.owners.tenantsOf(ownerId)]);
  return { ...session, email: email ?? ownerId, tenantName: tenants.find((tenant) => tenant.id === tenantId)?.name ?? tenantId };
}

/** A console page: the navigation (the current section marked), the owner and tenant, sign-out, then `body`. */
export function consolePage(title: string, visitor: { email: string; tenantName: string }, section: Section, body: Html): string {
  return page(
    title,
    html`<header><nav aria-label="Console">
${SECTIONS.map((link) => html`<a href="${link.href}"${link.href === section ? html` aria-current="page"` : null}>${'short' in link ? html`<span class="wide-only">${link.label}</span><span class="narrow-only">${link.short}</span>` : link.label}</a>`)}
<span class="who"><span class="wide-only">${visitor.email} · </span>${visitor.tenantName}</span>
<form method="post" action="/logout"><button type="submit" class="secondary">Sign out</button></form>
</nav></header>
${body}`,
    { wide: true },
  );
}

/** Answers with a console page headed by its title. */
export function sendConsolePage(res: Response, visitor: { email: string; tenantName: string }, section: Section, title: string, body: Html): void {
  res.type('html').send(consolePage(title, visitor, section, html`<h1>${title}</h1>
${body}`));
}

/** A query parameter given once and not empty, or undefined. */
export const queryParam = (req: Request, name: string): string | undefined => {
  const value = req.query[name];
  return typeof value === 'string' && value !== '' ? value : undefined;
};

/**
 * A time as the console writes every time, `2026-11-26 10:28:16 UTC` (the runs' live trace too), in a
 * machine-readable `<time>` with the exact value on hover; `absent` when there is none.
 */
export function time(iso: string | null | undefined, absent = '—'): Html {
  const at = iso ? new Date(iso) : null;
  if (!at || Number.isNaN(at.getTime())) return html`${iso || absent}`;
  const exact = at.toISOString();
  return html`<time datetime="${exact}" title="${exact}">${exact.replace('T', ' ').slice(0, 19)} UTC</time>`;
}

/**
 * A table with a header row, or `empty` when there are no rows; with `body` (attributes of its body, for a
 * script that adds rows) the table is shown even empty. Each cell carries its column's name (`data-label`):
 * on a narrow screen the rows stack as cards, each value under that name.
 */
export function table(headers: string[], rows: Html[][], empty: string, body?: Html): Html {
  if (!rows.length && !body) return html`<p>${empty}</p>`;
  return html`<table><thead><tr>${headers.map((header) => html`<th scope="col">${header}</th>`)}</tr></thead>
<tbody${body ?? null}>${rows.map((cells) => tableRow(headers, cells))}</tbody></table>`;
}

/** One row of a `table` of those `headers`, for a script that adds rows to one: each cell named by its column. */
export const tableRow = (headers: string[], cells: Html[]): Html => html`<tr>${cells.map((cell, i) => html`<td data-label="${headers[i] ?? ''}">${cell}</td>`)}</tr>`;

/** An amount in US dollars as the console writes it: cents, and finer amounts to a hundredth of a cent. */
export const dollars = (amount: number): string => amount.toLocaleString('en-US', { style: 'currency', currency: 'USD', minimumFractionDigits: 2, maximumFractionDigits: 4 });

/** A signing secret, shown once (the page must not be stored): the advice, and buttons that copy it and `also`. */
export const secretOnce = ({ title, advice, secret, also }: { title: string; advice: string; secret: string; also: { label: string; value: string } }): Html =>
  html`<section aria-labelledby="secret"><h2 id="secret">${title}</h2>
<p>${advice}</p>
<label for="signing-secret">Signing secret</label><input type="text" id="signing-secret" readonly value="${secret}">
<button type="button" data-copy="signing-secret">Copy</button>
<label for="also">${also.label}</label><input type="text" id="also" readonly value="${also.value}">
<button type="button" data-copy="also">Copy</button>
<script src="/console/copy.js" defer></script></section>`;

/**
 * A labelled form field: a text input (or `password`, a `textarea`, or a `select` of `options`, the empty
 * value first when `optional`); `hint` is shown under the label and `error` under the field, both tied to it.
 * `form` tells apart the ids of fields of the same name in two forms of a page.
 */
export function field({
  name,
  label,
  value = '',
  type = 'text',
  options,
  optional = false,
  hint,
  error,
  form = 'field',
}: {
  name: string;
  label: string;
  value?: string;
  type?: 'text' | 'password' | 'textarea';
  options?: { value: string; label: string }[];
  optional?: boolean;
  hint?: string;
  error?: string;
  form?: string;
}): Html {
  const id = `${form}-${name}`;
  const describedBy = [hint && `${id}-hint`, error && `${id}-error`].filter(Boolean).join(' ');
  const attributes = html`${describedBy ? html` aria-describedby="${describedBy}"` : null}${error ? html` aria-invalid="true"` : null}${optional || options ? null : html` required`}`;
  const control = options
    ? html`<select id="${id}" name="${name}"${attributes}>${optional ? html`<option value="">none</option>` : null}${options.map((option) => html`<option value="${option.value}"${option.value === value ? html` selected` : null}>${option.label}</option>`)}</select>`
    : type === 'textarea'
      ? html`<textarea id="${id}" name="${name}" rows="6"${attributes}>${value}</textarea>`
      : html`<input type="${type}" id="${id}" name="${name}" value="${type === 'password' ? '' : value}"${type === 'password' ? html` autocomplete="off"` : null}${attributes}>`;
  return html`<label for="${id}">${label}</label>${hint ? html`<small id="${id}-hint">${hint}</small>` : null}${control}${error ? html`<p id="${id}-error" class="error" role="alert">${error}</p>` : null}`;
}

/** A form's refusal, announced, or nothing. */
export const formError = (error: string | undefined): Html | null => (error ? html`<p class="error" role="alert">${error}</p>` : null);

/** Terms and their values, as a description list. */
export const facts = (pairs: [string, Html][]): Html => html`<dl>${pairs.map(([term, value]) => html`<dt>${term}</dt><dd>${value}</dd>`)}</dl>`;

/** The link to the next page, from the `Link` header the API's pagination would send. */
export function nextPage(headers: Record<string, string>): Html | null {
  const next = /^<([^>]+)>/.exec(headers.Link ?? '')?.[1];
  return next ? html`<p><a href="${next}" rel="next">Next page</a></p>` : null;
}

/**
 * What a console page about one thing reads, with the visitor and their tenant's client; null once the visitor
 * was sent to sign in, or answered the 404 page when `find` found nothing (another tenant's ids look unknown).
 */
export async function consoleFind<T>(deps: ConsoleDeps, req: Request, res: Response, section: Section, missing: string, find: (db: TenantDb) => Promise<T>) {
  const visitor = await consoleVisitor(deps, req, res);
  if (!visitor) return null;
  const db = deps.tenantDb(visitor.principal.tenantId);
  try {
    return { visitor, db, found: await find(db) };
  } catch (err) {
    if (!(err instanceof NotFound)) throw err;
    notFound(res, visitor, section, missing);
    return null;
  }
}

/** The console's 404: another tenant's ids and unknown ones look the same. */
export function notFound(res: Response, visitor: { email: string; tenantName: string }, section: Section, what: string): void {
  sendConsolePage(res.status(404), visitor, section, 'Not found', html`<p>${what}</p>`);
}

/** The console's own scripts, each a same-origin file (the content security policy allows no inline script). */
export function consoleScripts(files: Record<string, string>): Router {
  const router = Router();
  for (const [route, file] of Object.entries(files)) {
    const text = readFileSync(path.join(projectRoot, file), 'utf8');
    router.get(route, (_req, res) => void res.type('js').set('cache-control', 'no-cache').send(text));
  }
  return router;
}
