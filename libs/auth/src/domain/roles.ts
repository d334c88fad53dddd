/**
 * Roles at four tiers (account API roles, platform roles, corpus roles, agent roles) and the capabilities they
 * grant. Every permission check and the "a key never carries more than its creator" rule work on capability
 * sets, so the role tables below are the one place that says what a role may do (docs/auth.md).
 */

/** Account-wide roles: the account tier (`owner` … `viewer`) and the platform tier (per product area). */
export const API_ROLES = [
  'owner',
  'administrator',
  'billing_administrator',
  'viewer',
  'corpus_administrator',
  'corpus_developer',
  'corpus_viewer',
  'agent_administrator',
  'agent_developer',
  'agent_viewer',
  'agent_user',
  'pipeline_administrator',
  'pipeline_viewer',
  'agent_end_user',
] as const;
export type ApiRole = (typeof API_ROLES)[number];

export const CORPUS_ROLES = ['owner', 'administrator', 'editor', 'viewer'] as const;
export type CorpusRoleName = (typeof CORPUS_ROLES)[number];

export const AGENT_ROLES = ['agent_administrator', 'agent_developer', 'agent_viewer', 'agent_user'] as const;
export type AgentRoleName = (typeof AGENT_ROLES)[number];

export interface CorpusRole {
  readonly corpusKey: string;
  readonly role: CorpusRoleName;
  /**
   * The corpus the role was granted on (`crp_<n>`, bound when granted): a corpus deleted and created again
   * under the same key is another corpus, and the role does not carry over (corpus-grants.ts). Absent on
   * grants stored before binding existed, and on grants being checked rather than stored.
   */
  readonly corpusId?: string;
}
export interface AgentRole {
  readonly agentKey: string;
  readonly role: AgentRoleName;
}

/** What a user, key or app client was given. Effective permission is the union of the three lists. */
export interface Grants {
  readonly apiRoles: readonly ApiRole[];
  readonly corpusRoles: readonly CorpusRole[];
  readonly agentRoles: readonly AgentRole[];
}

export const NO_GRANTS: Grants = { apiRoles: [], corpusRoles: [], agentRoles: [] };

/** Account-level actions. */
export type AccountAction =
  | 'account.owner'
  | 'billing.manage'
  | 'users.manage'
  | 'users.read'
  | 'keys.manage'
  | 'clients.manage'
  | 'audit.read'
  | 'corpus.create'
  | 'agent.create'
  | 'pipeline.view'
  | 'pipeline.administer'
  | 'agent.end_user'
  /** List registered LLMs, chat through them, score factual consistency (reference: corpus_viewer … owner). */
  | 'llm.use'
  /** Register, read in full, change, delete and discover LLMs (reference: administrator, owner). */
  | 'llm.manage'
  /**
   * Read the account's metrics (`/v2/metrics`, reference: viewer, administrator, owner). Their totals and labels span
   * every corpus, agent, model and pipeline, so only the roles that see all of them hold it (docs/metrics.md).
   */
  | 'metrics.read';
/** Actions on one corpus or one agent; a grant names the resource or `*` (every one). */
export type CorpusAction = 'corpus.read' | 'corpus.write' | 'corpus.configure' | 'corpus.delete';
export type AgentAction = 'agent.use' | 'agent.view' | 'agent.develop' | 'agent.administer';
export type Action = AccountAction | CorpusAction | AgentAction;

/** One capability: an action, on a resource key or `*`; account actions always carry `*`. */
export interface Capability {
  readonly action: Action;
  readonly scope: string;
}

const ALL_CORPUS: CorpusAction[] = ['corpus.read', 'corpus.write', 'corpus.configure', 'corpus.delete'];
const ALL_AGENT: AgentAction[] = ['agent.use', 'agent.view', 'agent.develop', 'agent.administer'];
const EVERY: Action[] = [
  'account.owner',
  'billing.manage',
  'users.manage',
  'users.read',
  'keys.manage',
  'clients.manage',
  'audit.read',
  'corpus.create',
  'agent.create',
  'pipeline.view',
  'pipeline.administer',
  'agent.end_user',
  'llm.use',
  'llm.manage',
  'metrics.read',
  ...ALL_CORPUS,
  ...ALL_AGENT,
];

const API_ROLE_ACTIONS: Record<ApiRole, readonly Action[]> = {
  owner: EVERY,
  administrator: EVERY.filter((a) => a !== 'account.owner' && a !== 'billing.manage'),
  billing_administrator: ['billing.manage'],
  viewer: ['users.read', 'corpus.read', 'agent.view', 'pipeline.view', 'llm.use', 'metrics.read'],
  corpus_administrator: ['users.read', 'keys.manage', 'corpus.create', 'llm.use', ...ALL_CORPUS],
  corpus_developer: ['users.read', 'corpus.read', 'corpus.write', 'corpus.configure', 'llm.use'],
  corpus_viewer: ['users.read', 'corpus.read', 'llm.use'],
  agent_administrator: ['agent.create', 'agent.end_user', ...ALL_AGENT],
  agent_developer: ['agent.create', 'agent.use', 'agent.view', 'agent.develop'],
  agent_viewer: ['agent.view'],
  agent_user: ['agent.use'],
  pipeline_administrator: ['pipeline.view', 'pipeline.administer'],
  pipeline_viewer: ['pipeline.view'],
  agent_end_user: ['agent.end_user'],
};

const CORPUS_ROLE_ACTIONS: Record<CorpusRoleName, readonly CorpusAction[]> = {
  owner: ALL_CORPUS,
  administrator: ['corpus.read', 'corpus.write', 'corpus.configure'],
  editor: ['corpus.read', 'corpus.write'],
  viewer: ['corpus.read'],
};

const AGENT_ROLE_ACTIONS: Record<AgentRoleName, readonly AgentAction[]> = {
  agent_administrator: ALL_AGENT,
  agent_developer: ['agent.use', 'agent.view', 'agent.develop'],
  agent_viewer: ['agent.view'],
  agent_user: ['agent.use'],
};

/** Keys that are not personal serve data, never administration (QueryService: read; IndexService: read and write). */
export type KeyType = 'personal' | 'serving' | 'serving_and_indexing';
// Chatting through a model is serving, not administration: a data key keeps `llm.use` when its roles give it.
const SERVING_ACTIONS: ReadonlySet<Action> = new Set<Action>(['corpus.read', 'agent.view', 'agent.use', 'agent.end_user', 'llm.use']);
const INDEXING_ACTIONS: ReadonlySet<Action> = new Set<Action>([...SERVING_ACTIONS, 'corpus.write']);

/** The capabilities a set of grants gives. */
export function capabilitiesOf(grants: Grants): Capability[] {
  const caps: Capability[] = [];
  for (const role of grants.apiRoles) for (const action of API_ROLE_ACTIONS[role]) caps.push({ action, scope: '*' });
  for (const r of grants.corpusRoles) for (const action of CORPUS_ROLE_ACTIONS[r.role]) caps.push({ action, scope: r.corpusKey });
  for (const r of grants.agentRoles) for (const action of AGENT_ROLE_ACTIONS[r.role]) caps.push({ action, scope: r.agentKey });
  return caps;
}

/** A non-personal key keeps only the data actions its type allows. */
export function maskForKeyType(caps: readonly Capability[], type: KeyType): Capability[] {
  if (type === 'personal') return [...caps];
  const allowed = type === 'serving' ? SERVING_ACTIONS : INDEXING_ACTIONS;
  return caps.filter((c) => allowed.has(c.action));
}

/** Whether `caps` allow `action` on `scope` (`*` asks for the action on every resource). */
export function allows(caps: readonly Capability[], action: Action, scope = '*'): boolean {
  return caps.some((c) => c.action === action && (c.scope === '*' || c.scope === scope));
}

/** Whether `caps` allow `action` on at least one resource (for lists that are then filtered). */
export function allowsSome(caps: readonly Capability[], action: Action): boolean {
  return caps.some((c) => c.action === action);
}

/** The resources on which `caps` allow `action`: `'*'` for all, else the named keys. */
export function scopesOf(caps: readonly Capability[], action: Action): '*' | string[] {
  const scopes = caps.filter((c) => c.action === action).map((c) => c.scope);
  return scopes.includes('*') ? '*' : [...new Set(scopes)];
}

/** The capabilities in `caps` that `bound` also covers: a key never does more than its creator can now. */
export function intersect(caps: readonly Capability[], bound: readonly Capability[]): Capability[] {
  const out: Capability[] = [];
  for (const c of caps) {
    if (c.scope !== '*') {
      if (allows(bound, c.action, c.scope)) out.push(c);
    } else if (allows(bound, c.action, '*')) out.push(c);
    else for (const b of bound) if (b.action === c.action) out.push(b);
  }
  return out;
}

/** The capabilities of `wanted` that `holder` does not cover (empty: no escalation). */
export function notCovered(wanted: readonly Capability[], holder: readonly Capability[]): Capability[] {
  return wanted.filter((c) => !allows(holder, c.action, c.scope));
}

/** Grants as the read models and the wire format spell them. */
export type WireGrants = {
  api_roles: string[];
  /** `corpus_id`: in read models only (the binding); the API shows `corpus_key` and `role`, as the reference does. */
  corpus_roles: { corpus_key: string; role: string; corpus_id?: string }[];
  agent_roles: { agent_key: string; role: string }[];
};

export const toWireGrants = (g: Grants): WireGrants => ({
  api_roles: [...g.apiRoles],
  corpus_roles: g.corpusRoles.map((r) => ({ corpus_key: r.corpusKey, role: r.role, ...(r.corpusId ? { corpus_id: r.corpusId } : {}) })),
  agent_roles: g.agentRoles.map((r) => ({ agent_key: r.agentKey, role: r.role })),
});

export const fromWireGrants = (w: WireGrants): Grants => ({
  apiRoles: w.api_roles as ApiRole[],
  corpusRoles: w.corpus_roles.map((r) => ({ corpusKey: r.corpus_key, role: r.role as CorpusRoleName, ...(r.corpus_id ? { corpusId: r.corpus_id } : {}) })),
  agentRoles: w.agent_roles.map((r) => ({ agentKey: r.agent_key, role: r.role as AgentRoleName })),
});


/** Grants as the API shows them (the reference's `CorpusRole`: `corpus_key` and `role`, no binding). */
export const toViewGrants = (w: WireGrants): WireGrants => ({
  api_roles: w.api_roles,
  corpus_roles: w.corpus_roles.map((r) => ({ corpus_key: r.corpus_key, role: r.role })),
  agent_roles: w.agent_roles,
});
