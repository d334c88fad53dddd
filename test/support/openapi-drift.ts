import { readFileSync } from 'node:fs';
import { load } from 'js-yaml';

/** The parts of an OpenAPI document the drift check compares. */
interface Doc {
  paths: Record<string, Record<string, { operationId?: string; parameters?: Param[]; responses?: Record<string, unknown> }>>;
  components?: { parameters?: Record<string, Param> };
}
type Param = { name?: string; in?: string; required?: boolean; $ref?: string };

export interface DriftOperation {
  readonly key: string;
  readonly operationId?: string;
  readonly pathParams: string[];
  readonly query: { name: string; required: boolean }[];
  readonly statuses: number[];
}

/** A deviation the service makes on purpose, documented in docs/conformance.md. */
export interface Allowed {
  /** operationId, or `*` for every operation. */
  readonly operation: string;
  readonly statuses?: readonly number[];
  /** Reference-required query parameters the service does not take. */
  readonly query?: readonly string[];
  readonly reason: string;
}

const METHODS = ['get', 'post', 'put', 'patch', 'delete'];

export const loadYaml = (path: string): Doc => load(readFileSync(path, 'utf8')) as Doc;

/** Operations by `METHOD /path` with their path and query parameters and listed statuses. */
export function operationsOf(doc: Doc): Map<string, DriftOperation> {
  const out = new Map<string, DriftOperation>();
  for (const [path, ops] of Object.entries(doc.paths)) {
    for (const method of METHODS) {
      const op = ops[method];
      if (!op) continue;
      const params = (op.parameters ?? []).map((p) => (p.$ref ? (doc.components?.parameters?.[p.$ref.split('/').pop() as string] ?? {}) : p));
      const key = `${method.toUpperCase()} ${path}`;
      out.set(key, {
        key,
        operationId: op.operationId,
        pathParams: params.filter((p) => p.in === 'path').map((p) => p.name as string).sort(),
        query: params.filter((p) => p.in === 'query').map((p) => ({ name: p.name as string, required: p.required === true })),
        statuses: Object.keys(op.responses ?? {}).filter((s) => /^\d+$/.test(s)).map(Number),
      });
    }
  }
  return out;
}

/**
 * Every difference between our document and the reference on the operations both serve (same method and path
 * template), one line each, naming the operation and what differs: operationId, path parameters, a required query
 * parameter of the reference we do not take, a status we answer that the reference does not list (unless allowed).
 */
export function drift(ours: Doc, reference: Doc, allowed: readonly Allowed[]): string[] {
  const mine = operationsOf(ours);
  const out: string[] = [];
  for (const [key, ref] of operationsOf(reference)) {
    const op = mine.get(key);
    if (!op) continue;
    const name = ref.operationId ?? key;
    const allow = allowed.filter((a) => a.operation === '*' || a.operation === name);
    if (op.operationId !== ref.operationId) out.push(`${name} (${key}): operationId is ${op.operationId}`);
    const pathDiff = symmetricDifference(op.pathParams, ref.pathParams);
    if (pathDiff.length) out.push(`${name} (${key}): path parameters ${op.pathParams.join(', ')} vs the reference's ${ref.pathParams.join(', ')}`);
    for (const q of ref.query.filter((q) => q.required)) {
      if (!op.query.some((o) => o.name === q.name) && !allow.some((a) => a.query?.includes(q.name))) out.push(`${name} (${key}): does not take the required query parameter ${q.name}`);
    }
    for (const s of op.statuses) {
      if (!ref.statuses.includes(s) && !allow.some((a) => a.statuses?.includes(s))) out.push(`${name} (${key}): answers ${s}, which the reference does not list (${ref.statuses.join(', ')})`);
    }
  }
  return out;
}

const symmetricDifference = (a: string[], b: string[]) => [...a.filter((x) => !b.includes(x)), ...b.filter((x) => !a.includes(x))];
