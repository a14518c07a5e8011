// Composes the Express app from its parts. Dependencies come in, so a test can build a second app cheaply.
import { hkdfSync } from 'node:crypto';
import cookieParser from 'cookie-parser';
import express, { type Express } from 'express';
import helmet from 'helmet';
import { accountHandlers } from './account/account-handlers';
import { createAccountService } from './account/account-service';
import { createBearerVerifier } from './auth/bearer-verifier';
import { createSessionService, type SessionService } from './auth/session-service';
import type { Config } from './config';
import type { Db } from './db/client';
import { createApi, type Api } from './http/api';
import { jsonBody, requireJson } from './http/body';
import { loadContract, type Contract } from './http/contract';
import { docsRouter } from './http/docs';
import { errorHandler } from './http/error-handler';
import { healthRouter } from './http/health';
import { requestContext } from './http/request-context';
import { createAuthorizer } from './http/security';
import { NotFound } from './lib/errors';
import type { Logger } from './lib/logger';

export interface AppDeps {
  config: Config;
  db: Db;
  logger: Logger;
  contract?: Contract;
}

export interface App {
  app: Express;
  api: Api;
  sessions: SessionService;
  cookieSecret: string;
}

/** Keys derive from the one configured secret, each for one purpose. */
export function deriveKey(secretKey: Buffer, purpose: string): Buffer {
  return Buffer.from(hkdfSync('sha256', secretKey, Buffer.alloc(0), `flows ${purpose}`, 32));
}

export async function buildApp({ config, db, logger, contract = loadContract() }: AppDeps): Promise<App> {
  const sessions = createSessionService({ db });
  const authorizer = createAuthorizer({
    sessions,
    bearer: createBearerVerifier({ db }),
    baseUrl: config.baseUrl,
    apiResource: `${config.baseUrl.origin}/api/v1`,
  });
  const api = await createApi({
    contract,
    authorizer,
    handlers: { ...accountHandlers(createAccountService({ db })) },
  });
  const cookieSecret = deriveKey(config.secretKey, 'session cookie').toString('hex');

  const app = express();
  app.disable('x-powered-by');
  app.set('trust proxy', config.trustProxy);
  app.use(requestContext(logger));
  const https = config.baseUrl.protocol === 'https:';
  app.use(
    helmet({
      // Over plain http (a local or LAN install) neither upgrading requests nor HSTS can work.
      contentSecurityPolicy: { directives: { upgradeInsecureRequests: https ? [] : null } },
      strictTransportSecurity: https,
    }),
  );
  app.use(cookieParser(cookieSecret));
  app.use(healthRouter(db));
  app.use(docsRouter(contract));
  app.use('/api', requireJson(api.takesBody), jsonBody, api.handle);
  app.use((_req, _res, next) => next(new NotFound('No such endpoint.')));
  app.use(errorHandler);

  return { app, api, sessions, cookieSecret };
}
