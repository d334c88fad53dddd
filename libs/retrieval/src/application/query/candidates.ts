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
type Found = RankedPart | SearchHit;

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
  // Refs from an index that ranks without content (SearchIndex.rank), else hits with their content.
  const find: (r: SideRequest) => Promise<Found[]> =
    search.rank && search.hitsOf ? (r) => search.rank!(corpus.key, r) : (r) => search.search(corpus.key, { ...r, withVectors });
  const candidate = (found: Found, score: number): Candidate => ('ref' in found ? { score, corpus, ranked: found } : { score, corpus, hit: found });
  const vector = weight < 1 && queryVector ? await queryVector() : undefined;
  if (!vector) return (await find({ mode: 'lexical', text, limit: depth, filter })).map((f) => candidate(f, lexicalScore(f)));
  const nearest = find({ mode: 'vector', vector, limit: side, filter });
  const lexical = weight > 0 ? await find({ mode: 'lexical', text, limit: side, filter }) : [];
  return blend(lexical, await nearest, weight, side, (f) => ('ref' in f ? f.ref : partKey(f))).map(({ hit, score }) => candidate(hit, score));
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
