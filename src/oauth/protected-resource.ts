// RFC 9728 protected-resource metadata for the two resources tokens can be bound to; 401 challenges
// point clients here to find the authorization server.
import { Router } from 'express';
import { SCOPES } from '../auth/principal';
import type { Resources } from './provider';

export function protectedResourceMetadata(baseUrl: URL, resources: Resources): Router {
  const describe = (resource: string) => ({
    resource,
    authorization_servers: [baseUrl.origin],
    scopes_supported: [...SCOPES],
    bearer_methods_supported: ['header'],
    resource_documentation: `${baseUrl.origin}/docs`,
  });
  return Router()
    .get('/.well-known/oauth-protected-resource', (_req, res) => void res.json(describe(resources.api)))
    .get('/.well-known/oauth-protected-resource/api/v1', (_req, res) => void res.json(describe(resources.api)))
    .get('/.well-known/oauth-protected-resource/mcp', (_req, res) => void res.json(describe(resources.mcp)));
}
