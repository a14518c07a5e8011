import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { load as parse } from 'js-yaml';
import { projectRoot } from '../lib/paths';

export interface Contract {
  yaml: string;
  /**
   * What requests are routed and validated by: the inlined paths with each response's status but not its
   * schema (answers are not validated at run time), and the security schemes. A tenth of `inlined`, which
   * openapi-backend copies whole at start.
   */
  routing: Record<string, any>;
  /** The parsed document, read at first use (what /openapi.json answers). */
  readonly document: Record<string, any>;
  /** The document as validators take it, read at first use (MCP's tools, answers checked in tests): every local `$ref` inlined as a fresh copy, discriminator mappings dropped. */
  readonly inlined: Record<string, any>;
}

/**
 * Inlines local `$ref`s (siblings such as `description` are kept, as OpenAPI 3.1 allows). Every use gets
 * its own copy: openapi-backend rewrites objects met twice into `$ref`s, which breaks shared `properties`.
 * Discriminator mappings are dropped: Ajv refuses them (the SDK types need them), and the branches are
 * told apart by their `type` const anyway.
 */
export function inlineRefs(document: Record<string, any>): Record<string, any> {
  const resolve = (pointer: string) =>
    pointer.slice(2).split('/').reduce((node, key) => node?.[key.replace(/~1/g, '/').replace(/~0/g, '~')], document as any);

  const visit = (node: any, stack: string[]): any => {
    if (Array.isArray(node)) return node.map((item) => visit(item, stack));
    if (node === null || typeof node !== 'object') return node;
    const { $ref, ...siblings } = node;
    if (typeof $ref === 'string' && $ref.startsWith('#/')) {
      if (stack.includes($ref)) throw new Error(`recursive $ref ${$ref} cannot be inlined`);
      const target = resolve($ref);
      if (target === undefined) throw new Error(`unresolved $ref ${$ref}`);
      return { ...visit(target, [...stack, $ref]), ...visit(siblings, stack) };
    }
    const copy = Object.fromEntries(Object.entries(node).map(([key, value]) => [key, visit(value, stack)]));
    if (copy.discriminator?.mapping) copy.discriminator = { propertyName: copy.discriminator.propertyName };
    return copy;
  };
  return visit(document, []);
}

/** The inlined document without what routing and request validation never read. */
export function routingOf(inlined: Record<string, any>): Record<string, any> {
  const METHODS = new Set(['get', 'put', 'post', 'patch', 'delete', 'head', 'options', 'trace']);
  const paths = Object.fromEntries(
    Object.entries<Record<string, any>>(inlined.paths ?? {}).map(([template, item]) => [
      template,
      Object.fromEntries(
        Object.entries(item).map(([key, value]) => {
          if (!METHODS.has(key)) return [key, value];
          const { operationId, parameters, requestBody, security, responses } = value;
          const statuses = Object.fromEntries(Object.keys(responses ?? {}).map((status) => [status, { description: '' }]));
          return [key, { operationId, parameters, requestBody, security, responses: statuses }];
        }),
      ),
    ]),
  );
  return { openapi: inlined.openapi, info: inlined.info, servers: inlined.servers, security: inlined.security, paths, components: { securitySchemes: inlined.components?.securitySchemes ?? {} } };
}

/**
 * Where parsed contracts are kept between starts, named by the SHA-256 of their YAML and of this file's
 * code: parsing and inlining take about 80 ms of a start, reading the routing part back under 5, and the
 * rest is read when first asked for.
 */
const KEPT = path.join(projectRoot, 'node_modules', '.cache', 'flows-contract');

function keep(file: string, json: string) {
  try {
    mkdirSync(KEPT, { recursive: true });
    writeFileSync(`${file}.${process.pid}`, json);
    renameSync(`${file}.${process.pid}`, file);
  } catch {
    // A read-only install parses at every start.
  }
}

const readJson = (file: string) => {
  try {
    return JSON.parse(readFileSync(file, 'utf8'));
  } catch {
    return undefined; // not kept yet
  }
};

/** The OpenAPI document, read once: the routing and validation source and what /openapi.* serve. */
export function loadContract(file = path.join(projectRoot, 'openapi', 'openapi.yaml')): Contract {
  const yaml = readFileSync(file, 'utf8');
  const hash = createHash('sha256').update(inlineRefs.toString()).update(routingOf.toString()).update(yaml).digest('hex').slice(0, 32);
  const keptWhole = path.join(KEPT, `${hash}.json`);
  const keptRouting = path.join(KEPT, `${hash}.routing.json`);
  let whole: Pick<Contract, 'document' | 'inlined'> | undefined;
  // As JSON, whether kept or not: the same values either way (a YAML date is its string).
  const parsed = () => {
    if (whole) return whole;
    whole = readJson(keptWhole);
    if (whole) return whole;
    const document = parse(yaml) as Record<string, any>;
    const json = JSON.stringify({ document, inlined: inlineRefs(document) });
    keep(keptWhole, json);
    return (whole = JSON.parse(json) as Pick<Contract, 'document' | 'inlined'>);
  };
  let routing = readJson(keptRouting) as Record<string, any> | undefined;
  if (!routing) {
    const json = JSON.stringify(routingOf(parsed().inlined));
    keep(keptRouting, json);
    routing = JSON.parse(json) as Record<string, any>;
  }
  return {
    yaml,
    routing,
    get document() {
      return parsed().document;
    },
    get inlined() {
      return parsed().inlined;
    },
  };
}
