import { assertNever, conflict, invalid, notFound } from '@lib/platform/kernel';
import { CanaryArm, CanaryEvent, CanaryState, evolveCanary } from './canary';

/** A rule's targets: one agent, or a weighted choice hashed on `partition_by` (a UserFn expression). */
export type AliasTargets =
  | { readonly type: 'single'; readonly agent_key: string }
  | { readonly type: 'weighted'; readonly partition_by: string; readonly options: readonly { readonly agent_key: string; readonly weight: number }[] };

export interface AliasRule {
  /** A UserFn expression over the session request; absent: a catch-all, which must be the last rule. */
  readonly match?: string;
  readonly targets: AliasTargets;
}

export interface AliasPolicy {
  readonly type: 'routed';
  readonly rules: readonly AliasRule[];
  /**
   * The session metadata fields an end user may set through `…/end_user_sessions` (top-level names): routing and
   * the agent see only these from an end user, besides the `end_user` the service writes. Absent: none.
   */
  readonly end_user_metadata?: readonly string[];
}

/** An agent alias (docs/aliases.md), stream `agent_alias-<key>`: a stable name routing new sessions by policy. */
export interface AliasSettings {
  readonly name: string;
  readonly description?: string | null;
  readonly policy: AliasPolicy;
  readonly enabled: boolean;
  readonly metadata?: Readonly<Record<string, unknown>> | null;
}

export type AliasEvent =
  | { type: 'AliasCreated'; data: { key: string; settings: AliasSettings; createdAt: string } }
  | { type: 'AliasUpdated'; data: { key: string; settings: AliasSettings; updatedAt: string } }
  | { type: 'AliasDeleted'; data: { key: string; deletedAt: string } }
  | CanaryEvent;

/** `canary`: the alias's last canary, running or ended (docs/aliases.md, "Canary"). */
export type AliasState = { readonly status: 'absent' } | { readonly status: 'active'; readonly settings: AliasSettings; readonly canary?: CanaryState };

export const aliasFold = {
  initialState: { status: 'absent' } as AliasState,
  evolve(state: AliasState, event: AliasEvent): AliasState {
    switch (event.type) {
      case 'AliasCreated':
        return { status: 'active', settings: event.data.settings };
      case 'AliasUpdated':
        return { ...(state.status === 'active' ? state : {}), status: 'active', settings: event.data.settings };
      case 'AliasDeleted':
        return { status: 'absent' };
      case 'AliasCanaryStarted':
      case 'AliasCanaryTurnScored':
      case 'AliasCanaryDecided':
      case 'AliasCanaryEnded':
        return state.status === 'active' ? { ...state, canary: evolveCanary(state.canary, event) } : state;
      default:
        return assertNever(event);
    }
  },
};

export const aliasNotFound = (key: string) => notFound('alias.not_found', `Alias "${key}" does not exist`, key);

/** The policy's shape: rules, the catch-all last, weights non-negative integers with one above zero. */
export function aliasPolicyProblem(policy: unknown): [string, string] | undefined {
  if (!policy || typeof policy !== 'object') return ['policy', 'must be {"type": "routed", "rules": [...]}'];
  const p = policy as { type?: unknown; rules?: unknown };
  if (p.type !== 'routed') return ['policy.type', 'must be routed'];
  if (!Array.isArray(p.rules) || !p.rules.length) return ['policy.rules', 'must hold at least one rule'];
  if (p.rules.length > 100) return ['policy.rules', 'at most 100 rules'];
  const endUserProblem = endUserMetadataDeclarationProblem((policy as { end_user_metadata?: unknown }).end_user_metadata);
  if (endUserProblem) return ['policy.end_user_metadata', endUserProblem];
  for (const [i, raw] of (p.rules as unknown[]).entries()) {
    const at = `policy.rules[${i}]`;
    if (!raw || typeof raw !== 'object') return [at, 'must be {"match"?, "targets"}'];
    const rule = raw as { match?: unknown; targets?: unknown };
    if (rule.match !== undefined && (typeof rule.match !== 'string' || !rule.match.trim())) return [`${at}.match`, 'must be a UserFn expression'];
    if (rule.match === undefined && i < p.rules.length - 1) return [`policy.rules[${i + 1}]`, `is unreachable: rule ${i} has no match (a catch-all) and must be the last`];
    const t = rule.targets as { type?: unknown; agent_key?: unknown; partition_by?: unknown; options?: unknown } | undefined;
    if (!t || typeof t !== 'object') return [`${at}.targets`, 'must be {"type": "single", "agent_key"} or {"type": "weighted", "partition_by", "options"}'];
    if (t.type === 'single') {
      if (typeof t.agent_key !== 'string' || !t.agent_key) return [`${at}.targets.agent_key`, 'names the agent this rule routes to'];
    } else if (t.type === 'weighted') {
      if (typeof t.partition_by !== 'string' || !t.partition_by.trim()) return [`${at}.targets.partition_by`, "is required: a UserFn expression to hash, such as get('$.session.metadata.user_id', '')"];
      if (!Array.isArray(t.options) || !t.options.length) return [`${at}.targets.options`, 'must hold at least one {agent_key, weight}'];
      for (const [j, o] of (t.options as { agent_key?: unknown; weight?: unknown }[]).entries()) {
        if (!o || typeof o.agent_key !== 'string' || !o.agent_key) return [`${at}.targets.options[${j}].agent_key`, 'names an agent'];
        if (!Number.isInteger(o.weight) || (o.weight as number) < 0) return [`${at}.targets.options[${j}].weight`, 'must be a non-negative integer'];
      }
      if (!(t.options as { weight: number }[]).some((o) => o.weight > 0)) return [`${at}.targets.options`, 'needs a weight above 0'];
    } else return [`${at}.targets.type`, 'must be single or weighted'];
  }
  return undefined;
}

const METADATA_FIELD = /^[A-Za-z0-9_-]{1,64}$/;

/** `end_user_metadata`: up to 50 distinct field names; `end_user` is the service's to write. */
function endUserMetadataDeclarationProblem(fields: unknown): string | undefined {
  if (fields === undefined) return undefined;
  if (!Array.isArray(fields) || fields.length > 50) return 'must be a list of at most 50 metadata field names';
  for (const f of fields) {
    if (typeof f !== 'string' || !METADATA_FIELD.test(f)) return 'each must be a field name of 1-64 letters, digits, underscores or hyphens';
    if (f === 'end_user') return 'end_user is set by the service from the credential, never by the end user';
  }
  return new Set(fields).size === fields.length ? undefined : 'names a field twice';
}

/** Every agent a policy can route to. */
export const policyAgents = (policy: AliasPolicy): string[] => [...new Set(policy.rules.flatMap((r) => (r.targets.type === 'single' ? [r.targets.agent_key] : r.targets.options.map((o) => o.agent_key))))];

export function decideCreateAlias(state: AliasState, key: string, settings: AliasSettings, now: Date): AliasEvent[] {
  if (state.status !== 'absent') throw conflict('alias.exists', `Alias "${key}" already exists`);
  return [{ type: 'AliasCreated', data: { key, settings, createdAt: now.toISOString() } }];
}

export function decideUpdateAlias(state: AliasState, key: string, change: (s: AliasSettings) => AliasSettings, now: Date): AliasEvent[] {
  if (state.status !== 'active') throw aliasNotFound(key);
  return [{ type: 'AliasUpdated', data: { key, settings: change(state.settings), updatedAt: now.toISOString() } }];
}

export function decideDeleteAlias(state: AliasState, key: string, now: Date): AliasEvent[] {
  if (state.status !== 'active') throw aliasNotFound(key);
  return [{ type: 'AliasDeleted', data: { key, deletedAt: now.toISOString() } }];
}

export const invalidAlias = (field: string, reason: string) => invalid('alias.invalid', `Invalid ${field}: ${reason}`, { [field]: reason });

/** Which agent serves a session created through an alias (stream `alias_session-<alias>.<session>`). */
export type AliasSessionEvent =
  /** `canary`: the canary running when the session was routed, and the arm it joined (absent: in none). */
  | { type: 'AliasSessionRouted'; data: { aliasKey: string; sessionKey: string; agentKey: string; agentId: string; rule: number; routedAt: string; canary?: { id: string; arm: CanaryArm } } }
  /** The session could not be created after all: the key is free again in the alias. */
  | { type: 'AliasSessionReleased'; data: { aliasKey: string; sessionKey: string; releasedAt: string } };
