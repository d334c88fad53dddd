/**
 * Quotas on calls to a language model, by subject (a model now; an agent later: the same engine counts any
 * subject). Windows are calendar-aligned in UTC: a second, a minute, a day, a month. Pure: time is an input.
 */
export const TOKEN_QUOTAS = [
  'input_tokens_per_minute',
  'output_tokens_per_minute',
  'input_tokens_per_day',
  'output_tokens_per_day',
  'input_tokens_per_month',
  'output_tokens_per_month',
] as const;
export type TokenQuotaName = (typeof TOKEN_QUOTAS)[number];
export type QuotaName = 'requests_per_second' | TokenQuotaName;
export const QUOTA_NAMES: readonly QuotaName[] = ['requests_per_second', ...TOKEN_QUOTAS];

/** `llm_quota`: every limit optional; replaced as a whole on update. */
export type Quota = Readonly<Partial<Record<QuotaName, number>>>;

export type QuotaWindow = 'second' | 'minute' | 'day' | 'month';
export const TOKEN_WINDOWS: readonly Exclude<QuotaWindow, 'second'>[] = ['minute', 'day', 'month'];

/** Input tokens include cached prompt tokens; output tokens are completion plus reasoning tokens. */
export interface TokenUsage {
  readonly input: number;
  readonly output: number;
}

export const NO_USAGE: TokenUsage = { input: 0, output: 0 };

/** The window containing `at`: a stable id (its UTC start, truncated) and when the next one starts. */
export function windowOf(window: QuotaWindow, at: Date): { id: string; resetsAt: Date } {
  const y = at.getUTCFullYear();
  const mo = at.getUTCMonth();
  const d = at.getUTCDate();
  switch (window) {
    case 'second': {
      const start = Math.floor(at.getTime() / 1000) * 1000;
      return { id: new Date(start).toISOString().slice(0, 19), resetsAt: new Date(start + 1000) };
    }
    case 'minute': {
      const start = Math.floor(at.getTime() / 60_000) * 60_000;
      return { id: new Date(start).toISOString().slice(0, 16), resetsAt: new Date(start + 60_000) };
    }
    case 'day':
      return { id: at.toISOString().slice(0, 10), resetsAt: new Date(Date.UTC(y, mo, d + 1)) };
    case 'month':
      return { id: at.toISOString().slice(0, 7), resetsAt: new Date(Date.UTC(y, mo + 1, 1)) };
  }
}

const windowOfQuota = (name: QuotaName): QuotaWindow =>
  name === 'requests_per_second' ? 'second' : name.endsWith('minute') ? 'minute' : name.endsWith('day') ? 'day' : 'month';

export interface QuotaExceeded {
  readonly quota: QuotaName;
  readonly limit: number;
  readonly used: number;
  readonly resetsAt: Date;
}

/**
 * The first quota a new call would break, or undefined. A call is admitted while each token count is below
 * its limit (its own tokens are unknown until it ends, so the last admitted call may pass the limit by its
 * size); requests per second count the call itself.
 */
export function exceededQuota(
  quota: Quota,
  usage: (window: Exclude<QuotaWindow, 'second'>) => TokenUsage,
  requestsThisSecond: number,
  now: Date,
): QuotaExceeded | undefined {
  for (const name of QUOTA_NAMES) {
    const limit = quota[name];
    if (limit === undefined) continue;
    const window = windowOfQuota(name);
    const used = window === 'second' ? requestsThisSecond : usage(window)[name.startsWith('input') ? 'input' : 'output'];
    if (used >= limit) return { quota: name, limit, used, resetsAt: windowOf(window, now).resetsAt };
  }
  return undefined;
}

/** Problems with a quota object, by field (empty when valid). */
export function quotaProblems(quota: Record<string, unknown>, prefix = 'llm_quota'): Record<string, string> {
  const problems: Record<string, string> = {};
  for (const [k, v] of Object.entries(quota)) {
    if (!(QUOTA_NAMES as readonly string[]).includes(k)) problems[`${prefix}.${k}`] = `unknown quota; known: ${QUOTA_NAMES.join(', ')}`;
    else if (!Number.isSafeInteger(v) || (v as number) < 1) problems[`${prefix}.${k}`] = 'must be a positive integer';
  }
  return problems;
}
