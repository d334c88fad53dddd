import type { RecordedEvent } from '@lib/platform';
import { LlmUsageEvent, usageStream } from '../../domain/usage';
import type { UsageLedgerSpec } from './quota-engine';

/** The quota engine instance for registered models (an agent's quota will get its own spec). */
export const LLM_QUOTAS = Symbol('LlmQuotas');

export const llmUsageLedger: UsageLedgerSpec = {
  stream: (llmId, at) => usageStream(llmId, at),
  usageOf(event: RecordedEvent) {
    if (event.type !== 'LlmUsageRecorded') return undefined;
    const d = (event as unknown as LlmUsageEvent).data;
    return { usage: { input: d.input, output: d.output }, at: new Date(d.at) };
  },
};
