// The console's tokens page: the tenant switcher, access tokens and authorized clients with revocation,
// sign out everywhere. The same service backs the API's access operations.
import { type Request, type Response, Router } from 'express';
import type { AccessService } from '../oauth/access-service';
import { html } from '../http/html';
import { consolePage, consoleVisitor } from './console-layout';
import { sameOriginForms, signedInOrSentToLogin, type PageDeps } from './session-pages';

interface ConsoleDeps extends PageDeps {
  access: AccessService;
}

const when = (iso: string | null) => (iso ? iso.replace('T', ' ').slice(0, 16) + ' UTC' : 'never');

export function consolePages(deps: ConsoleDeps): Router {
  const router = Router();
  const sameOrigin = sameOriginForms(deps.baseUrl);

  const requireSession = (req: Request, res: Response) => signedInOrSentToLogin(req, res, deps.sessions, req.method === 'GET' ? req.originalUrl : '/console');

  router.get('/', (_req, res) => res.redirect(303, '/console'));

  router.get('/console', async (req, res) => {
    const visitor = await consoleVisitor(deps, req, res);
    if (!visitor) return;
    const { principal } = visitor;
    const [tenants, tokens, clients] = await Promise.all([
      deps.owners.tenantsOf(principal.ownerId),
      deps.access.listAccessTokens(principal),
      deps.access.listAuthorizedClients(principal),
    ]);
    res.type('html').send(
      consolePage(
        'Tokens and applications',
        visitor,
        '/console',
        html`<p>Signed in as <strong>${visitor.email}</strong> in <strong>${visitor.tenantName}</strong>.</p>
${tenants.length > 1
  ? html`<form method="post" action="/session/tenant"><label for="tenantId">Tenant</label>
<select id="tenantId" name="tenantId">${tenants.map((t) => html`<option value="${t.id}"${t.id === principal.tenantId ? html` selected` : null}>${t.name}</option>`)}</select>
<button type="submit" class="secondary">Switch tenant</button></form>`
  : null}
<form method="post" action="/logout/everywhere"><button type="submit" class="secondary">Sign out everywhere</button></form>
<h1>Authorized applications</h1>
${clients.length === 0
  ? html`<p>No application has access.</p>`
  : html`<table><thead><tr><th scope="col">Application</th><th scope="col">Scopes</th><th scope="col">Approved</th><th scope="col">Last used</th><th scope="col">Active tokens</th><th scope="col"></th></tr></thead><tbody>
${clients.map((c) => html`<tr><td>${c.clientName}</td><td>${c.scopes.join(' ')}</td><td>${when(c.grantedAt)}</td><td>${when(c.lastUsedAt)}</td><td>${c.activeTokens}</td>
<td><form method="post" action="/console/authorized-clients/${encodeURIComponent(c.clientId)}/revoke"><button type="submit" aria-label="Revoke ${c.clientName}">Revoke</button></form></td></tr>`)}
</tbody></table>`}
<h1>Access tokens</h1>
<p>Revoking a token ends that token only; revoke the application above to end its refresh tokens too.</p>
${tokens.length === 0
  ? html`<p>No live access token.</p>`
  : html`<table><thead><tr><th scope="col">Token</th><th scope="col">Application</th><th scope="col">Scopes</th><th scope="col">Resource</th><th scope="col">Expires</th><th scope="col">Last used</th><th scope="col"></th></tr></thead><tbody>
${tokens.map((t) => html`<tr><td><code>${t.id}</code></td><td>${t.clientName}</td><td>${t.scopes.join(' ')}</td><td>${t.resource}</td><td>${when(t.expiresAt)}</td><td>${when(t.lastUsedAt)}</td>
<td><form method="post" action="/console/access-tokens/${encodeURIComponent(t.id)}/revoke"><button type="submit" aria-label="Revoke token ${t.id}">Revoke</button></form></td></tr>`)}
</tbody></table>`}`,
      ),
    );
  });

  router.post('/console/access-tokens/:id/revoke', sameOrigin, async (req, res) => {
    const session = await requireSession(req, res);
    if (!session) return;
    await deps.access.revokeAccessToken(session.principal, req.params.id as string);
    res.redirect(303, '/console');
  });

  router.post('/console/authorized-clients/:clientId/revoke', sameOrigin, async (req, res) => {
    const session = await requireSession(req, res);
    if (!session) return;
    await deps.access.revokeAuthorizedClient(session.principal, req.params.clientId as string);
    res.redirect(303, '/console');
  });

  return router;
}
