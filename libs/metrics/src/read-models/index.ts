import { collection } from '@lib/platform/projections';
import type { MetricFamily } from '../domain/catalogue';
import { MINUTE_MS } from '../domain/bins';

export * from '../domain/catalogue';
export * from '../domain/bins';

/**
 * One row per (family, label value, minute), counters by field (`count`, `latency_ms.<bin>`…). `label` is `''` for
 * the family's total, else `<kind>:<value>` (`corpus:<key>`, `agent:<agent id>`, `llm:<name>`): agents are counted by
 * id, as their sessions' streams name them, and a query maps a key to the agent that has it now.
 */
export type MetricBucketRow = {
  readonly id: string;
  readonly family: MetricFamily;
  readonly label: string;
  readonly minute: number;
  readonly v: Readonly<Record<string, number>>;
};

export const METRIC_BUCKETS = collection<MetricBucketRow>('metric_buckets');

export const TOTAL_LABEL = '';
export const corpusLabel = (corpusKey: string): string => `corpus:${corpusKey}`;
export const agentLabel = (agentId: string): string => `agent:${agentId}`;
export const llmLabel = (llmName: string): string => `llm:${llmName}`;

/** The minute an instant falls in (epoch ms); an unreadable instant gives undefined. */
export function minuteOf(iso: string): number | undefined {
  const ms = Date.parse(iso);
  return Number.isNaN(ms) ? undefined : Math.floor(ms / MINUTE_MS) * MINUTE_MS;
}

/** The family and minute end the id; `label` may hold any character, so it sits between them. */
export const bucketId = (family: MetricFamily, label: string, minute: number): string => `${family}|${minute}|${label}`;
