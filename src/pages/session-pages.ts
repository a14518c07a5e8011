// Owner sign-in and sign-out pages: /login, /signup (when open), /logout, sign-out everywhere and the
// tenant switch. Forms post same-origin only; failed sign-ins slow down the account and address that fail
// (auth/sign-in-throttle.ts), and sign-ups are limited per address.
import express, { type Request, type Response, Router } from 'express';
import type { Principal } from '../auth/principal';
import { SESSION_COOKIE, sessionCookieOptions, type SessionService } from '../auth/session-service';
import type { RateLimits } from '../http/rate-limit';
import { isSameOrigin } from '../http/security';
import { AppError, CrossSiteRequest, RateLimited } from '../lib/errors';
import { inWords } from '../auth/sign-in-throttle-fns';
import { normaliseEmail, type OwnerService } from '../owners/owner-service';
import { html, page } from '../http/html';

export interface PageDeps {
  baseUrl: URL;
  sessions: SessionService;
  owners: OwnerService;
  limits: RateLimits;
  signupOpen: boolean;
}

export interface SignedIn {
  token: string;
  principal: Principal;
}

export async function signedIn(req: Request, sessions: SessionService): Promise<SignedIn | null> {
  const token = req.signedCookies?.[SESSION_COOKIE];
  if (typeof token !== 'string') return null;
  const principal = await sessions.authenticate(token);
  return principal ? { token, principal } : null;
}

/** Only local paths: `/console`, never `//evil.example` or `https://…`. */
export function safeNext(next: unknown): string {
  return typeof next === 'string' && /^\/(?![/\\])/.test(next) ? next : '/console';
}

export const loginUrl = (next: string) => `/login?next=${encodeURIComponent(next)}`;

/**
 * The signed-in owner, or null once the visitor has been sent to sign in and come back to `returnTo`
 * (by default the page asked for; a form post should name the page that shows the form).
 */
export async function signedInOrSentToLogin(req: Request, res: Response, sessions: SessionService, returnTo = req.originalUrl): Promise<SignedIn | null> {
  const session = await signedIn(req, sessions);
  if (!session) res.redirect(303, loginUrl(returnTo));
  return session;
}

export function sameOriginForms(baseUrl: URL) {
  return (req: Request, _res: Response, next: (err?: unknown) => void) => next(isSameOrigin(req, baseUrl) ? undefined : new CrossSiteRequest());
}

const GENERIC_FAILURE = 'The email or password is not correct.';

function credentialsForm(action: 'login' | 'signup', next: string, { email = '', error = '' } = {}) {
  const signup = action === 'signup';
  return html`<h1>${signup ? 'Create your account' : 'Sign in to Flows'}</h1>
${error ? html`<p class="error" role="alert">${error}</p>` : null}
<form method="post" action="/${action}?next=${encodeURIComponent(next)}">
<label for="email">Email</label>
<input type="email" id="email" name="email" value="${email}" autocomplete="email" required autofocus>
<label for="password">Password</label>
<input type="password" id="password" name="password" autocomplete="${signup ? 'new-password' : 'current-password'}" required>
<button type="submit">${signup ? 'Create account' : 'Sign in'}</button>
</form>`;
}

export function sessionPages(deps: PageDeps): Router {
  const router = Router();
  const form = express.urlencoded({ extended: false, limit: '16kb' });
  const sameOrigin = sameOriginForms(deps.baseUrl);

  async function startSession(res: Response, ownerId: string, next: string) {
    const [tenant] = await deps.owners.tenantsOf(ownerId);
    if (!tenant) throw new AppError(403, 'no_tenant', 'This account belongs to no tenant; ask an administrator to add it to one.');
    const { token, expiresAt } = await deps.sessions.create(ownerId, tenant.id);
    res.cookie(SESSION_COOKIE, token, sessionCookieOptions(deps.baseUrl, expiresAt));
    res.redirect(303, next);
  }

  function refuse(res: Response, status: number, next: string, email: string, error: string) {
    res.status(status).type('html').send(page('Sign in', credentialsForm('login', next, { email, error })));
  }

  router.get('/login', (req, res) => {
    res.type('html').send(page('Sign in', credentialsForm('login', safeNext(req.query.next))));
  });

  router.post('/login', sameOrigin, form, async (req, res) => {
    const next = safeNext(req.query.next);
    const email = normaliseEmail(String(req.body?.email ?? ''));
    const password = String(req.body?.password ?? '');
    const address = req.ip ?? '';
    const verdict = await deps.limits.signIn.attempt(email, address);
    if (!verdict.allowed) {
      const { headers } = new RateLimited(verdict.retryAfterSeconds);
      res.setHeader('Retry-After', headers['Retry-After']);
      return refuse(res, 429, next, email, `Too many failed attempts. Try again in ${inWords(Number(headers['Retry-After']))}.`);
    }
    const ownerId = await deps.owners.authenticate(email, password);
    if (!ownerId) return refuse(res, 401, next, email, GENERIC_FAILURE);
    await deps.limits.signIn.succeeded(email, address);
    await startSession(res, ownerId, next);
  });

  router.get('/signup', (req, res) => {
    if (!deps.signupOpen) return res.redirect(303, '/login');
    res.type('html').send(page('Create your account', credentialsForm('signup', safeNext(req.query.next))));
  });

  router.post('/signup', sameOrigin, form, async (req, res) => {
    if (!deps.signupOpen) return res.redirect(303, '/login');
    const next = safeNext(req.query.next);
    const email = String(req.body?.email ?? '');
    const decision = await deps.limits.consume('signInIp', req.ip ?? '');
    if (!decision.allowed) {
      return res.status(429).type('html').send(page('Create your account', credentialsForm('signup', next, { email, error: 'Too many attempts. Wait a few minutes, then try again.' })));
    }
    try {
      const ownerId = await deps.owners.signUp({ email, password: String(req.body?.password ?? '') });
      await startSession(res, ownerId, next);
    } catch (err) {
      if (!(err instanceof AppError) || err.status >= 500) throw err;
      res.status(err.status).type('html').send(page('Create your account', credentialsForm('signup', next, { email, error: err.message })));
    }
  });

  router.post('/logout', sameOrigin, async (req, res) => {
    const session = await signedIn(req, deps.sessions);
    if (session) await deps.sessions.destroy(session.token);
    res.clearCookie(SESSION_COOKIE, { path: '/' });
    res.redirect(303, '/login');
  });

  router.post('/logout/everywhere', sameOrigin, async (req, res) => {
    const session = await signedIn(req, deps.sessions);
    if (session) await deps.owners.signOutEverywhere(session.principal.ownerId);
    res.clearCookie(SESSION_COOKIE, { path: '/' });
    res.redirect(303, '/login');
  });

  router.post('/session/tenant', sameOrigin, form, async (req, res) => {
    const session = await signedInOrSentToLogin(req, res, deps.sessions, '/console');
    if (!session) return;
    const switched = await deps.sessions.switchTenant(session.token, String(req.body?.tenantId ?? ''));
    if (!switched) throw new AppError(404, 'not_found', 'You are not a member of that tenant.');
    res.redirect(303, safeNext(req.body?.next));
  });

  return router;
}
