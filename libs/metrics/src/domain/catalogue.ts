/**
 * The metrics the log can give (docs/metrics.md): each is a field of a per-minute bucket row of one family, which
 * the `metrics` projection fills from one kind of event. Nothing here is measured outside the log, so a replay of an
 * old log gives every metric for its whole history.
 */

/** A row family: which events fill it, and so which label it may carry. */
export type MetricFamily = 'query' | 'agent_turn' | 'agent_tool' | 'llm' | 'document' | 'pipeline_run';

/** The reference's label names; a family carries at most one, so a bucket row is one (family, label value, minute). */
export type MetricLabel = 'corpus_keys' | 'agent_keys' | 'llm_names';

export const FAMILY_LABEL: Record<MetricFamily, MetricLabel | undefined> = {
  query: 'corpus_keys',
  agent_turn: 'agent_keys',
  agent_tool: 'agent_keys',
  llm: 'llm_names',
  document: 'corpus_keys',
  pipeline_run: undefined,
};

/** A distribution's bins: `[min, max)` in the metric's unit; the last one has no upper bound. */
export interface DistributionBin {
  readonly label: string;
  readonly min: number;
  readonly max?: number;
}

interface MetricBase {
  readonly name: string;
  readonly category: string;
  readonly displayName: string;
  readonly description: string;
  readonly unit?: string;
  readonly family: MetricFamily;
}

export type MetricDefinition = (MetricBase & { readonly type: 'counter'; readonly field: string }) | (MetricBase & { readonly type: 'distribution'; readonly field: string; readonly bins: readonly DistributionBin[] });

const boundsToBins = (bounds: readonly number[]): DistributionBin[] =>
  [0, ...bounds].map((min, i) => (i < bounds.length ? { label: `lt_${bounds[i]}`, min, max: bounds[i] } : { label: `ge_${min}`, min }));

/** Query latency bins, in ms: fixed, so that minutes add up exactly (no estimate, unlike percentiles over buckets). */
export const LATENCY_BINS: readonly DistributionBin[] = boundsToBins([50, 100, 250, 500, 1000, 2500, 5000, 10000]);

/** The bin a value falls in. */
export const binOf = (bins: readonly DistributionBin[], value: number): DistributionBin => bins.find((b) => b.max === undefined || value < b.max) ?? bins[bins.length - 1];

const counter = (name: string, category: string, family: MetricFamily, field: string, displayName: string, description: string, unit?: string): MetricDefinition => ({
  type: 'counter',
  name,
  category,
  family,
  field,
  displayName,
  description,
  ...(unit ? { unit } : {}),
});

export const METRICS: readonly MetricDefinition[] = [
  counter('query.count', 'query', 'query', 'count', 'Queries', 'Queries recorded in the query history (each counts once in the total and once for each corpus it searched).', 'queries'),
  {
    type: 'distribution',
    name: 'query.latency_ms',
    category: 'query',
    family: 'query',
    field: 'latency_ms',
    displayName: 'Query latency',
    description: 'Latency of the queries recorded in the query history, from request to answer, in fixed bins.',
    unit: 'ms',
    bins: LATENCY_BINS,
  },
  counter('agent.turn.count', 'agent', 'agent_turn', 'count', 'Agent turns', 'Agent turns ended, whatever their outcome.', 'turns'),
  counter('agent.turn.failed_count', 'agent', 'agent_turn', 'failed', 'Failed agent turns', 'Agent turns that ended failed or over a limit.', 'turns'),
  counter('agent.turn.input_tokens', 'agent', 'agent_turn', 'input_tokens', 'Agent input tokens', 'Model input tokens of ended agent turns.', 'tokens'),
  counter('agent.turn.output_tokens', 'agent', 'agent_turn', 'output_tokens', 'Agent output tokens', 'Model output tokens of ended agent turns.', 'tokens'),
  counter('agent.tool_call.count', 'agent', 'agent_tool', 'calls', 'Tool calls', 'Tool calls agents made.', 'calls'),
  counter('agent.tool_call.error_count', 'agent', 'agent_tool', 'errors', 'Tool errors', 'Tool calls that returned an error (a denied or expired approval included).', 'calls'),
  counter('llm.chat_completion.count', 'llm', 'llm', 'count', 'Chat completions', 'Calls to registered LLMs that got an answer (the chat completions API, agents\' model calls, generation): a call refused upstream records no usage.', 'completions'),
  counter('llm.chat_completion.input_tokens', 'llm', 'llm', 'input_tokens', 'Chat completion input tokens', 'Prompt tokens of those calls (estimated from characters when the upstream reported none).', 'tokens'),
  counter('llm.chat_completion.output_tokens', 'llm', 'llm', 'output_tokens', 'Chat completion output tokens', 'Completion tokens of those calls (estimated from characters when the upstream reported none).', 'tokens'),
  counter('corpus.document.indexed_count', 'corpus', 'document', 'indexed', 'Documents indexed', 'Documents indexed (a document indexed again counts again).', 'documents'),
  counter('pipeline.run.count', 'pipeline', 'pipeline_run', 'count', 'Pipeline runs', 'Pipeline runs ended, whatever their status.', 'runs'),
  counter('pipeline.run.failed_count', 'pipeline', 'pipeline_run', 'failed', 'Failed pipeline runs', 'Pipeline runs that ended failed.', 'runs'),
];

export const metricNamed = (name: string): MetricDefinition | undefined => METRICS.find((m) => m.name === name);

/** The reference's MetricDescriptor of a metric. */
export function describeMetric(m: MetricDefinition): Record<string, unknown> {
  const label = FAMILY_LABEL[m.family];
  const base = { name: m.name, type: m.type, category: m.category, description: m.description, display_name: m.displayName, ...(m.unit ? { unit: m.unit } : {}), labels: label ? [label] : [] };
  if (m.type === 'counter') return base;
  return { ...base, bins: m.bins.map((b) => ({ label: b.label, range_min: b.min, ...(b.max !== undefined ? { range_max: b.max } : {}) })) };
}
