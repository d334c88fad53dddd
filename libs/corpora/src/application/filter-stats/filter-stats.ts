import { Inject } from '@nestjs/common';
import { IQueryHandler, QueryHandler } from '@nestjs/cqrs';
import { READ_STORE, ReadStore, SEARCH_INDEX, SearchIndex } from '@lib/platform';
import { corpusNotFound, FilterAttribute, FilterAttributeType } from '../../domain/corpus';
import { compileFilter, qualifiedName, resolveAttribute } from '../filters';
import { CORPORA, CorpusRow } from '../../read-models';

/** Value distributions and numeric statistics of a corpus's filter attributes (the reference's filter_attribute_stats). */
export class GetFilterAttributeStats {
  constructor(
    readonly corpusKey: string,
    readonly options: {
      /** Comma-separated qualified names; all filter attributes when absent. */
      readonly fields?: string;
      readonly metadataFilter?: string;
      readonly maxValues: number;
    },
  ) {}
}

export interface NumericStats {
  readonly min: number;
  readonly max: number;
  readonly avg: number;
  readonly sum: number;
}

export interface AttributeStats {
  readonly values: { value: unknown; count: number }[];
  readonly stats?: NumericStats;
}

const ELEMENT_CHECK: Record<string, (v: unknown) => boolean> = {
  integer: (v) => Number.isInteger(v),
  real_number: (v) => typeof v === 'number' && Number.isFinite(v),
  text: (v) => typeof v === 'string',
  boolean: (v) => typeof v === 'boolean',
};

/**
 * Counts each value (each element of a list) of the attribute's declared type, most frequent first, ties by
 * value; numeric types also get min, max, average and sum over every counted value. Values of another type
 * (which indexing refuses for declared attributes, but older documents may hold) are left out.
 */
export function attributeStats(stored: readonly unknown[], type: FilterAttributeType, maxValues: number): AttributeStats {
  const list = type.startsWith('list[');
  const element = list ? type.slice(5, -1) : type;
  const fits = ELEMENT_CHECK[element];
  const counts = new Map<string, { value: unknown; count: number }>();
  const numbers: number[] = [];
  for (const raw of stored) {
    for (const value of list && Array.isArray(raw) ? raw : [raw]) {
      if (!fits(value)) continue;
      const key = JSON.stringify(value);
      const entry = counts.get(key) ?? { value, count: 0 };
      entry.count += 1;
      counts.set(key, entry);
      if (typeof value === 'number') numbers.push(value);
    }
  }
  const values = [...counts.values()].sort((a, b) => b.count - a.count || compare(a.value, b.value)).slice(0, maxValues);
  if (numbers.length === 0 || (element !== 'integer' && element !== 'real_number')) return { values };
  let [min, max, sum] = [Infinity, -Infinity, 0];
  for (const n of numbers) [min, max, sum] = [Math.min(min, n), Math.max(max, n), sum + n];
  return { values, stats: { min, max, avg: sum / numbers.length, sum } };
}

const compare = (a: unknown, b: unknown): number => (typeof a === 'number' && typeof b === 'number' ? a - b : String(a).localeCompare(String(b)));

@QueryHandler(GetFilterAttributeStats)
export class GetFilterAttributeStatsHandler implements IQueryHandler<GetFilterAttributeStats, Record<string, unknown>> {
  constructor(
    @Inject(READ_STORE) private readonly reads: ReadStore,
    @Inject(SEARCH_INDEX) private readonly search: SearchIndex,
  ) {}

  async execute(q: GetFilterAttributeStats): Promise<Record<string, unknown>> {
    const corpus = await this.reads.get<CorpusRow>(CORPORA, q.corpusKey);
    if (!corpus) throw corpusNotFound(q.corpusKey);
    const names = q.options.fields?.split(',').map((f) => f.trim()).filter(Boolean);
    const attributes: FilterAttribute[] = names?.length ? names.map((n) => resolveAttribute(corpus, n, 'fields').attribute) : [...corpus.filter_attributes];
    const filter = compileFilter(q.options.metadataFilter, corpus.filter_attributes, 'metadata_filter');
    const out = [];
    for (const attribute of attributes) {
      const level = attribute.level === 'document' ? 'doc' : 'part';
      const stored = await this.search.fieldValues(q.corpusKey, { level, name: attribute.name }, { filter });
      out.push({
        name: qualifiedName(attribute),
        type: attribute.type,
        ...(attribute.description ? { description: attribute.description } : {}),
        ...attributeStats(stored, attribute.type, q.options.maxValues),
      });
    }
    return { filter_attribute_stats: out };
  }
}
