import { Inject } from '@nestjs/common';
import { IQueryHandler, QueryHandler } from '@nestjs/cqrs';
import { READ_STORE, ReadStore, SEARCH_INDEX, SearchIndex } from '@lib/platform';
import { corpusNotFound } from '../../domain/corpus';
import { compileFilter, resolveAttribute } from '../filters';
import { CORPORA, CorpusRow } from '../../read-models';

/** Distinct values a filter attribute takes in a corpus, optionally narrowed by a filter and a fuzzy term. */
export class ListFilterValues {
  constructor(
    readonly corpusKey: string,
    /** Qualified name: `doc.<name>` or `part.<name>`. */
    readonly attribute: string,
    readonly options: { readonly fuzzyMatch?: string; readonly metadataFilter?: string; readonly limit: number },
  ) {}
}

/** Values scanned before the fuzzy term and the limit apply. */
const SCAN = 10_000;

/** The term without surrounding non-alphanumeric characters, lower-cased (`"  -Bio- "` → `bio`). */
export const fuzzyTerm = (term: string): string => term.replace(/^[^\p{L}\p{N}]+|[^\p{L}\p{N}]+$/gu, '').toLowerCase();

/** Text values must contain the term, ignoring case; numbers and booleans always pass. */
export const fuzzyKeeps = (value: unknown, term: string): boolean => typeof value !== 'string' || term === '' || value.toLowerCase().includes(term);

@QueryHandler(ListFilterValues)
export class ListFilterValuesHandler implements IQueryHandler<ListFilterValues, Record<string, unknown>> {
  constructor(
    @Inject(READ_STORE) private readonly reads: ReadStore,
    @Inject(SEARCH_INDEX) private readonly search: SearchIndex,
  ) {}

  async execute(q: ListFilterValues): Promise<Record<string, unknown>> {
    const corpus = await this.reads.get<CorpusRow>(CORPORA, q.corpusKey);
    if (!corpus) throw corpusNotFound(q.corpusKey);
    const { attribute: attr, field } = resolveAttribute(corpus, q.attribute, 'filter_attribute');
    const filter = compileFilter(q.options.metadataFilter, corpus.filter_attributes, 'metadata_filter');
    const values = await this.search.distinctValues(q.corpusKey, field, { filter, limit: SCAN });
    const term = fuzzyTerm(q.options.fuzzyMatch ?? '');
    const kept = values.filter((v) => fuzzyKeeps(v, term));
    return { name: q.attribute, type: attr.type, values: kept.slice(0, q.options.limit) };
  }
}
