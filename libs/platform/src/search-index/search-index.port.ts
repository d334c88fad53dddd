import type { FieldRef, FilterExpr } from '../filter/filter';

/** One searchable part (chunk) of a document. */
export interface IndexedPart {
  /** 0-based order of the part within its document. */
  readonly seq: number;
  readonly text: string;
  readonly sectionTitle?: string;
  readonly partMetadata: Readonly<Record<string, unknown>>;
  /** The part's embedding; as the log decodes it, a Float32Array (no array of numbers made per part on the way). */
  readonly vector?: readonly number[] | Float32Array;
}

export interface IndexedDocument {
  readonly documentId: string;
  readonly documentMetadata: Readonly<Record<string, unknown>>;
  readonly parts: readonly IndexedPart[];
}

export interface SearchRequest {
  readonly mode: 'lexical' | 'vector' | 'hybrid';
  readonly text?: string;
  readonly vector?: readonly number[];
  /** Weight of the vector side in hybrid rank fusion (G14); default 0.3 as in Typesense. */
  readonly alpha?: number;
  readonly filter?: FilterExpr;
  readonly limit: number;
  /** Return each hit's stored vector (for rerankers that compare results, such as MMR). */
  readonly withVectors?: boolean;
}

export interface SearchHit {
  readonly documentId: string;
  readonly seq: number;
  readonly text: string;
  readonly sectionTitle?: string;
  readonly partMetadata: Record<string, unknown>;
  readonly documentMetadata: Record<string, unknown>;
  /** Raw score of the side(s) that found the hit; higher is better. */
  readonly textScore?: number;
  /**
   * The lexical side's score calibrated into 0–1, when the adapter can calibrate it (the embedded index:
   * docs/search.md); otherwise callers squash `textScore`.
   */
  readonly lexicalRelevance?: number;
  readonly vectorDistance?: number;
  /** Rank-fusion score in hybrid mode (G14); otherwise the side's own score. */
  readonly score: number;
  /** The part's stored vector, when asked for (`withVectors`) and the part has one. */
  readonly vector?: Float32Array;
}

/** A write the search projection asks for; sinks apply them idempotently, in order. */
/**
 * `incarnation` names what an index holds (a corpus's id and epoch): `createIndex` records it, and a document op that
 * names one applies only to an index that exists with that incarnation. So a document decided against a corpus that
 * was reset or deleted meanwhile lands nowhere, even when its event follows the reset in the log; a document op
 * without one applies as before (an upsert creating the index).
 */
export type SearchOp =
  | { readonly op: 'createIndex'; readonly index: string; readonly dimensions?: number; readonly incarnation?: string }
  | { readonly op: 'dropIndex'; readonly index: string }
  | { readonly op: 'upsertDocument'; readonly index: string; readonly document: IndexedDocument; readonly incarnation?: string }
  | { readonly op: 'deleteDocument'; readonly index: string; readonly documentId: string; readonly incarnation?: string }
  /**
   * Every document with a part the filter selects, removed whole (a deleted session's messages in the recall index,
   * docs/agents.md "Recall"). The filter should name `doc.` fields: a `part.` one removes documents by any part.
   */
  | { readonly op: 'deleteDocumentsWhere'; readonly index: string; readonly filter: FilterExpr; readonly incarnation?: string }
  /**
   * One part's vector, set on the part as it is (text and metadata kept); nothing when the part does not exist (a
   * message deleted before its embedding arrived, docs/agents.md "Recall"). The index takes the vector's size.
   */
  | { readonly op: 'setPartVector'; readonly index: string; readonly documentId: string; readonly seq: number; readonly vector: readonly number[] | Float32Array; readonly incarnation?: string }
  | {
      readonly op: 'setDocumentMetadata';
      readonly index: string;
      readonly documentId: string;
      readonly metadata: Readonly<Record<string, unknown>>;
      readonly incarnation?: string;
    };

/** The query side of the search index. An index that does not exist searches as empty. */
export interface SearchIndex {
  search(index: string, request: SearchRequest): Promise<SearchHit[]>;
  /** Distinct values of a metadata field, optionally restricted by a filter. */
  distinctValues(index: string, field: FieldRef, options?: { filter?: FilterExpr; limit?: number }): Promise<unknown[]>;
  /**
   * The stored values (scalars or arrays) of a metadata field over the parts a filter selects, for statistics:
   * one per matching part for a `part.` field, one per document with a matching part for a `doc.` field.
   * Missing and null values are left out.
   */
  fieldValues(index: string, field: FieldRef, options?: { filter?: FilterExpr }): Promise<unknown[]>;
  /** All parts of one document in order (for context windows and full-document context). */
  documentParts(index: string, documentId: string): Promise<SearchHit[]>;
  ping(): Promise<void>;
  /**
   * Optional, for an adapter whose ranking does not need a part's content (the embedded index): a lexical or
   * vector search's candidates as refs and scores, without reading their rows, so that a caller keeping a page
   * of 10 out of 200 candidates reads 10 rows (docs/search.md, "Content read for the page only").
   */
  rank?(index: string, request: SearchRequest & { readonly mode: 'lexical' | 'vector' }): Promise<RankedPart[]>;
  /** Each ranked ref's hit with its scores, by position; undefined for a part deleted since it was ranked. */
  hitsOf?(index: string, ranked: readonly RankedPart[], withVectors?: boolean): Promise<(SearchHit | undefined)[]>;
}

/** A candidate of {@link SearchIndex.rank}: `ref` names the part within its index; the scores are as on a SearchHit. */
export type RankedPart = Pick<SearchHit, 'score' | 'textScore' | 'lexicalRelevance' | 'vectorDistance'> & { readonly ref: number };

export const SEARCH_INDEX = Symbol('SearchIndex');

/** Rank fusion as Typesense computes it (G14): (1-α)/textRank + α/vectorRank, ranks from 1. */
export function fuseRanks(textRank: number | undefined, vectorRank: number | undefined, alpha: number): number {
  return (textRank ? (1 - alpha) / textRank : 0) + (vectorRank ? alpha / vectorRank : 0);
}
