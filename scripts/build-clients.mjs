// Builds the client packages after install (`postinstall`), so that `npx flows` works on a fresh clone:
// the SDK first (the CLI imports its built types), then the CLI, which clients/cli/bin/flows.js loads.
import { execFileSync } from 'node:child_process';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '..');
const tsc = path.join(root, 'node_modules', '.bin', 'tsc');
for (const project of ['clients/sdk', 'clients/cli']) execFileSync(tsc, ['-p', path.join(root, project, 'tsconfig.json')], { cwd: root, stdio: 'inherit' });
