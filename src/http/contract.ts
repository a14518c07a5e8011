import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { load as parse } from 'js-yaml';
import { projectRoot } from '../lib/paths';

export interface Contract {
  yaml: string;
  document: Record<string, any>;
  /** The document as validators take it: every local `$ref` inlined as a fresh copy, discriminator mappings dropped. */
  inlined: Record<string, any>;
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

/**
 * Where parsed contracts are kept between starts, named by the SHA-256 of their YAML and of the inlining's
 * own code: parsing and inlining take about 80 ms of a start, reading them back as JSON under 10.
 */
const KEPT = path.join(projectRoot, 'node_modules', '.cache', 'flows-contract');

/** The OpenAPI document, read once: the routing and validation source and what /openapi.* serve. */
export function loadContract(file = path.join(projectRoot, 'openapi', 'openapi.yaml')): Contract {
  const yaml = readFileSync(file, 'utf8');
  const kept = path.join(KEPT, `${createHash('sha256').update(inlineRefs.toString()).update(yaml).digest('hex').slice(0, 32)}.json`);
  try {
    return { yaml, ...(JSON.parse(readFileSync(kept, 'utf8')) as Pick<Contract, 'document' | 'inlined'>) };
  } catch {
    // not kept yet
  }
  const document = parse(yaml) as Record<string, any>;
  // As JSON, whether kept or not: the same values either way (a YAML date is its string).
  const json = JSON.stringify({ document, inlined: inlineRefs(document) });
  try {
    mkdirSync(KEPT, { recursive: true });
    writeFileSync(`${kept}.${process.pid}`, json);
    renameSync(`${kept}.${process.pid}`, kept);
  } catch {
    // A read-only install parses at every start.
  }
  return { yaml, ...(JSON.parse(json) as Pick<Contract, 'document' | 'inlined'>) };
}
