/**
 * `requires_approval` on a tool configuration (docs/agents.md, "A human approves tool calls"): `true`, or a rule
 * `{when, approvers, timeout}`. When it applies, a model's call of the tool waits for a person's decision instead
 * of running. Pure: the condition's syntax is checked by the agents' condition language where the configuration
 * is written (it is theirs: `get('$.args.amount') > 100`).
 */
export type ApprovalApprovers = 'agent_admins' | 'session_user';

export interface ApprovalRule {
  /** A UserFn condition over `{args, agent, session}`: the call waits for approval only when it is true. */
  readonly when?: string;
  readonly approvers?: ApprovalApprovers;
  /** An ISO 8601 duration (days, hours, minutes, seconds; weeks); default P1D. */
  readonly timeout?: string;
}

/** The rule as a turn applies it: defaults filled. */
export interface ApprovalPolicy {
  readonly when?: string;
  readonly approvers: ApprovalApprovers;
  readonly timeout: string;
  readonly timeoutMs: number;
}

export const DEFAULT_APPROVAL_TIMEOUT = 'P1D';
export const MIN_APPROVAL_TIMEOUT_MS = 1_000;
export const MAX_APPROVAL_TIMEOUT_MS = 90 * 24 * 3600 * 1000;
const APPROVERS: readonly string[] = ['agent_admins', 'session_user'];

const DURATION = /^P(?:(\d+)W)?(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+(?:\.\d+)?)S)?)?$/;

/**
 * Milliseconds of an ISO 8601 duration made of weeks, days, hours, minutes and seconds; undefined for anything
 * else (years and months have no fixed length, so a timeout is not given in them).
 */
export function durationMs(source: string): number | undefined {
  const m = DURATION.exec(source);
  if (!m || source === 'P' || source.endsWith('T')) return undefined;
  const [w, d, h, min, s] = m.slice(1).map((v) => (v === undefined ? 0 : Number(v)));
  return Math.round(((((w * 7 + d) * 24 + h) * 60 + min) * 60 + s) * 1000);
}

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/** The first wrong field of a `requires_approval` value (under `requires_approval`) and why. */
export function approvalProblem(value: unknown): [string, string] | undefined {
  if (value === undefined || typeof value === 'boolean') return undefined;
  if (!isObject(value)) return ['requires_approval', 'must be true, false or {"when", "approvers", "timeout"}'];
  const unknown = Object.keys(value).filter((k) => !['when', 'approvers', 'timeout'].includes(k));
  if (unknown.length) return [`requires_approval.${unknown[0]}`, 'is not a field of requires_approval (when, approvers, timeout)'];
  if (value.when !== undefined && (typeof value.when !== 'string' || !value.when.trim() || value.when.length > 10_000)) return ['requires_approval.when', 'must be a UserFn condition of 1 to 10,000 characters'];
  if (value.approvers !== undefined && !APPROVERS.includes(value.approvers as string)) return ['requires_approval.approvers', 'must be agent_admins or session_user'];
  if (value.timeout !== undefined) {
    const ms = typeof value.timeout === 'string' ? durationMs(value.timeout) : undefined;
    if (ms === undefined) return ['requires_approval.timeout', 'must be an ISO 8601 duration in weeks, days, hours, minutes or seconds, such as PT30M, PT12H or P1D'];
    if (ms < MIN_APPROVAL_TIMEOUT_MS || ms > MAX_APPROVAL_TIMEOUT_MS) return ['requires_approval.timeout', 'must be from 1 second (PT1S) to 90 days (P90D)'];
  }
  return undefined;
}

/** The approval a tool's calls need, defaults filled; undefined when they run without one. */
export function approvalPolicy(tool: { readonly requires_approval?: unknown }): ApprovalPolicy | undefined {
  const value = tool.requires_approval;
  if (value === true) return { approvers: 'agent_admins', timeout: DEFAULT_APPROVAL_TIMEOUT, timeoutMs: durationMs(DEFAULT_APPROVAL_TIMEOUT)! };
  if (!isObject(value)) return undefined;
  const rule = value as ApprovalRule;
  const timeout = rule.timeout ?? DEFAULT_APPROVAL_TIMEOUT;
  return { ...(rule.when !== undefined ? { when: rule.when } : {}), approvers: rule.approvers ?? 'agent_admins', timeout, timeoutMs: durationMs(timeout) ?? durationMs(DEFAULT_APPROVAL_TIMEOUT)! };
}
