import { streamId } from '@lib/platform/kernel';
import type { TokenUsage } from './quota';

/**
 * One completed (or aborted) call's token usage. Quotas are counted from these events, so usage survives a
 * restart; they are also the audit trail of who used which model how much.
 */
export type LlmUsageEvent = {
  type: 'LlmUsageRecorded';
  data: {
    readonly llmId: string;
    readonly llmName: string;
    readonly input: number;
    readonly output: number;
    /** True when the upstream reported no usage and the counts are estimated from characters (÷4). */
    readonly estimated: boolean;
    readonly outcome: 'completed' | 'aborted' | 'failed';
    readonly at: string;
  };
};

/** One stream per model and UTC month: loading the counts after a restart reads the current month only. */
export const usageStream = (llmId: string, at: Date): string => streamId('llmusage', llmId, at.toISOString().slice(0, 7));

/** Input counts prompt tokens (which include cached ones), output completion tokens (which include reasoning). */
export function usageFromReport(usage: { prompt_tokens?: number; completion_tokens?: number } | null | undefined): TokenUsage | undefined {
  if (!usage || typeof usage.prompt_tokens !== 'number') return undefined;
  return { input: usage.prompt_tokens, output: usage.completion_tokens ?? 0 };
}

/** A rough count (4 characters a token) for upstreams that report none; marked `estimated` in the event. */
export const estimateTokens = (text: string): number => Math.ceil(text.length / 4);
