import { DEFAULT_RETRY_POLICY, RetryPolicy } from '../../domain/delivery';

/** Settings of webhook delivery, from the environment (docs/webhooks.md, "Settings"). */
export interface WebhookDeliverySettings {
  readonly retry: RetryPolicy;
  /** One attempt's bound, connection to the last byte of the answer (10 s, the Standard Webhooks norm). */
  readonly timeoutMs: number;
  /** Deliveries in flight at once per worker process. */
  readonly maxConcurrent: number;
}

const positive = (raw: string | undefined, fallback: number, name: string): number => {
  if (raw === undefined || raw.trim() === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1) throw new Error(`${name} must be a positive integer, got "${raw}"`);
  return n;
};

export function webhookDeliverySettings(env: Readonly<Record<string, string | undefined>>): WebhookDeliverySettings {
  return {
    retry: {
      baseMs: positive(env.WEBHOOK_RETRY_BASE_MS, DEFAULT_RETRY_POLICY.baseMs, 'WEBHOOK_RETRY_BASE_MS'),
      capMs: positive(env.WEBHOOK_RETRY_MAX_MS, DEFAULT_RETRY_POLICY.capMs, 'WEBHOOK_RETRY_MAX_MS'),
      giveUpAfterMs: positive(env.WEBHOOK_GIVE_UP_AFTER_MS, DEFAULT_RETRY_POLICY.giveUpAfterMs, 'WEBHOOK_GIVE_UP_AFTER_MS'),
    },
    timeoutMs: positive(env.WEBHOOK_TIMEOUT_MS, 10_000, 'WEBHOOK_TIMEOUT_MS'),
    maxConcurrent: positive(env.WEBHOOK_MAX_CONCURRENT, 16, 'WEBHOOK_MAX_CONCURRENT'),
  };
}
