import { Inject, Injectable } from '@nestjs/common';
import { AGENTS, AgentRow } from '@lib/agents/read-models';
import { Clock, CLOCK, invalid, notFound, READ_STORE, ReadStore } from '@lib/platform';
import { binIndex, BinPlan, DEFAULT_MAX_BINS, MAX_BINS, MAX_LOOKBACK_MS, planBins } from '../domain/bins';
import { describeMetric, FAMILY_LABEL, MetricDefinition, MetricLabel, metricNamed, METRICS } from '../domain/catalogue';
import { agentLabel, corpusLabel, llmLabel, METRIC_BUCKETS, MetricBucketRow, TOTAL_LABEL } from '../read-models';

export interface MetricQuery {
  readonly labels: Readonly<Record<string, readonly string[]>>;
  readonly start?: string;
  readonly end?: string;
  readonly maxBins?: string;
}

/** Label values one request may name: with the 30-day window, the rows one request reads stay under 10 × 43,200. */
export const MAX_LABEL_VALUES = 10;
const PAGE = 1000;

const yieldToLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

/** The catalogue and the series of the reference's CustomerMetrics (docs/metrics.md), from the `metrics` projection. */
@Injectable()
export class MetricQueries {
  constructor(
    @Inject(READ_STORE) private readonly reads: ReadStore,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  catalogue(categories: readonly string[]): { metrics: Record<string, unknown>[] } {
    return { metrics: METRICS.filter((m) => !categories.length || categories.includes(m.category)).map(describeMetric) };
  }

  async series(name: string, q: MetricQuery): Promise<Record<string, unknown>> {
    const metric = metricNamed(name);
    if (!metric) throw notFound('metric.not_found', `Metric "${name}" is not registered: GET /v2/metrics lists the metrics`, name);
    const window = this.window(metric, q);
    const plan = planBins(window.startMs, window.endMs, window.maxBins);
    const bins = metric.type === 'counter' ? new Array<number>(plan.count).fill(0) : Array.from({ length: plan.count }, () => new Map<string, number>());
    for (const label of await this.labelRows(window.label, window.values)) {
      for await (const row of this.rows(metric, label, plan)) {
        const i = binIndex(plan, row.minute);
        if (metric.type === 'counter') (bins as number[])[i] += row.v[metric.field] ?? 0;
        else {
          const counts = (row.v as unknown as Record<string, Record<string, number> | undefined>)[metric.field] ?? {};
          const into = (bins as Map<string, number>[])[i];
          for (const [bin, n] of Object.entries(counts)) into.set(bin, (into.get(bin) ?? 0) + n);
        }
      }
    }
    const binStart = (i: number) => new Date(plan.firstMs + i * plan.binMs).toISOString();
    const points =
      metric.type === 'counter'
        ? (bins as number[]).map((value, i) => ({ bin_start: binStart(i), value }))
        : (bins as Map<string, number>[]).map((counts, i) => ({ bin_start: binStart(i), bins: metric.bins.filter((b) => counts.get(b.label)).map((b) => ({ label: b.label, value: counts.get(b.label)! })) }));
    return { type: metric.type, metric_name: metric.name, labels: window.label ? { [window.label]: window.values } : {}, bin_size_seconds: plan.binMs / 1000, points };
  }

  private window(metric: MetricDefinition, q: MetricQuery) {
    const errors: Record<string, string> = {};
    const allowed = FAMILY_LABEL[metric.family];
    let label: MetricLabel | undefined;
    let values: readonly string[] = [];
    for (const [name, given] of Object.entries(q.labels)) {
      if (name !== allowed) errors[`labels[${name}]`] = allowed ? `is not a label of ${metric.name}: it has ${allowed}` : `is not a label of ${metric.name}: it has none`;
      else if (!given.length || given.some((v) => !v)) errors[`labels[${name}]`] = 'must name at least one non-empty value';
      else if (new Set(given).size > MAX_LABEL_VALUES) errors[`labels[${name}]`] = `may name at most ${MAX_LABEL_VALUES} values`;
      else [label, values] = [allowed, [...new Set(given)]];
    }
    const now = this.clock.now().getTime();
    const startMs = instant('start', q.start, errors);
    const endMs = instant('end', q.end, errors);
    if (startMs !== undefined && startMs < now - MAX_LOOKBACK_MS) errors.start = 'must be no more than 30 days before now';
    if (startMs !== undefined && endMs !== undefined && endMs <= startMs) errors.end = 'must be after start';
    let maxBins = DEFAULT_MAX_BINS;
    if (q.maxBins !== undefined) {
      maxBins = Number(q.maxBins);
      if (!/^\d+$/.test(q.maxBins) || maxBins < 1 || maxBins > MAX_BINS) errors.max_bins = `must be an integer from 1 to ${MAX_BINS}`;
    }
    const fields = Object.keys(errors);
    if (fields.length) throw invalid('request.invalid', `Invalid ${fields.join(', ')}: ${fields.map((f) => `${f} ${errors[f]}`).join('; ')}`, errors);
    return { label, values, startMs: startMs!, endMs: endMs!, maxBins };
  }

  /** The bucket labels to read: the total, or each named value (an agent by the id its key names now). */
  private async labelRows(label: MetricLabel | undefined, values: readonly string[]): Promise<string[]> {
    switch (label) {
      case undefined:
        return [TOTAL_LABEL];
      case 'corpus_keys':
        return values.map(corpusLabel);
      case 'llm_names':
        return values.map(llmLabel);
      case 'agent_keys': {
        const agents = await Promise.all(values.map((key) => this.reads.get<AgentRow>(AGENTS, key)));
        return agents.flatMap((a) => (a ? [agentLabel(a.agent_id)] : []));
      }
      default: {
        const _exhaustive: never = label;
        return _exhaustive;
      }
    }
  }

  /** A label's minutes in the plan, by pages, yielding between them: at most one row per minute of the window. */
  private async *rows(metric: MetricDefinition, label: string, plan: BinPlan): AsyncGenerator<MetricBucketRow> {
    let pageKey: string | undefined;
    do {
      const page = await this.reads.find<MetricBucketRow>(METRIC_BUCKETS, {
        where: [
          { field: 'family', op: 'eq', value: metric.family },
          { field: 'label', op: 'eq', value: label },
          { field: 'minute', op: 'gte', value: plan.fromMs },
          { field: 'minute', op: 'lt', value: plan.toMs },
        ],
        sort: { field: 'minute', direction: 'asc' },
        limit: PAGE,
        pageKey,
      });
      yield* page.items;
      pageKey = page.nextPageKey;
      if (pageKey) await yieldToLoop();
    } while (pageKey);
  }
}

function instant(name: string, raw: string | undefined, errors: Record<string, string>): number | undefined {
  if (raw === undefined || raw === '') {
    errors[name] = 'is required (an ISO 8601 date-time)';
    return undefined;
  }
  const at = Date.parse(raw);
  if (!/^\d{4}-\d{2}-\d{2}T/.test(raw) || Number.isNaN(at)) {
    errors[name] = 'must be an ISO 8601 date-time';
    return undefined;
  }
  return at;
}
