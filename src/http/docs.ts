// The contract as documents (/openapi.yaml, /openapi.json) and Swagger UI at /docs, served from the
// installed swagger-ui-dist package: no CDN. Same origin, so "Try it out" carries the owner's session cookie.
import express, { Router } from 'express';
import path from 'node:path';
import type { Contract } from './contract';

const assets = path.dirname(require.resolve('swagger-ui-dist/package.json'));

const PAGE = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>Flows API</title>
  <link rel="icon" type="image/png" href="/favicon.ico">
  <link rel="stylesheet" href="/docs/assets/swagger-ui.css">
  <!-- On a phone: long names in the descriptions' tables may break, and the responses' Links column (the contract has none) goes. -->
  <style>@media (max-width:40rem){.swagger-ui .renderedMarkdown :is(td,code){overflow-wrap:anywhere}.swagger-ui .response-col_links{display:none}}</style>
</head>
<body>
  <div id="swagger-ui"></div>
  <script src="/docs/assets/swagger-ui-bundle.js"></script>
  <script src="/docs/init.js"></script>
</body>
</html>`;

const INIT = `window.ui = SwaggerUIBundle({
  url: '/openapi.json',
  dom_id: '#swagger-ui',
  deepLinking: true,
  persistAuthorization: true,
  tryItOutEnabled: false,
});`;

export function docsRouter(contract: Contract): Router {
  let json: string | undefined;
  const router = Router();
  router.get('/openapi.yaml', (_req, res) => res.type('application/yaml').send(contract.yaml));
  router.get('/openapi.json', (_req, res) => res.type('application/json').send((json ??= JSON.stringify(contract.document))));
  router.get(['/docs', '/docs/'], (_req, res) => res.type('html').send(PAGE));
  router.get('/docs/init.js', (_req, res) => res.type('application/javascript').send(INIT));
  router.use('/docs/assets', express.static(assets, { index: false, maxAge: '1h' }));
  // Browsers ask every page's origin for one; the docs' icon serves the whole site.
  router.get('/favicon.ico', (_req, res) => res.type('image/png').sendFile(path.join(assets, 'favicon-32x32.png'), { maxAge: '1d' }));
  return router;
}
