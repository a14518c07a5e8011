// Sign-in, sign-out, sign-out everywhere, the tenant switch, sign-up and the console, over real HTTP.
import request from 'supertest';
import { startTestApp, BASE_URL, type TestApp } from '../support/app';
import { accessToken } from '../support/identity';

const PASSWORD = 'correct horse battery';
let app: TestApp;

beforeAll(async () => {
  app = await startTestApp({}, { policies: { signInPair: { points: 3, durationSeconds: 60 } } });
});
afterAll(() => app.close());

let counter = 0;
async function owner(tenantName = 'Acme') {
  const email = `owner${++counter}@example.test`;
  const { ownerId, tenant } = await app.owners.createOwner({ email, password: PASSWORD, tenantName });
  return { email, ownerId, tenantId: tenant.id };
}

const signIn = (email: string, password: string, next?: string) =>
  request(app.app)
    .post(`/login${next === undefined ? '' : `?next=${encodeURIComponent(next)}`}`)
    .set('origin', BASE_URL)
    .type('form')
    .send({ email, password });

const cookieOf = (res: request.Response) => (res.headers['set-cookie'] as unknown as string[]).find((c) => c.startsWith('svc_session='))!.split(';')[0];
const me = (cookie: string) => request(app.app).get('/api/v1/me').set('cookie', cookie);

describe('GET /login', () => {
  it('serves a form with labelled Email and Password fields and a Sign in button, without external assets', async () => {
    const res = await request(app.app).get('/login');
    expect(res.status).toBe(200);
    expect(res.text).toMatch(/<label for="email">Email<\/label>/);
    expect(res.text).toMatch(/<input type="email" id="email"/);
    expect(res.text).toMatch(/<label for="password">Password<\/label>/);
    expect(res.text).toMatch(/<button type="submit">Sign in<\/button>/);
    expect(res.text).not.toMatch(/(src|href)="https?:/);
  });
});

describe('POST /login', () => {
  it('signs in, sets the session cookie and goes to the console', async () => {
    const { email, ownerId } = await owner();
    const res = await signIn(email.toUpperCase(), PASSWORD);
    expect(res.status).toBe(303);
    expect(res.headers.location).toBe('/console');
    expect((await me(cookieOf(res))).body.owner.id).toBe(ownerId);
  });

  it.each([
    ['/interaction/abc?x=1', '/interaction/abc?x=1'],
    ['//evil.example/path', '/console'],
    ['https://evil.example/', '/console'],
    ['/\\evil.example', '/console'],
    ['javascript:alert(1)', '/console'],
  ])('follows next=%s only to local paths (goes to %s)', async (next, expected) => {
    const { email } = await owner();
    expect((await signIn(email, PASSWORD, next)).headers.location).toBe(expected);
  });

  it('gives the same generic answer for a wrong password and an unknown account', async () => {
    const { email } = await owner();
    const wrong = await signIn(email, 'not the password');
    const unknown = await signIn('nobody@example.test', 'not the password');
    expect(wrong.status).toBe(401);
    expect(unknown.status).toBe(401);
    expect(wrong.text).toContain('The email or password is not correct.');
    expect(unknown.text).toContain('The email or password is not correct.');
    expect(wrong.headers['set-cookie']).toBeUndefined();
  });

  it('makes the address that failed repeatedly wait, even for the right password, with Retry-After and the wait on the page', async () => {
    const { email } = await owner();
    for (let i = 0; i < 3; i++) expect((await signIn(email, 'wrong password!')).status).toBe(401);
    const waiting = await signIn(email, PASSWORD);
    expect(waiting.status).toBe(429);
    expect(waiting.headers['retry-after']).toBe('1');
    expect(waiting.text).toContain('Too many failed attempts. Try again in 1 second.');
    expect(waiting.headers['set-cookie']).toBeUndefined();
  });

  it('shows a browser an error page, not JSON, when a form is refused', async () => {
    const res = await request(app.app).post('/login').set('origin', 'https://evil.example').set('accept', 'text/html,application/xhtml+xml').type('form').send({ email: 'a@b.c', password: 'x' });
    expect(res.status).toBe(403);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(res.text).toContain('role="alert"');
  });

  it('counts a burst of concurrent attempts before checking any password', async () => {
    const { email } = await owner();
    const statuses = await Promise.all(Array.from({ length: 8 }, () => signIn(email, 'wrong password!').then((r) => r.status)));
    expect(statuses.filter((s) => s === 401)).toHaveLength(3);
    expect(statuses.filter((s) => s === 429)).toHaveLength(5);
  });

  it('refuses a sign-in form posted from another site', async () => {
    const { email } = await owner();
    const res = await request(app.app).post('/login').set('origin', 'https://evil.example').type('form').send({ email, password: PASSWORD });
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe('cross_site_request');
  });
});

describe('signing out', () => {
  it('POST /logout ends this session only', async () => {
    const { email } = await owner();
    const first = cookieOf(await signIn(email, PASSWORD));
    const second = cookieOf(await signIn(email, PASSWORD));
    const res = await request(app.app).post('/logout').set('origin', BASE_URL).set('cookie', first);
    expect(res.status).toBe(303);
    expect((await me(first)).status).toBe(401);
    expect((await me(second)).status).toBe(200);
  });

  it('sign-out everywhere ends every session and every token of the owner at once', async () => {
    const { email, ownerId, tenantId } = await owner();
    const first = cookieOf(await signIn(email, PASSWORD));
    const second = cookieOf(await signIn(email, PASSWORD));
    const token = await accessToken(app, { ownerId, tenantId, email });
    expect((await request(app.app).get('/api/v1/me').set('authorization', `Bearer ${token}`)).status).toBe(200);
    await request(app.app).post('/logout/everywhere').set('origin', BASE_URL).set('cookie', first).expect(303);
    expect((await me(first)).status).toBe(401);
    expect((await me(second)).status).toBe(401);
    expect((await request(app.app).get('/api/v1/me').set('authorization', `Bearer ${token}`)).status).toBe(401);
  });
});

describe('tenants', () => {
  it('offers a switcher to an owner of several tenants, and switching moves the session', async () => {
    const { email, ownerId } = await owner('First');
    const second = await app.owners.createOwner({ email, password: 'ignored', tenantName: 'Second', addTenant: true });
    const cookie = cookieOf(await signIn(email, PASSWORD));
    const consolePage = await request(app.app).get('/console').set('cookie', cookie);
    expect(consolePage.text).toContain('Switch tenant');
    expect(consolePage.text).toContain('Second');
    const res = await request(app.app).post('/session/tenant').set('origin', BASE_URL).set('cookie', cookie).type('form').send({ tenantId: second.tenant.id });
    expect(res.status).toBe(303);
    expect((await me(cookie)).body.tenant).toEqual({ id: second.tenant.id, name: 'Second' });
    expect((await me(cookie)).body.owner.id).toBe(ownerId);
  });

  it('refuses a switch to a tenant the owner is not a member of', async () => {
    const { email } = await owner();
    const stranger = await owner('Other');
    const cookie = cookieOf(await signIn(email, PASSWORD));
    const res = await request(app.app).post('/session/tenant').set('origin', BASE_URL).set('cookie', cookie).type('form').send({ tenantId: stranger.tenantId });
    expect(res.status).toBe(404);
  });
});

describe('sign-up', () => {
  it('is closed by default', async () => {
    const res = await request(app.app).post('/signup').set('origin', BASE_URL).type('form').send({ email: 'new@example.test', password: PASSWORD });
    expect(res.status).toBe(303);
    expect(res.headers.location).toBe('/login');
    expect(await app.database.db.owner.count({ where: { email: 'new@example.test' } })).toBe(0);
  });

  it('creates an owner with a tenant when FLOWS_SIGNUP=open', async () => {
    const open = await startTestApp({ signupOpen: true });
    try {
      const res = await request(open.app).post('/signup').set('origin', BASE_URL).type('form').send({ email: 'new@example.test', password: PASSWORD });
      expect(res.status).toBe(303);
      const body = (await request(open.app).get('/api/v1/me').set('cookie', cookieOf(res))).body;
      expect(body.owner.email).toBe('new@example.test');
      const again = await request(open.app).post('/signup').set('origin', BASE_URL).type('form').send({ email: 'new@example.test', password: 'another password' });
      expect(again.status).toBe(409);
      expect(again.headers['set-cookie']).toBeUndefined();
      expect(await open.database.db.membership.count({ where: { owner: { email: 'new@example.test' } } })).toBe(1);
      const short = await request(open.app).post('/signup').set('origin', BASE_URL).type('form').send({ email: 'b@example.test', password: 'short' });
      expect(short.status).toBe(400);
      expect(short.text).toContain('at least 10 characters');
    } finally {
      await open.close();
    }
  });
});

describe('the console', () => {
  it('sends a visitor without a session to sign in first', async () => {
    const res = await request(app.app).get('/console');
    expect(res.status).toBe(303);
    expect(res.headers.location).toBe('/login?next=%2Fconsole');
  });

  it('lists the owner\'s tokens, never their values, and revokes one', async () => {
    const { email, ownerId, tenantId } = await owner();
    const token = await accessToken(app, { ownerId, tenantId, email });
    const cookie = cookieOf(await signIn(email, PASSWORD));
    const page = await request(app.app).get('/console').set('cookie', cookie);
    expect(page.text).toContain('Test client');
    expect(page.text).not.toContain(token);
    const id = /\/console\/access-tokens\/(at_[^/]+)\/revoke/.exec(page.text)![1];
    await request(app.app).post(`/console/access-tokens/${id}/revoke`).set('origin', BASE_URL).set('cookie', cookie).expect(303);
    expect((await request(app.app).get('/api/v1/me').set('authorization', `Bearer ${token}`)).status).toBe(401);
  });
});
