import type { ReadOp } from './read-store.port';

type Patch = Extract<ReadOp, { op: 'patch' }>;

function parentOf(doc: Record<string, unknown>, path: string, create: boolean): [Record<string, unknown> | undefined, string] {
  const keys = path.split('.');
  let cur: Record<string, unknown> = doc;
  for (const k of keys.slice(0, -1)) {
    const next = cur[k];
    if (next === null || typeof next !== 'object' || Array.isArray(next)) {
      if (!create) return [undefined, ''];
      cur[k] = {};
    }
    cur = cur[k] as Record<string, unknown>;
  }
  return [cur, keys[keys.length - 1]];
}

/** Applies a patch operation's `set`, `unset` and `inc` (dot paths) to a copy of `doc`. */
export function applyPatch(doc: Record<string, unknown>, patch: Pick<Patch, 'set' | 'unset' | 'inc'>): Record<string, unknown> {
  const out = structuredClone(doc);
  for (const [path, value] of Object.entries(patch.set ?? {})) {
    const [parent, key] = parentOf(out, path, true);
    parent![key] = value;
  }
  for (const path of patch.unset ?? []) {
    const [parent, key] = parentOf(out, path, false);
    if (parent) delete parent[key];
  }
  for (const [path, by] of Object.entries(patch.inc ?? {})) {
    const [parent, key] = parentOf(out, path, true);
    parent![key] = (typeof parent![key] === 'number' ? (parent![key] as number) : 0) + by;
  }
  return out;
}
