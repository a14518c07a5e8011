// The client of the operator's Docker host (FLOWS_DOCKER_HOST or DOCKER_HOST): a Unix socket or plain TCP,
// and the few calls the executor and the diagnostics make alike.
import type Dockerode from 'dockerode';
import { clip } from '../lib/text';

/** The client, loaded only by a server with a Docker host: the others never pay for it at start. */
export function dockerClient(host: string): Dockerode {
  const Docker = require('dockerode') as typeof Dockerode;
  if (host.startsWith('unix://')) return new Docker({ socketPath: host.slice('unix://'.length) });
  const url = new URL(host.replace(/^tcp:/, 'http:'));
  return new Docker({ host: url.hostname, port: Number(url.port), protocol: 'http' });
}

/**
 * Whether the daemon runs on this machine (a Unix socket, or TCP on loopback): only then are its bridges
 * this machine's, for Flows to fence and to put the runs' egress proxies on.
 */
export function dockerIsLocal(docker: Dockerode): boolean {
  const modem = docker.modem as { socketPath?: string; host?: string };
  return Boolean(modem.socketPath) || ['localhost', '127.0.0.1', '::1', '[::1]'].includes(modem.host ?? '');
}

const REMOVE_ATTEMPTS = 3;

export const statusOf = (err: unknown) => (err as { statusCode?: number } | null)?.statusCode;
/** The daemon's own words, without the `(HTTP code 500) server error - ` dockerode puts first. */
export const messageOf = (err: unknown) => clip((err instanceof Error ? err.message : String(err)).replace(/^\(HTTP code \d+\)[^-]*- /, '').trim());
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The image as the daemon has it, or null when it has none by that name. */
export async function localImage(docker: Dockerode, image: string) {
  try {
    return await docker.getImage(image).inspect();
  } catch (err) {
    if (statusOf(err) === 404) return null;
    throw err;
  }
}

/** Force-removes the container with its anonymous volumes; one already gone counts as removed. */
export async function removeContainer(docker: Dockerode, id: string) {
  for (let attempt = 1; ; attempt++) {
    try {
      await docker.getContainer(id).remove({ force: true, v: true });
      return;
    } catch (err) {
      if (statusOf(err) === 404) return;
      if (attempt >= REMOVE_ATTEMPTS) throw err;
      await sleep(500 * attempt);
    }
  }
}
