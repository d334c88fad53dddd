import type { FilterExpr, RankedPart, SearchHit, SearchIndex, SearchRequest } from '@lib/platform';
import { blend, lexicalScore, partKey } from './hybrid';
import type { SearchResult } from './search-result';

/** The corpus a candidate came from, as the result names it. */
export interface CandidateCorpus {
  readonly key: string;
  /** Its position in the request's corpora. */
  readonly index: number;
  readonly encoder?: string;
}

/**
 * A candidate with its final score, and either its hit (an index that returns content with the ranking) or its
 * ranked ref (SearchIndex.rank), whose content is read only if the candidate is kept (docs/search.md, "Content
 * read for the page only").
 */
export interface Candidate {
  readonly score: number;
  readonly corpus: CandidateCorpus;
  readonly hit?: SearchHit;
  readonly ranked?: RankedPart;
}

type SideRequest = SearchRequest & { readonly mode: 'lexical' | 'vector' };

/**
 * One corpus's candidates: lexical only at `weight` 1 (or without a query vector), else the top `side` of both
 * sides blended (hybrid.ts). The vector side is asked first, so an index that searches its graph on another thread
 * does so while the lexical side ranks.
 */
export async function corpusCandidates(
  search: SearchIndex,
  corpus: CandidateCorpus,
  request: { text: string; filter?: FilterExpr; weight: number; depth: number; side: number; withVectors: boolean },
  queryVector: (() => Promise<number[]>) | undefined,
): Promise<Candidate[]> {
  const { text, filter, weight, depth, side, withVectors } = request;
  const byRef = search.rank !== undefined && search.hitsOf !== undefined;
  const vector = weight < 1 && queryVector ? await queryVector() : undefined;
  if (byRef) {
    const rank = (r: SideRequest) => search.rank!(corpus.key, r);
    if (!vector) return (await rank({ mode: 'lexical', text, limit: depth, filter })).map((ranked) => ({ score: lexicalScore(ranked), corpus, ranked }));
    const nearest = rank({ mode: 'vector', vector, limit: side, filter });
    const lexical = weight > 0 ? await rank({ mode: 'lexical', text, limit: side, filter }) : [];
    return blend(lexical, await nearest, weight, side, (r) => r.ref).map(({ hit: ranked, score }) => ({ score, corpus, ranked }));
  }
  const find = (r: SideRequest) => search.search(corpus.key, { ...r, withVectors });
  if (!vector) return (await find({ mode: 'lexical', text, limit: depth, filter })).map((hit) => ({ score: lexicalScore(hit), corpus, hit }));
  const nearest = find({ mode: 'vector', vector, limit: side, filter });
  const lexical = weight > 0 ? await find({ mode: 'lexical', text, limit: side, filter }) : [];
  return blend(lexical, await nearest, weight, side, partKey).map(({ hit, score }) => ({ score, corpus, hit }));
}

/**
 * The results of the first candidates, best first, until `want` results or none are left: a ref's row is read
 * then (one statement per corpus and round), and a part deleted since it was ranked is skipped for the next.
 */
export async function resultsOf(search: SearchIndex, candidates: readonly Candidate[], want: number, withVectors: boolean): Promise<SearchResult[]> {
  const results: SearchResult[] = [];
  let next = 0;
  while (results.length < want && next < candidates.length) {
    const round = candidates.slice(next, next + want - results.length);
    next += round.length;
    const read = new Map<string, Promise<Map<number, SearchHit | undefined>>>();
    for (const c of round) {
      if (!c.ranked || read.has(c.corpus.key)) continue;
      const refs = round.filter((o) => o.ranked && o.corpus.key === c.corpus.key).map((o) => o.ranked!);
      read.set(c.corpus.key, search.hitsOf!(c.corpus.key, refs, withVectors).then((hits) => new Map(refs.map((r, i) => [r.ref, hits[i]]))));
    }
    for (const c of round) {
      const hit = c.hit ?? (await read.get(c.corpus.key))?.get(c.ranked!.ref);
      if (hit) results.push(toResult(hit, c));
    }
  }
  return results;
}

function toResult(hit: SearchHit, { score, corpus }: Candidate): SearchResult {
  return {
    text: hit.text,
    score,
    part_metadata: hit.sectionTitle !== undefined ? { ...hit.partMetadata, section: hit.sectionTitle } : hit.partMetadata,
    document_metadata: hit.documentMetadata,
    document_id: hit.documentId,
    corpus_key: corpus.key,
    request_corpora_index: corpus.index,
    result_type: 'text',
    seq: hit.seq,
    ...(hit.vector && corpus.encoder && { vector: hit.vector, encoder: corpus.encoder }),
  };
}
