import type { Statement } from 'better-sqlite3';
import { fuseRanks, RankedPart, SearchHit } from '../search-index.port';

/** A part's row as the queries read it. */
export interface PartRow {
  doc_id: string;
  seq: number;
  text: string;
  title: string | null;
  part_meta: string;
  doc_meta: string;
  /** Selected only when vectors were asked for. */
  vector?: Buffer | null;
}

/** The columns a hit is built from. */
export const partColumns = (withVectors: boolean | undefined): string => `p.doc_id, p.seq, p.text, p.title, p.part_meta, p.doc_meta${withVectors ? ', p.vector' : ''}`;

/**
 * Each ranked part's hit, read in one statement (`rowid IN json_each(?)`) selecting `p.rowid AS id` and
 * {@link partColumns}, with the ranking's scores; undefined for a row deleted since the ranking.
 */
export function hitsOfRows(statement: Statement, ranked: readonly RankedPart[]): (SearchHit | undefined)[] {
  if (ranked.length === 0) return [];
  const rows = statement.all(JSON.stringify(ranked.map((r) => r.ref))) as (PartRow & { id: number })[];
  const byId = new Map(rows.map((r) => [r.id, r]));
  const documentMetadata = parsedOncePerDocument();
  return ranked.map(({ ref, ...scores }) => {
    const row = byId.get(ref);
    return row && toHit(row, scores, documentMetadata);
  });
}

/**
 * Every part of a document carries its document's metadata: one answer parses each distinct value once and its
 * hits share the (read-only) object, rather than one parse per part.
 */
export function parsedOncePerDocument(): (json: string) => Record<string, unknown> {
  const parsed = new Map<string, Record<string, unknown>>();
  return (json) => {
    let value = parsed.get(json);
    if (value === undefined) parsed.set(json, (value = JSON.parse(json) as Record<string, unknown>));
    return value;
  };
}

export function toHit(r: PartRow, scores: Pick<SearchHit, 'score' | 'textScore' | 'vectorDistance' | 'lexicalRelevance'>, documentMetadata: (json: string) => Record<string, unknown>): SearchHit {
  return {
    documentId: r.doc_id,
    seq: r.seq,
    text: r.text,
    sectionTitle: r.title ?? undefined,
    partMetadata: JSON.parse(r.part_meta),
    documentMetadata: documentMetadata(r.doc_meta),
    ...scores,
    ...(r.vector && { vector: new Float32Array(r.vector.buffer.slice(r.vector.byteOffset, r.vector.byteOffset + r.vector.byteLength)) }),
  };
}

/**
 * G14: dense text ranks (ties share a rank), vector ranks by order, fused by weight alpha; best first. Parts are
 * told apart by their ref (the row), both lists coming from one index.
 */
export function fuseRanked(lexical: readonly RankedPart[], vector: readonly RankedPart[], alpha: number): RankedPart[] {
  const merged = new Map<number, { ref: number; textRank?: number; vectorRank?: number; textScore?: number; lexicalRelevance?: number; vectorDistance?: number }>();
  let rank = 0;
  let previous: number | undefined;
  for (const r of lexical) {
    if (r.textScore !== previous) rank += 1;
    previous = r.textScore;
    merged.set(r.ref, { ref: r.ref, textRank: rank, textScore: r.textScore, lexicalRelevance: r.lexicalRelevance });
  }
  vector.forEach((r, i) => {
    const m = merged.get(r.ref);
    if (m) Object.assign(m, { vectorRank: i + 1, vectorDistance: r.vectorDistance });
    else merged.set(r.ref, { ref: r.ref, vectorRank: i + 1, vectorDistance: r.vectorDistance });
  });
  return [...merged.values()]
    .map(({ ref, textRank, vectorRank, textScore, lexicalRelevance, vectorDistance }) => ({ ref, textScore, lexicalRelevance, vectorDistance, score: fuseRanks(textRank, vectorRank, alpha) }))
    .sort((a, b) => b.score - a.score);
}
