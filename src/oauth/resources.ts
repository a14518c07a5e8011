// The two resources access tokens are bound to: the API and the MCP endpoint, named by the server's origin.
export interface Resources {
  api: string;
  mcp: string;
}

export const resourcesOf = (baseUrl: URL): Resources => ({ api: `${baseUrl.origin}/api/v1`, mcp: `${baseUrl.origin}/mcp` });
