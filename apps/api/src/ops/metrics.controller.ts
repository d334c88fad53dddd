import { Controller, Get, Param, Query } from '@nestjs/common';
import { MetricQueries } from '@lib/metrics';
import { invalid } from '@lib/platform';
import { Policy } from '../http/policy';
import { OpenApi } from '../openapi/openapi.decorator';

type Params = Record<string, unknown>;

const strings = (raw: unknown): string[] => (raw === undefined ? [] : (Array.isArray(raw) ? raw : [raw]).map((v) => (typeof v === 'string' ? v : '')));

/**
 * The reference's deepObject `labels[agent_keys]=a&labels[agent_keys]=b`: Express 5's simple parser leaves the keys
 * as they came (an extended parser would give an object, read the same way).
 */
function labelsOf(q: Params): Record<string, string[]> {
  const labels: Record<string, string[]> = {};
  for (const [key, raw] of Object.entries(q)) {
    const m = /^labels\[([^\]]*)\]$/.exec(key);
    if (m) labels[m[1]] = [...(labels[m[1]] ?? []), ...strings(raw)];
    // A nested or unclosed name (`labels[a][b]`, `labels[a`) names no label: refused, never ignored.
    else if (key.startsWith('labels[')) throw invalid('request.invalid', `${key} is not a label filter: give labels[<name>]=<value>`, { [key]: 'must be labels[<name>]=<value>' });
  }
  if (q.labels !== undefined) {
    if (typeof q.labels !== 'object' || q.labels === null || Array.isArray(q.labels)) throw invalid('request.invalid', 'labels must be given as labels[<name>]=<value>', { labels: 'must be given as labels[<name>]=<value>' });
    for (const [name, raw] of Object.entries(q.labels as Record<string, unknown>)) {
      if (raw !== null && typeof raw === 'object' && !Array.isArray(raw)) throw invalid('request.invalid', `labels[${name}] must be a value, not nested names`, { [`labels[${name}]`]: 'must be labels[<name>]=<value>' });
      labels[name] = [...(labels[name] ?? []), ...strings(raw)];
    }
  }
  return labels;
}

const one = (name: string, raw: unknown): string | undefined => {
  if (raw === undefined || typeof raw === 'string') return raw;
  throw invalid('request.invalid', `${name} must be given once`, { [name]: 'must be given once' });
};

/** The reference's CustomerMetrics: the catalogue and one metric's series (docs/metrics.md). */
@Controller('v2/metrics')
export class MetricsController {
  constructor(private readonly metrics: MetricQueries) {}

  @OpenApi({ query: ['category'] })
  @Get()
  @Policy('metrics.read')
  list(@Query() q: Params) {
    return this.metrics.catalogue(strings(q.category));
  }

  @OpenApi({ query: ['labels', 'start', 'end', 'max_bins'] })
  @Get(':metric_name')
  @Policy('metrics.read')
  async get(@Param('metric_name') name: string, @Query() q: Params) {
    return this.metrics.series(name, { labels: labelsOf(q), start: one('start', q.start), end: one('end', q.end), maxBins: one('max_bins', q.max_bins) });
  }
}
