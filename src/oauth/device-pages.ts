// The pages the authorization server renders itself: entering a user code at /device, confirming a
// device (Approve / Deny), success, and OAuth errors shown in the browser.
import type { KoaContextWithOIDC } from 'oidc-provider';
import type { Request } from 'express';
import { PROVIDER_SESSION_TTL } from '../auth/lifetimes';
import { isScope } from '../auth/principal';
import { html, page, raw, scopeList, type Html } from '../http/html';
import { markUnmatched } from './user-code-guesses';

/** Set on the request by the /device gate (pages/interaction-pages.ts), which has already checked the session. */
export interface DeviceViewer {
  email: string;
  tenantName: string;
}

const viewerOf = (ctx: KoaContextWithOIDC) => (ctx.req as Request & { deviceViewer?: DeviceViewer }).deviceViewer;
const xsrfOf = (form: string) => /name="xsrf" value="([^"]+)"/.exec(form)?.[1] ?? '';
const respond = (ctx: KoaContextWithOIDC, title: string, body: Html) => {
  ctx.type = 'html';
  ctx.body = page(title, body);
};

/**
 * After an error the library renders this page again with a new xsrf secret in its browser session. When
 * the browser brought no session (it never loaded GET /device, or its session expired), that session is
 * new and the library would fail saving it: store it here and give the browser its cookie, so the form
 * works on the next submit.
 */
async function keepNewSession(ctx: KoaContextWithOIDC) {
  const session = ctx.oidc.session as (NonNullable<KoaContextWithOIDC['oidc']['session']> & { id: string; exp?: number }) | undefined;
  if (!session || typeof session.exp === 'number') return;
  await session.save(PROVIDER_SESSION_TTL);
  ctx.oidc.cookies.set(ctx.oidc.provider.cookieName('session'), session.id, { httpOnly: true, sameSite: 'lax' });
}

export async function deviceInputPage(ctx: KoaContextWithOIDC, form: string, _out?: unknown, err?: { name?: string; userCode?: string }) {
  if (err) await keepNewSession(ctx);
  if (err?.name === 'NotFoundError') markUnmatched(ctx);
  const message = !err
    ? null
    : err.userCode || err.name === 'NoCodeError'
      ? 'That code is not valid or has expired. Check the code on your device and try again.'
      : err.name === 'AbortedError'
        ? 'The request was denied.'
        : 'The request could not be completed. Start again on your device.';
  respond(
    ctx,
    'Connect a device',
    html`<h1>Connect a device</h1>
<p>Enter the code your device or command-line tool shows.</p>
${message ? html`<p class="error" role="alert">${message}</p>` : null}
<form method="post" action="${ctx.oidc.urlFor('code_verification')}">
<input type="hidden" name="xsrf" value="${xsrfOf(form)}">
<label for="user_code">Code</label>
<input type="text" id="user_code" name="user_code" autocomplete="off" autocapitalize="characters" required autofocus>
<button type="submit">Continue</button>
</form>`,
  );
}

export async function deviceConfirmPage(ctx: KoaContextWithOIDC, form: string, client: { clientName?: string; clientId: string }, _info: unknown, userCode: string) {
  const asked = (ctx.oidc.entities.DeviceCode as { params?: { scope?: string } } | undefined)?.params?.scope;
  // The API's scopes: openid and offline_access give no access to the owner's data, and a scope the server
  // does not offer is refused before a code exists.
  const scopes = String(asked ?? '')
    .split(' ')
    .filter(isScope);
  const viewer = viewerOf(ctx);
  respond(
    ctx,
    'Approve a device',
    html`<h1>Approve a device</h1>
<p><strong>${client.clientName ?? client.clientId}</strong> asks to act for you${viewer ? html` (${viewer.email}) in the tenant <strong>${viewer.tenantName}</strong>` : null}.</p>
<p>Check that your device shows this code: <code>${userCode}</code></p>
<p>It asks for:</p>
${scopes.length ? scopeList(scopes) : html`<p>no scopes (it can only tell who you are)</p>`}
<p>Deny if you did not start this, or the code differs.</p>
${raw(form)}
<button type="submit" form="op.deviceConfirmForm">Approve</button>
<button type="submit" form="op.deviceConfirmForm" name="abort" value="yes" class="secondary">Deny</button>`,
  );
}

export async function deviceSuccessPage(ctx: KoaContextWithOIDC) {
  const name = ctx.oidc.client?.clientName ?? 'The device';
  respond(ctx, 'Device approved', html`<h1>Device approved</h1><p>${name} is now connected. You can close this page.</p>`);
}

export async function oauthErrorPage(ctx: KoaContextWithOIDC, out: { error?: string; error_description?: string }) {
  respond(
    ctx,
    'Sign-in failed',
    html`<h1>Something went wrong</h1>
<p class="error" role="alert">${out.error_description ?? out.error ?? 'The request could not be completed.'}</p>
<p>Start again from the application that sent you here.</p>`,
  );
}
