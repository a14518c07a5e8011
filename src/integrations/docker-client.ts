// The client of the operator's Docker host (FLOWS_DOCKER_HOST or DOCKER_HOST): a Unix socket or plain TCP.
import Dockerode from 'dockerode';

export function dockerClient(host: string): Dockerode {
  if (host.startsWith('unix://')) return new Dockerode({ socketPath: host.slice('unix://'.length) });
  const url = new URL(host.replace(/^tcp:/, 'http:'));
  return new Dockerode({ host: url.hostname, port: Number(url.port), protocol: 'http' });
}
