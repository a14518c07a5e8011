import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';

/** The folder holding package.json, whether running from src/ (tests) or dist/src/ (npm start). */
function findRoot(from: string): string {
  for (let dir = from; ; dir = path.dirname(dir)) {
    if (existsSync(path.join(dir, 'package.json')) && existsSync(path.join(dir, 'openapi'))) return dir;
    if (dir === path.dirname(dir)) throw new Error(`no project root above ${from}`);
  }
}

export const projectRoot = findRoot(__dirname);

/** This release's version, as package.json gives it (MCP's server info, traces' service version). */
export const packageVersion = (JSON.parse(readFileSync(path.join(projectRoot, 'package.json'), 'utf8')) as { version: string }).version;
