// The owner's side of OAuth: the /device gate (sign in first) and /interaction/:uid, where the owner
// approves or denies a client. Grants are made for the tenant the owner is signed in to.
import express, { type Request, type Response, Router } from 'express';
import type Provider from 'oidc-provider';
import { isScope } from '../auth/principal';
import type { Db } from '../db/client';
import { NotFound, RateLimited } from '../lib/errors';
import { accountIdOf } from '../auth/accounts';
import type { DeviceViewer } from '../oauth/device-pages';
import { countUserCode } from '../oauth/user-code-guesses';
import { html, page, scopeList } from '../http/html';
import { sameOriginForms, signedInOrSentToLogin, type PageDeps, type SignedIn } from './session-pages';

interface InteractionDeps extends PageDeps {
  db: Db;
  /** The authorization server, made at its first use. */
  provider: () => Provider;
  defaultResource: string;
}

type Details = Awaited<ReturnType<Provider['interactionDetails']>>;

/** The API scopes asked for; anything else a client adds is neither shown nor granted. */
const requestedScopes = (details: Details) => String(details.params.scope ?? '').split(' ').filter(isScope);

export function interactionPages(deps: InteractionDeps): Router {
  const router = Router();
  const sameOrigin = sameOriginForms(deps.baseUrl);
  const form = express.urlencoded({ extended: false, limit: '16kb' });

  async function viewerOf(session: SignedIn): Promise<DeviceViewer> {
    const membership = await deps.db.membership.findUniqueOrThrow({
      where: { tenantId_ownerId: { tenantId: session.principal.tenantId, ownerId: session.principal.ownerId } },
      select: { owner: { select: { email: true } }, tenant: { select: { name: true } } },
    });
    return { email: membership.owner.email, tenantName: membership.tenant.name };
  }

  /** The device pages are the provider's; they need a signed-in owner, who may sign in first. */
  router.all('/device', async (req, res, next) => {
    const session = await signedInOrSentToLogin(req, res, deps.sessions);
    if (!session) return;
    if (req.method === 'POST') {
      const decision = await countUserCode(deps.limits, req);
      if (!decision.allowed) return next(new RateLimited(decision.resetSeconds, 'Too many codes that match no device were entered from your address'));
    }
    (req as Request & { deviceViewer?: DeviceViewer }).deviceViewer = await viewerOf(session);
    next();
  });

  async function load(req: Request, res: Response): Promise<Details> {
    try {
      return await deps.provider().interactionDetails(req, res);
    } catch {
      throw new NotFound('This sign-in request has expired or was already completed; start again from the application.');
    }
  }

  /**
   * Approves for the signed-in owner's tenant: the account and a grant of exactly what was asked. The
   * account is the approving session's own, so a sign-out everywhere racing the approval ends the grant too.
   */
  async function approve(req: Request, res: Response, details: Details, session: SignedIn) {
    const accountId = accountIdOf(session.principal);
    const { Grant } = deps.provider();
    const grant = new Grant({ accountId, clientId: String(details.params.client_id) });
    const missing = (details.prompt.details.missingResourceScopes ?? {}) as Record<string, string[]>;
    const asked = [details.params.resource ?? deps.defaultResource].flat().map(String);
    const resources = Object.keys(missing).length ? missing : Object.fromEntries(asked.map((resource) => [resource, requestedScopes(details)]));
    for (const [resource, scopes] of Object.entries(resources)) grant.addResourceScope(resource, scopes.join(' '));
    // The scopes are also the server's own (discovery lists them), so the grant holds them as such too.
    const scope = String(details.params.scope ?? '');
    if (scope) grant.addOIDCScope(scope);
    const grantId = await grant.save();
    await deps.provider().interactionFinished(req, res, { login: { accountId }, consent: { grantId } }, { mergeWithLastSubmission: false });
  }

  router.get('/interaction/:uid', async (req, res) => {
    const session = await signedInOrSentToLogin(req, res, deps.sessions);
    if (!session) return;
    const details = await load(req, res);
    // A device was already approved on the provider's confirmation page, which the gate above guards.
    if ((details as Details & { deviceCode?: string }).deviceCode) return approve(req, res, details, session);

    const client = await deps.provider().Client.find(String(details.params.client_id));
    const viewer = await viewerOf(session);
    const action = `/interaction/${encodeURIComponent(details.uid)}`;
    res.type('html').send(
      page(
        'Authorize an application',
        html`<h1>Authorize ${client?.clientName ?? String(details.params.client_id)}</h1>
<p>This application asks to act for you (${viewer.email}) in the tenant <strong>${viewer.tenantName}</strong>.</p>
<p>It asks for:</p>
${scopeList(requestedScopes(details))}
<form method="post" action="${action}/approve"><button type="submit">Approve</button></form>
<form method="post" action="${action}/deny"><button type="submit" class="secondary">Deny</button></form>`,
      ),
    );
  });

  router.post('/interaction/:uid/approve', sameOrigin, form, async (req, res) => {
    const session = await signedInOrSentToLogin(req, res, deps.sessions, `/interaction/${encodeURIComponent(String(req.params.uid))}`);
    if (!session) return;
    await approve(req, res, await load(req, res), session);
  });

  router.post('/interaction/:uid/deny', sameOrigin, form, async (req, res) => {
    await load(req, res);
    await deps.provider().interactionFinished(
      req,
      res,
      { error: 'access_denied', error_description: 'The owner denied the request.' },
      { mergeWithLastSubmission: false },
    );
  });

  return router;
}
