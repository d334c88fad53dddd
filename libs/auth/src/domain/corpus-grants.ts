import type { CorpusRole, Grants } from './roles';

/** A corpus as it exists now: its id for this key, and when it was created. */
export interface LiveCorpus {
  readonly corpusId: string;
  readonly createdAt: string;
}

/**
 * Grants name a corpus by key on the wire but bind to the corpus itself: when granted, each corpus role takes
 * the id of the corpus that key names then. Returns the bound grants and the keys that name no corpus (the
 * caller refuses those: a grant on nothing would otherwise bind to whatever is created under the key later).
 */
export function bindCorpusRoles(grants: Grants, live: ReadonlyMap<string, LiveCorpus>): { grants: Grants; missing: string[] } {
  const missing: string[] = [];
  const corpusRoles = grants.corpusRoles.map((r): CorpusRole => {
    const corpus = live.get(r.corpusKey);
    if (!corpus) missing.push(r.corpusKey);
    return { corpusKey: r.corpusKey, role: r.role, ...(corpus ? { corpusId: corpus.corpusId } : {}) };
  });
  return { grants: { ...grants, corpusRoles }, missing: [...new Set(missing)] };
}

/**
 * The corpus roles still in force: a role holds while the corpus it was granted on is the one its key names
 * now. A corpus deleted (and maybe created again under the key, with a new id) takes its roles with it.
 * A role stored before binding existed (no id) holds when the corpus under its key was created no later than
 * the grant (`grantedAt`): it was then the corpus the role was given on.
 */
export function liveCorpusRoles(grants: Grants, live: ReadonlyMap<string, LiveCorpus>, grantedAt: string): Grants {
  const corpusRoles = grants.corpusRoles.filter((r) => {
    const corpus = live.get(r.corpusKey);
    if (!corpus) return false;
    return r.corpusId !== undefined ? r.corpusId === corpus.corpusId : corpus.createdAt <= grantedAt;
  });
  return corpusRoles.length === grants.corpusRoles.length ? grants : { ...grants, corpusRoles };
}

/** The distinct corpus keys some grants name. */
export const corpusKeysOf = (...all: Grants[]): string[] => [...new Set(all.flatMap((g) => g.corpusRoles.map((r) => r.corpusKey)))];
