import { assertNever, invalid } from '@lib/platform/kernel';
import type { AgentConfig } from './agent-config';
import type { Sealed } from './session-events';

/**
 * An agent's secrets and identity, each in a stream keyed by the agent's incarnation id (`agent_secrets-<agentId>`,
 * `agent_identity-<agentId>`): an agent deleted and created again under its key starts with neither.
 */
export type AgentSecretsEvent = {
  type: 'AgentSecretsSet';
  /** The whole set after the change, sealed (names in clear, values never); `change` says which request made it. */
  data: { agentId: string; agentKey: string; names: string[]; sealed?: Sealed; change: 'replace' | 'patch'; setAt: string };
};

export interface SecretsState {
  readonly names: readonly string[];
  readonly sealed?: Sealed;
}

export const secretsFold = {
  initialState: { names: [] } as SecretsState,
  evolve(_state: SecretsState, event: AgentSecretsEvent): SecretsState {
    return { names: event.data.names, sealed: event.data.sealed };
  },
};

export const MAX_SECRETS = 100;
export const MAX_SECRET_VALUE = 4096;
const SECRET_NAME = /^[A-Za-z0-9_-]{1,128}$/;

/** A set of secrets as it may be stored: names a `$ref` can name, values within the reference's limit. */
export function checkSecrets(secrets: Readonly<Record<string, string | null>>, field = 'secrets'): void {
  const problems: Record<string, string> = {};
  const names = Object.keys(secrets);
  if (names.length > MAX_SECRETS) problems[field] = `at most ${MAX_SECRETS} secrets`;
  for (const [name, value] of Object.entries(secrets)) {
    if (!SECRET_NAME.test(name)) problems[`${field}.${name}`] = 'a secret name is 1 to 128 letters, digits, underscores or hyphens (it is referred to as {"$ref": "agent.secrets.<name>"})';
    else if (value !== null && typeof value !== 'string') problems[`${field}.${name}`] = 'must be a string';
    else if (typeof value === 'string' && value.length > MAX_SECRET_VALUE) problems[`${field}.${name}`] = `longer than ${MAX_SECRET_VALUE} characters`;
  }
  const first = Object.entries(problems)[0];
  if (first) throw invalid('agent.invalid_secrets', `Invalid ${first[0]}: ${first[1]}`, problems);
}

export const masked = (names: readonly string[]): Record<string, string> => Object.fromEntries([...names].sort().map((n) => [n, '****']));

/** Roles in the API's shape (`api_roles`, `corpus_roles`, `agent_roles`). */
export interface IdentityRoles {
  readonly api_roles: readonly string[];
  readonly corpus_roles: readonly { readonly corpus_key: string; readonly role: string }[];
  readonly agent_roles: readonly { readonly agent_key: string; readonly role: string }[];
}

export type AgentIdentityEvent = { type: 'AgentIdentitySet'; data: { agentId: string; agentKey: string; mode: 'auto' | 'manual'; roles?: IdentityRoles; setAt: string } };

export type IdentityState = { readonly mode: 'auto' } | { readonly mode: 'manual'; readonly roles: IdentityRoles };

export const identityFold = {
  initialState: { mode: 'auto' } as IdentityState,
  evolve(_state: IdentityState, event: AgentIdentityEvent): IdentityState {
    switch (event.data.mode) {
      case 'auto':
        return { mode: 'auto' };
      case 'manual':
        return { mode: 'manual', roles: event.data.roles ?? { api_roles: [], corpus_roles: [], agent_roles: [] } };
      default:
        return assertNever(event.data.mode);
    }
  },
};

/**
 * The roles `auto` mode keeps in sync with the tools (the reference): read access (corpus `viewer`) to every
 * corpus a `corpora_search` tool searches or a `get_document_text` tool is fixed to, write access (`editor`) to a
 * corpus a `document_index` tool is fixed to, use (`agent_user`) of every agent a `sub_agent` tool calls, nothing
 * else (a document-index tool the model points at any corpus gets no write access in auto mode).
 */
export function autoRoles(config: AgentConfig): IdentityRoles {
  const corpora = new Set<string>();
  const agents = new Set<string>();
  const writable = new Set<string>();
  for (const tool of Object.values(config.tool_configurations)) {
    const target = (tool.sub_agent_configuration as { agent_key?: unknown } | undefined)?.agent_key;
    if (tool.type === 'sub_agent' && typeof target === 'string') agents.add(target);
    const fixedCorpus = (tool.argument_override as { corpus_key?: unknown } | undefined)?.corpus_key;
    if ((tool.type === 'get_document_text' || tool.type === 'get_document') && typeof fixedCorpus === 'string') corpora.add(fixedCorpus);
    if (tool.type === 'document_index' && typeof fixedCorpus === 'string') writable.add(fixedCorpus);
    if (tool.type !== 'corpora_search' && tool.type !== 'corpora_search_20260608') continue;
    const search = tool.query_configuration?.search as { corpora?: { corpus_key?: unknown }[] } | undefined;
    for (const c of search?.corpora ?? []) if (typeof c.corpus_key === 'string') corpora.add(c.corpus_key);
  }
  return {
    api_roles: [],
    corpus_roles: [...new Set([...corpora, ...writable])].sort().map((corpus_key) => ({ corpus_key, role: writable.has(corpus_key) ? 'editor' : 'viewer' })),
    agent_roles: [...agents].sort().map((agent_key) => ({ agent_key, role: 'agent_user' })),
  };
}
