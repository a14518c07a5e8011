// /api/v1: openapi-backend routes each request by the contract, the authorizer checks the credential
// against the operation's `security`, Ajv 2020 validates the request, then the typed handler runs.
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import type { ErrorObject } from 'ajv';
import type { NextFunction, Request, Response } from 'express';
import OpenAPIBackend, { type Context, type Document, type Operation } from 'openapi-backend';
import type { Principal } from '../auth/principal';
import type { Db } from '../db/client';
import { forTenant, type TenantDb } from '../db/tenant-scope';
import { MethodNotAllowed, NotFound, NotImplemented, ValidationFailed } from '../lib/errors';
import { isUsableDateTime } from '../lib/instants';
import type { Contract } from './contract';
import { requirementOf, type Authorizer, type Requirement } from './security';
import type { HandlerMap, OperationId } from './types';
import { validationMessage } from './validation-errors';

const METHODS = ['get', 'put', 'post', 'patch', 'delete'];

function newAjv(options: Record<string, unknown>) {
  // Keep the per-context options openapi-backend passes (it coerces path and query parameters).
  // `discriminator` makes a oneOf report the errors of the branch its `type` selects, not of the first branch.
  const ajv = new Ajv2020({ ...options, strict: false, allErrors: false, discriminator: true });
  addFormats(ajv);
  // Every date-time the contract takes is checked here, once: syntax, a real instant, the range.
  ajv.addFormat('date-time', { type: 'string', validate: isUsableDateTime });
  return ajv;
}

/** Operations that answer text rather than JSON, with its media type. */
const TEXT_TYPES: Record<string, string> = { getRunPatch: 'text/x-diff; charset=utf-8' };

export interface Api {
  handle(req: Request, res: Response, next: NextFunction): void;
  /** Whether the matched operation declares a request body (for the 415 check before parsing). */
  takesBody(req: Request): boolean;
  /** Whether the matched operation documents `status` among its responses. */
  documents(req: Request, status: number): boolean;
  /** Why `body` is not a valid request body of the operation, in the words of its 400 `validation_failed`, or null. */
  bodyProblem(operationId: OperationId, body: unknown): string | null;
  backend: OpenAPIBackend;
  /** The contract it routes by. */
  contract: Contract;
}

export async function createApi({ contract, authorizer, handlers, db }: { contract: Contract; authorizer: Authorizer; handlers: HandlerMap; db: Db }): Promise<Api> {
  const backend = new OpenAPIBackend({
    definition: contract.routing as Document,
    strict: true,
    // Validators are compiled per operation on first use rather than all at start (seconds of CPU, and the
    // response validators are never used at run time); the document is already inlined, so the quick
    // path's synchronous dereference has nothing to resolve (it copies the routing part whole).
    quick: true,
    validate: true,
    coerceTypes: true,
    customizeAjv: (_draft07, options) => newAjv(options as Record<string, unknown>) as any,
  });
  // Its definition check knows OpenAPI 3.0 only; the document is linted as 3.1 in CI instead.
  backend.validateDefinition = () => backend.document as any;

  await backend.init();
  // The router flattens the whole document into a new list of operations on every match (each request
  // matches two or three times, and each handler registered after init looks its operation up): the
  // document is fixed once initialised, so the list is made once.
  const operations = backend.router.getOperations();
  backend.router.getOperations = () => operations;

  const requirements = new Map<string, Requirement | null>();
  /** Who made each request, once its operation's security requirement is met. */
  const principals = new WeakMap<Request, Principal>();

  backend.register({
    notFound: () => {
      throw new NotFound('No such endpoint.');
    },
    methodNotAllowed: (c: Context, req: Request) => {
      const allow = METHODS.filter((method) => backend.router.matchOperation({ method, path: c.request.path, headers: {} } as any)).map((m) => m.toUpperCase());
      throw new MethodNotAllowed(req.method, allow.includes('GET') ? [...allow, 'HEAD'] : allow);
    },
    postSecurityHandler: async (c: Context, req: Request) => {
      const operation = c.operation as Operation;
      if (!requirements.has(operation.operationId!)) requirements.set(operation.operationId!, requirementOf(operation.security as any));
      const requirement = requirements.get(operation.operationId!);
      if (requirement) principals.set(req, await authorizer.authorize(req, requirement));
    },
    validationFail: (c: Context) => {
      throw new ValidationFailed(validationMessage(c.validation.errors as ErrorObject[]));
    },
    notImplemented: (c: Context) => {
      throw new NotImplemented(c.operation.operationId!);
    },
  });

  for (const [operationId, handler] of Object.entries(handlers) as [OperationId, any][]) {
    backend.register(operationId, async (c: Context, req: Request, res: Response) => {
      const principal = principals.get(req)!;
      let tenantDb: TenantDb | undefined;
      const result = await handler({
        principal,
        // Made on first use: most handlers of identity and access never touch tenant data.
        get db() {
          return (tenantDb ??= forTenant(db, principal.tenantId));
        },
        body: c.request.requestBody,
        params: c.request.params,
        query: c.request.query,
        req,
        res,
        log: req.log,
      });
      for (const [name, value] of Object.entries(result.headers ?? {})) res.setHeader(name, value as string);
      if (result.status === 204) res.status(204).end();
      else if (typeof result.body === 'string') res.status(result.status).type(TEXT_TYPES[c.operation.operationId!] ?? 'text/plain').send(result.body);
      else res.status(result.status).json(result.body);
    });
  }

  // HEAD is GET without the body (RFC 9110 section 9.3.2); Node leaves the body out of HEAD answers.
  const toRequest = (req: Request) => ({
    method: req.method === 'HEAD' ? 'GET' : req.method,
    path: req.originalUrl.split('?')[0],
    query: req.query as Record<string, string | string[]>,
    headers: req.headers as Record<string, string | string[]>,
    // openapi-backend JSON-parses a body that is not an object once more; a body that is a JSON string
    // (`"{…}"`) must reach validation as the string it is.
    body: typeof req.body === 'string' ? JSON.stringify(req.body) : req.body,
  });

  const operationOf = (req: Request) => backend.router.matchOperation({ ...toRequest(req), body: undefined });

  return {
    backend,
    contract,
    handle(req, res, next) {
      backend.handleRequest(toRequest(req), req, res).catch(next);
    },
    takesBody: (req) => Boolean(operationOf(req)?.requestBody),
    documents: (req, status) => Boolean(operationOf(req)?.responses?.[String(status)]),
    bodyProblem(operationId, body) {
      const { method, path } = backend.router.getOperation(operationId)!;
      const result = backend.validator.validateRequest({ method, path, body, headers: { 'content-type': 'application/json' }, query: {} }, operationId);
      return result.valid ? null : validationMessage(result.errors as ErrorObject[]);
    },
  };
}
