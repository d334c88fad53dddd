import { Action, allows, allowsSome, Capability } from './roles';

/**
 * The policy table: every route names one of these (the API's `@Policy` decorator), and the guard decides from
 * it alone. A rule is one of:
 * - `public`: no credential (health probes, the OAuth token endpoint);
 * - `member`: any valid credential that holds at least one capability (handlers narrow further, e.g. own keys);
 *   with `dataKeys: false`, QueryService and IndexService keys are refused (they manage nothing);
 * - `account`: an account-wide action;
 * - `any`: the action on at least one resource (a list the handler then filters to what the caller may see);
 * - `corpus`: an action on the corpus (or corpora) named by the request. Without read access to a corpus the
 *   caller is told it does not exist (404, as for a missing corpus); with read access but not the action, 403.
 */
export type PolicyRule =
  | { readonly kind: 'public' }
  | { readonly kind: 'member'; readonly dataKeys?: false }
  | { readonly kind: 'account'; readonly action: Action }
  | { readonly kind: 'any'; readonly action: Action }
  | { readonly kind: 'corpus'; readonly action: Action; readonly corpora: CorpusSource };

/** Where a route names its corpora: a path parameter, a query parameter, or the multi-corpus query body. */
export type CorpusSource = 'path:corpus_key' | 'query:corpus_key' | 'body:search.corpora[].corpus_key';

export const POLICIES = {
  public: { kind: 'public' },
  member: { kind: 'member' },
  'keys.own': { kind: 'member', dataKeys: false },
  'corpus.create': { kind: 'account', action: 'corpus.create' },
  'corpus.list': { kind: 'any', action: 'corpus.read' },
  'corpus.read': { kind: 'corpus', action: 'corpus.read', corpora: 'path:corpus_key' },
  'corpus.configure': { kind: 'corpus', action: 'corpus.configure', corpora: 'path:corpus_key' },
  'corpus.delete': { kind: 'corpus', action: 'corpus.delete', corpora: 'path:corpus_key' },
  'corpus.write': { kind: 'corpus', action: 'corpus.write', corpora: 'path:corpus_key' },
  'jobs.read': { kind: 'any', action: 'corpus.read' },
  'query.corpora': { kind: 'corpus', action: 'corpus.read', corpora: 'body:search.corpora[].corpus_key' },
  'users.manage': { kind: 'account', action: 'users.manage' },
  'users.read': { kind: 'account', action: 'users.read' },
  'clients.manage': { kind: 'account', action: 'clients.manage' },
  'audit.read': { kind: 'account', action: 'audit.read' },
  'llm.use': { kind: 'account', action: 'llm.use' },
  'llm.manage': { kind: 'account', action: 'llm.manage' },
} as const satisfies Record<string, PolicyRule>;

export type PolicyName = keyof typeof POLICIES;

export type Decision = { readonly outcome: 'allow' } | { readonly outcome: 'forbidden' } | { readonly outcome: 'hidden'; readonly corpusKey: string };

/** Decides a policy for a caller's capabilities and the corpora the request names. */
export function decide(rule: PolicyRule, caps: readonly Capability[], corpusKeys: readonly string[], isDataKey = false): Decision {
  switch (rule.kind) {
    case 'public':
      return { outcome: 'allow' };
    case 'member':
      return caps.length && !(isDataKey && rule.dataKeys === false) ? { outcome: 'allow' } : { outcome: 'forbidden' };
    case 'account':
      return allows(caps, rule.action) ? { outcome: 'allow' } : { outcome: 'forbidden' };
    case 'any':
      return allowsSome(caps, rule.action) ? { outcome: 'allow' } : { outcome: 'forbidden' };
    case 'corpus': {
      for (const key of corpusKeys) if (!allows(caps, 'corpus.read', key)) return { outcome: 'hidden', corpusKey: key };
      return corpusKeys.every((key) => allows(caps, rule.action, key)) ? { outcome: 'allow' } : { outcome: 'forbidden' };
    }
  }
}
