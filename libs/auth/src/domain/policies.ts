import { Action, AgentAction, allows, allowsSome, Capability } from './roles';

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
  | { readonly kind: 'any'; readonly action: Action | readonly Action[] }
  | { readonly kind: 'corpus'; readonly action: Action; readonly corpora: CorpusSource }
  /**
   * One of `actions` on the agent named by the path's `agent_key`. Without any agent action on it the caller is
   * told it does not exist (404, as for a missing agent); with some but not these, 403.
   */
  | { readonly kind: 'agent'; readonly actions: readonly AgentAction[] };

/** Where a route names its corpora: a path parameter, a query parameter, or the multi-corpus query body. */
export type CorpusSource = 'path:corpus_key' | 'query:corpus_key' | 'body:search.corpora[].corpus_key';

export const POLICIES = {
  public: { kind: 'public' },
  /** Connector webhooks: no API credential; the platform's own signature or token is checked by the handler (401). */
  'connector.webhook': { kind: 'public' },
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
  /**
   * Chats (deprecated in the reference) and the query history (docs/chats.md). A turn is a query: read on the
   * corpora its body names. The rest is gated on the action somewhere, and the handler decides on the chat's
   * (or the recorded query's) corpora: not readable → 404, readable without the action → 403.
   */
  'chat.turn': { kind: 'corpus', action: 'corpus.read', corpora: 'body:search.corpora[].corpus_key' },
  'chat.read': { kind: 'any', action: 'corpus.read' },
  'chat.update': { kind: 'any', action: 'corpus.write' },
  'chat.delete': { kind: 'any', action: 'corpus.delete' },
  'query_history.read': { kind: 'any', action: 'corpus.read' },
  'users.manage': { kind: 'account', action: 'users.manage' },
  'users.read': { kind: 'account', action: 'users.read' },
  'clients.manage': { kind: 'account', action: 'clients.manage' },
  'audit.read': { kind: 'account', action: 'audit.read' },
  /**
   * Webhooks send what happens across the account (every agent's sessions, pipelines, schedules) to a URL outside:
   * the reach of the audit log, so its holders (owner, administrator) manage them (docs/webhooks.md).
   */
  'webhook.manage': { kind: 'account', action: 'audit.read' },
  'llm.use': { kind: 'account', action: 'llm.use' },
  'llm.manage': { kind: 'account', action: 'llm.manage' },
  'agent.create': { kind: 'account', action: 'agent.create' },
  'agent.list': { kind: 'any', action: ['agent.view', 'agent.use'] },
  /** Instructions are shared by agents: readable with a view role on some agent, managed with a developer role. */
  'instruction.read': { kind: 'any', action: 'agent.view' },
  'instruction.manage': { kind: 'any', action: 'agent.develop' },
  /** Reusable tool configurations are shared by agents, like instructions. */
  'tool_config.read': { kind: 'any', action: 'agent.view' },
  'tool_config.manage': { kind: 'any', action: 'agent.develop' },
  /** Glossaries: read with a view role on some agent; managed by agent administrators (the reference). */
  'glossary.read': { kind: 'any', action: 'agent.view' },
  'glossary.manage': { kind: 'any', action: 'agent.administer' },
  /** Aliases route to agents: any agent role of the kind is enough here; alias-routed sessions then check the agent. */
  'alias.read': { kind: 'any', action: 'agent.view' },
  'alias.develop': { kind: 'any', action: 'agent.develop' },
  'alias.administer': { kind: 'any', action: 'agent.administer' },
  'alias.use': { kind: 'any', action: 'agent.use' },
  'alias.session_read': { kind: 'any', action: ['agent.use', 'agent.view'] },
  'alias.session_develop': { kind: 'any', action: 'agent.develop' },
  /** End-user sessions: the caller's own sessions only, whoever it is (docs/end-user-sessions.md). */
  'alias.end_user': { kind: 'any', action: 'agent.end_user' },
  /** Pipelines are account-wide (the reference's pipeline_viewer / pipeline_administrator API roles). */
  'pipeline.read': { kind: 'account', action: 'pipeline.view' },
  'pipeline.manage': { kind: 'account', action: 'pipeline.administer' },
  /**
   * Agent traces (docs/traces.md): every turn of every session of an agent, as its session list shows them, so a view
   * role on some agent (the reference's roles); the handler keeps to the agents the caller views (others: 404).
   */
  'trace.read': { kind: 'any', action: 'agent.view' },
  /** The account's metrics (docs/metrics.md): totals across every corpus and agent, so an account-wide action. */
  'metrics.read': { kind: 'account', action: 'metrics.read' },
  'agent.view': { kind: 'agent', actions: ['agent.view'] },
  'agent.use': { kind: 'agent', actions: ['agent.use'] },
  /** Read one session: its users and its viewers (the reference's get-session roles). */
  'agent.session_read': { kind: 'agent', actions: ['agent.use', 'agent.view'] },
  'agent.develop': { kind: 'agent', actions: ['agent.develop'] },
  'agent.administer': { kind: 'agent', actions: ['agent.administer'] },
} as const satisfies Record<string, PolicyRule>;

export type PolicyName = keyof typeof POLICIES;

/**
 * The only policies an end user's token is judged by (docs/end-user-sessions.md): the end-user routes of its own
 * sessions. On any other route the guard decides as for a credential without any right (403, or 404 for a corpus
 * or an agent), whatever the capabilities its app client holds: an allow-list rather than each route refusing, so
 * a route added later is closed to end users until it is listed here.
 */
export const END_USER_POLICIES: ReadonlySet<PolicyName> = new Set<PolicyName>(['alias.end_user']);

/** The capabilities a policy is decided on: none for an end user's token outside its own routes. */
export const capabilitiesFor = (name: PolicyName, caps: readonly Capability[], endUser: boolean): readonly Capability[] => (endUser && !END_USER_POLICIES.has(name) ? [] : caps);

export type Decision =
  | { readonly outcome: 'allow' }
  | { readonly outcome: 'forbidden' }
  | { readonly outcome: 'hidden'; readonly corpusKey: string }
  | { readonly outcome: 'hidden_agent'; readonly agentKey: string };

const AGENT_ACTIONS: readonly AgentAction[] = ['agent.use', 'agent.view', 'agent.develop', 'agent.administer'];

/** Decides a policy for a caller's capabilities and the corpora (or the agent) the request names. */
export function decide(rule: PolicyRule, caps: readonly Capability[], corpusKeys: readonly string[], isDataKey = false, agentKey?: string): Decision {
  switch (rule.kind) {
    case 'public':
      return { outcome: 'allow' };
    case 'member':
      return caps.length && !(isDataKey && rule.dataKeys === false) ? { outcome: 'allow' } : { outcome: 'forbidden' };
    case 'account':
      return allows(caps, rule.action) ? { outcome: 'allow' } : { outcome: 'forbidden' };
    case 'any':
      return (typeof rule.action === 'string' ? [rule.action] : rule.action).some((a) => allowsSome(caps, a)) ? { outcome: 'allow' } : { outcome: 'forbidden' };
    case 'agent': {
      const key = agentKey ?? '';
      if (!AGENT_ACTIONS.some((a) => allows(caps, a, key))) return { outcome: 'hidden_agent', agentKey: key };
      return rule.actions.some((a) => allows(caps, a, key)) ? { outcome: 'allow' } : { outcome: 'forbidden' };
    }
    case 'corpus': {
      // No corpus named (a malformed body, answered 400 after the guard): only a caller who may do the action on
      // some corpus gets that far; `every` over nothing would have let anyone through.
      if (!corpusKeys.length) return allowsSome(caps, rule.action) ? { outcome: 'allow' } : { outcome: 'forbidden' };
      for (const key of corpusKeys) if (!allows(caps, 'corpus.read', key)) return { outcome: 'hidden', corpusKey: key };
      return corpusKeys.every((key) => allows(caps, rule.action, key)) ? { outcome: 'allow' } : { outcome: 'forbidden' };
    }
  }
}
