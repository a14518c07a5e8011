// Handler types derived from the generated contract types, so a handler cannot answer a shape
// or a status its operation does not document.
import type { Request, Response } from 'express';
import type { operations } from '../../generated/openapi';
import type { Principal } from '../auth/principal';
import type { TenantDb } from '../db/tenant-scope';
import type { Logger } from '../lib/logger';

export type OperationId = keyof operations;

type JsonOf<T> = T extends { content: { 'application/json': infer Body } } ? Body : T extends { content: { 'text/x-diff': infer Text } } ? Text : undefined;
type Responses<Op extends OperationId> = operations[Op]['responses'];
type SuccessStatus<Op extends OperationId> = Extract<keyof Responses<Op>, 200 | 201 | 202 | 204>;

export type RequestBody<Op extends OperationId> = operations[Op] extends { requestBody?: infer Body } ? JsonOf<NonNullable<Body>> : undefined;
export type PathParams<Op extends OperationId> = operations[Op]['parameters'] extends { path?: infer P } ? NonNullable<P> : never;
export type QueryParams<Op extends OperationId> = operations[Op]['parameters'] extends { query?: infer Q } ? NonNullable<Q> : never;

export type HandlerResult<Op extends OperationId> = {
  [S in SuccessStatus<Op>]: { status: S; body: JsonOf<Responses<Op>[S]>; headers?: Record<string, string> };
}[SuccessStatus<Op>];

export interface HandlerContext<Op extends OperationId> {
  principal: Principal;
  /** The database as the principal's tenant sees it: the only way domain services reach tenant data. */
  db: TenantDb;
  body: RequestBody<Op>;
  params: PathParams<Op>;
  query: QueryParams<Op>;
  req: Request;
  res: Response;
  log: Logger;
}

export type Handler<Op extends OperationId> = (ctx: HandlerContext<Op>) => Promise<HandlerResult<Op>>;
export type HandlerMap = { [Op in OperationId]?: Handler<Op> };
