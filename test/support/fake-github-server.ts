// The fake GitHub (fake-github.ts) as a process of its own, for benchmarks: `node -r ./test/support/register-ts.js
// test/support/fake-github-server.ts <files> <bytes each>` makes the repository bench/small of that many files,
// and acme/widgets (a README with a typo), both reached by the app's installation, and prints one JSON line
// (its URLs, the app's id and key, and an installation token for plain git), then serves until killed.
// `GET /_fake/recorded` answers what it recorded: reactions, comments (every text each had), pull requests,
// check runs and branches.
import { randomBytes } from 'node:crypto';
import { startFakeGithub } from './fake-github';

(async () => {
  const [files = '200', bytes = '2000'] = process.argv.slice(2);
  const github = await startFakeGithub();
  const tree = Object.fromEntries(Array.from({ length: Number(files) }, (_, i) => [`src/module-${i}.txt`, randomBytes(Math.ceil(Number(bytes) / 2)).toString('hex')]));
  github.addRepository('bench/small', { 'README.md': 'A small repository\n', ...tree });
  github.addRepository('acme/widgets', { 'README.md': 'Widgets for evey team\n' });
  const token = `ghs_${randomBytes(18).toString('base64url')}`;
  github.tokens.set(token, { token, installationId: 1, repositories: ['bench/small'], permissions: { contents: 'read' }, revoked: false });
  console.log(JSON.stringify({ url: github.url, apiBaseUrl: github.apiBaseUrl, appId: github.app.id, privateKey: github.app.privateKey, token }));
  process.on('SIGTERM', () => void github.close().then(() => process.exit(0)));
})();
