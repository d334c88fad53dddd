import { Inject } from '@nestjs/common';
import { IQueryHandler, QueryHandler } from '@nestjs/cqrs';
import Fuse from 'fuse.js';
import { READ_STORE, ReadStore } from '@lib/platform';
import { corpusNotFound } from '../../domain/corpus';
import { compileFilter } from '../filters';
import { CORPORA, CorpusRow, DOCUMENTS, DocumentRow } from '../../read-models';

export interface FieldQuery {
  readonly field: string;
  readonly query: string;
  readonly weight: number;
  readonly fuzzy: boolean;
  /** Minimum query length for prefix matching; null: none. */
  readonly prefix: number | null;
}

/** `POST /v2/corpora/{key}/metadata_query` (docs/corpora.md): documents (or parts) ranked by how their metadata fields match. */
export class MetadataQuery {
  constructor(
    readonly corpusKey: string,
    readonly level: 'document' | 'part',
    readonly queries: readonly FieldQuery[],
    readonly metadataFilter: string | undefined,
    readonly limit: number,
    readonly offset: number,
  ) {}
}

/** Documents read at most (after the filter): the query is a scan of their metadata. */
export const METADATA_QUERY_SCAN = 10_000;
/** Fuse.js distance at which a fuzzy match still counts (0: exact, 1: anything). */
const FUZZY_THRESHOLD = 0.4;

type Candidate = { readonly docId: string; readonly metadata: Record<string, unknown> };

/**
 * Each field query scores each candidate 0–1: an exact (case-insensitive) value 1, a value starting with the
 * query (when it is at least `prefix` long) 0.9, a value containing it 0.8, else the fuzzy similarity from
 * Fuse.js (typos) when `fuzzy`; the document's score is the weighted sum, and documents matching no query are
 * left out. Array values match by their best element.
 */
@QueryHandler(MetadataQuery)
export class MetadataQueryHandler implements IQueryHandler<MetadataQuery, Record<string, unknown>> {
  constructor(@Inject(READ_STORE) private readonly reads: ReadStore) {}

  async execute(q: MetadataQuery): Promise<Record<string, unknown>> {
    const corpus = await this.reads.get<CorpusRow>(CORPORA, q.corpusKey);
    if (!corpus) throw corpusNotFound(q.corpusKey);
    const filter = compileFilter(q.metadataFilter, corpus.filter_attributes, 'metadata_filter', ['doc']);
    const docs = await this.reads.find<DocumentRow>(DOCUMENTS, {
      where: [{ field: 'corpus_key', op: 'eq', value: q.corpusKey }],
      ...(filter ? { metadata: { filter, docField: 'metadata' } } : {}),
      sort: { field: 'document_id', direction: 'asc' },
      limit: METADATA_QUERY_SCAN,
    });
    const candidates: Candidate[] =
      q.level === 'document'
        ? docs.items.map((d) => ({ docId: d.document_id, metadata: d.metadata }))
        : docs.items.flatMap((d) => d.parts.map((p) => ({ docId: d.document_id, metadata: (p.metadata ?? {}) as Record<string, unknown> })));
    const scores = candidates.map(() => 0);
    const matched = candidates.map(() => false);
    for (const fq of q.queries) {
      const fuzzy = fq.fuzzy ? new Fuse(candidates.map((c, i) => ({ i, values: valuesOf(c.metadata[fq.field]) })), { keys: ['values'], includeScore: true, ignoreLocation: true, threshold: FUZZY_THRESHOLD }) : undefined;
      const fuzzyScore = new Map<number, number>();
      if (fuzzy && fq.query) for (const r of fuzzy.search(fq.query)) fuzzyScore.set(r.item.i, 1 - (r.score ?? 1));
      candidates.forEach((c, i) => {
        const s = fieldScore(valuesOf(c.metadata[fq.field]), fq, fuzzyScore.get(i));
        if (s > 0) {
          matched[i] = true;
          scores[i] += fq.weight * s;
        }
      });
    }
    const ranked = candidates.map((c, i) => ({ c, score: scores[i], hit: matched[i] || q.queries.length === 0 })).filter((r) => r.hit).sort((a, b) => b.score - a.score || a.c.docId.localeCompare(b.c.docId));
    return {
      documents: ranked.slice(q.offset, q.offset + q.limit).map((r) => ({ doc_id: r.c.docId, score: Math.round(r.score * 1e6) / 1e6, metadata: r.c.metadata })),
      total_count: ranked.length,
    };
  }
}

const valuesOf = (v: unknown): string[] => (Array.isArray(v) ? v : v === undefined || v === null ? [] : [v]).filter((x) => typeof x === 'string' || typeof x === 'number' || typeof x === 'boolean').map(String);

function fieldScore(values: readonly string[], fq: FieldQuery, fuzzy: number | undefined): number {
  const query = fq.query.toLowerCase().trim();
  if (!query) return 0;
  let best = 0;
  for (const raw of values) {
    const v = raw.toLowerCase();
    if (v === query) return 1;
    if (fq.prefix !== null && query.length >= fq.prefix && v.startsWith(query)) best = Math.max(best, 0.9);
    else if (v.includes(query)) best = Math.max(best, 0.8);
  }
  if (best === 0 && fuzzy !== undefined) best = Math.max(0, Math.min(0.7, fuzzy));
  return best;
}
