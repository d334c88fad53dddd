import { compare, type Operation } from 'fast-json-patch';
import type { AgentConfig } from '../../domain/agent-config';

/** An RFC 6902 operation as the revisions API shows it. */
export type PatchOperation = Operation;

/** Fields a PATCH replaces whole (docs/agents.md, Configuration): a change inside one is a change of the field. */
const WHOLE_FIELDS = new Set(['model', 'llm_quota']);

/**
 * The RFC 6902 patch that turns one configuration into the other (`fast-json-patch`'s `compare`: objects by key,
 * arrays by index). Revision 0 has no previous revision: it is diffed against an empty configuration.
 */
export function configDiff(from: AgentConfig | undefined, to: AgentConfig): PatchOperation[] {
  return compare((from ?? {}) as object, to as object);
}

/** Whether two configurations are the same, whatever the order of their keys. */
export const sameConfig = (a: AgentConfig, b: AgentConfig): boolean => configDiff(a, b).length === 0;

/**
 * The configuration's field paths a patch touches, dotted (`steps.main.instructions`, `model`): a path ends at the
 * first array index (the array is the field that changed) or at a field replaced whole; sorted, each once.
 */
export function changedPaths(operations: readonly PatchOperation[]): string[] {
  const paths = new Set<string>();
  for (const op of operations) {
    const segments = op.path.split('/').slice(1).map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
    const kept: string[] = [];
    for (const segment of segments) {
      if (/^(0|[1-9]\d*|-)$/.test(segment) && kept.length) break;
      kept.push(segment);
      if (kept.length === 1 && WHOLE_FIELDS.has(segment)) break;
    }
    paths.add(kept.join('.'));
  }
  return [...paths].sort();
}
