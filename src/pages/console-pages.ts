// The console's tokens page: the tenant switcher, access tokens and authorized clients with revocation,
// sign out everywhere. The same service backs the API's access operations.
import { type Request, type Response, Router } from 'express';
import type { AccessService } from '../oauth/access-service';
import { html } from '../http/html';
import { consolePage, consoleVisitor, table, time } from './console-layout';
import { sameOriginForms, signedInOrSentToLogin, type PageDeps } from './session-pages';

interface ConsoleDeps extends PageDeps {
  access: AccessService;
}

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
${table(
  ['Application', 'Scopes', 'Approved', 'Last used', 'Active tokens', ''],
  clients.map((c) => [html`${c.clientName}`, html`${c.scopes.join(' ')}`, time(c.grantedAt, 'never'), time(c.lastUsedAt, 'never'), html`${c.activeTokens}`,
    html`<form method="post" action="/console/authorized-clients/${encodeURIComponent(c.clientId)}/revoke"><button type="submit" aria-label="Revoke ${c.clientName}">Revoke</button></form>`]),
  'No application has access.',
)}
<h1>Access tokens</h1>
<p>Revoking a token ends that token only; revoke the application above to end its refresh tokens too.</p>
${table(
  ['Token', 'Application', 'Scopes', 'Resource', 'Expires', 'Last used', ''],
  tokens.map((t) => [html`<code class="long-id">${t.id}</code>`, html`${t.clientName}`, html`${t.scopes.join(' ')}`, html`${t.resource}`, time(t.expiresAt, 'never'), time(t.lastUsedAt, 'never'),
    html`<form method="post" action="/console/access-tokens/${encodeURIComponent(t.id)}/revoke"><button type="submit" aria-label="Revoke token ${t.id}">Revoke</button></form>`]),
  'No live access token.',
)}`,
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
