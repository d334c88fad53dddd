import type { SessionEvent } from '@lib/agents/events';
import type { DocumentEvent } from '@lib/corpora/events';
import type { LlmUsageEvent } from '@lib/llms/events';
import type { PipelineRunEvent } from '@lib/pipelines/events';
import type { QueryHistoryEvent } from '@lib/retrieval/events';
import { agentLabel, binOf, bucketId, corpusLabel, LATENCY_BINS, llmLabel, METRIC_BUCKETS, MetricFamily, minuteOf, TOTAL_LABEL } from '@lib/metrics/read-models';
import { increment, ReadModelProjection, ReadOp, RecordedEvent } from '@lib/platform/projections';

type Counted = SessionEvent | DocumentEvent | LlmUsageEvent | PipelineRunEvent | QueryHistoryEvent;

const SESSION_PREFIX = 'session-';
const agentIdOf = (streamId: string): string => streamId.slice(SESSION_PREFIX.length).split('.')[0];

/**
 * Adds `inc` to the minute's row of the family's total and of each label value. Labels are deduplicated: one event
 * writes a row once, which is what lets the position guard make a replay add nothing.
 */
function count(family: MetricFamily, at: string, labels: readonly string[], inc: Record<string, number>): ReadOp[] {
  const minute = minuteOf(at);
  if (minute === undefined) return [];
  return [TOTAL_LABEL, ...new Set(labels)].map((label) => increment(METRIC_BUCKETS, bucketId(family, label, minute), { family, label, minute }, Object.fromEntries(Object.entries(inc).map(([k, n]) => [`v.${k}`, n]))));
}

/**
 * Per-minute metric buckets (docs/metrics.md) from the events that already record the work: saved queries, ended
 * agent turns, tool calls, chat completions' usage, indexed documents, ended pipeline runs. Reads only what the log
 * holds, so a new deployment replays the whole history into it; adds no event.
 */
export const metricsProjection: ReadModelProjection = {
  name: 'metrics',
  version: 1,
  target: 'read',
  eventTypes: ['QueryHistoryRecorded', 'SessionTurnEnded', 'SessionToolCalled', 'SessionToolReturned', 'LlmUsageRecorded', 'DocumentIndexed', 'PipelineRunEnded'],
  collections: [{ name: METRIC_BUCKETS, indexes: [{ fields: ['family', 'label', 'minute'] }] }],
  apply(recorded: RecordedEvent): ReadOp[] {
    const event = recorded as unknown as Counted;
    const agent = () => (recorded.streamId.startsWith(SESSION_PREFIX) ? [agentLabel(agentIdOf(recorded.streamId))] : []);
    switch (event.type) {
      case 'QueryHistoryRecorded': {
        const d = event.data;
        return count('query', d.startedAt, d.corpusKeys.map(corpusLabel), { count: 1, [`latency_ms.${binOf(LATENCY_BINS, d.latencyMillis).label}`]: 1 });
      }
      case 'SessionTurnEnded': {
        const d = event.data;
        const failed = d.outcome === 'failed' || d.outcome === 'limit' ? 1 : 0;
        return count('agent_turn', d.createdAt, agent(), { count: 1, failed, input_tokens: d.usage.input_tokens, output_tokens: d.usage.output_tokens });
      }
      case 'SessionToolCalled':
        return count('agent_tool', event.data.createdAt, agent(), { calls: 1 });
      case 'SessionToolReturned':
        return event.data.error ? count('agent_tool', event.data.createdAt, agent(), { errors: 1 }) : [];
      case 'LlmUsageRecorded': {
        const d = event.data;
        return count('llm', d.at, [llmLabel(d.llmName)], { count: 1, input_tokens: d.input, output_tokens: d.output });
      }
      case 'DocumentIndexed':
        return count('document', event.data.indexedAt, [corpusLabel(event.data.corpusKey)], { indexed: 1 });
      case 'PipelineRunEnded':
        return count('pipeline_run', event.data.endedAt, [], { count: 1, failed: event.data.status === 'failed' ? 1 : 0 });
      default:
        return [];
    }
  },
};
