// Node 22's cache of compiled modules (`module.enableCompileCache`): a restart reads back the code V8
// compiled the last time instead of compiling every module again. main.ts imports this first, before the
// modules it caches. Node 20 has no such cache and compiles as before; NODE_COMPILE_CACHE, when set, wins.
import module from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { projectRoot } from './paths';

const enable = (module as { enableCompileCache?: (dir?: string) => { status: number } }).enableCompileCache;
const FAILED = (module as { constants?: { compileCacheStatus?: { FAILED?: number } } }).constants?.compileCacheStatus?.FAILED;
if (enable && !process.env.NODE_COMPILE_CACHE) {
  // A read-only install (the container image) keeps it in the temporary folder instead.
  if (enable(path.join(projectRoot, 'node_modules', '.cache', 'flows-compile')).status === FAILED) enable(path.join(tmpdir(), 'flows-compile-cache'));
}
