// RFC 9728 protected-resource metadata for the two resources tokens can be bound to, each at its own
// address: the well-known prefix inserted before the resource's path (section 3.1), so that a client that
// checks the document's `resource` against the resource it called (section 3.3) finds them equal. Each
// resource's 401 challenge names its own document. The bare /.well-known/oauth-protected-resource is kept
// for clients that read it before: it describes the API.
import { Router } from 'express';
import { SCOPES } from '../auth/principal';
import { metadataUrlOf, RESOURCE_METADATA } from '../http/security';
import type { Resources } from './resources';


export function protectedResourceMetadata(baseUrl: URL, resources: Resources): Router {
  const describe = (resource: string, name: string) => ({
    resource,
    resource_name: name,
    authorization_servers: [baseUrl.origin],
    scopes_supported: [...SCOPES],
    bearer_methods_supported: ['header'],
    resource_documentation: `${baseUrl.origin}/docs`,
  });
  const api = describe(resources.api, 'Flows API');
  const mcp = describe(resources.mcp, 'Flows MCP endpoint');
  const pathOf = (resource: string) => new URL(metadataUrlOf(resource)).pathname;
  return Router()
    .get(pathOf(resources.api), (_req, res) => void res.json(api))
    .get(pathOf(resources.mcp), (_req, res) => void res.json(mcp))
    .get(RESOURCE_METADATA, (_req, res) => void res.json(api));
}
