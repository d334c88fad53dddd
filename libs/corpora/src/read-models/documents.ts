import { collection } from '@lib/platform/projections';
import type { DocumentEvent, DocumentImage, DocumentPart, DocumentStats, DocumentTable, Metadata } from '../domain/document';

/** One row per document with its parts, keyed by `documentReadId` (projections/documents). */
export type DocumentRow = {
  readonly id: string;
  readonly corpus_key: string;
  readonly corpus_id: string;
  readonly document_id: string;
  readonly type: 'core' | 'structured';
  readonly title: string | null;
  readonly description: string | null;
  readonly metadata: Metadata;
  readonly parts: readonly DocumentPart[];
  readonly tables?: readonly DocumentTable[];
  /** Without their data, which lives in DOCUMENT_IMAGES. */
  readonly images?: readonly Omit<DocumentImage, 'data'>[];
  readonly stats: DocumentStats;
  readonly indexed_at: string;
  readonly updated_at?: string;
};

export const DOCUMENTS = collection<DocumentRow>('documents');

/** Read-model id of a document: corpus key and document id, which cannot collide (keys have no "/"). */
export const documentReadId = (corpusKey: string, documentId: string): string => `${corpusKey}/${documentId}`;

export type DocumentIndexed = Extract<DocumentEvent, { type: 'DocumentIndexed' }>['data'];

/** The row a `DocumentIndexed` makes; image data is left to `imageRows`. */
export const documentRow = (d: DocumentIndexed): DocumentRow => ({
  id: documentReadId(d.corpusKey, d.documentId),
  corpus_key: d.corpusKey,
  corpus_id: d.corpusId,
  document_id: d.documentId,
  type: d.documentType,
  title: d.title ?? null,
  description: d.description ?? null,
  metadata: d.metadata,
  parts: d.parts,
  tables: d.tables ?? [],
  images: (d.images ?? []).map(({ data: _data, ...image }) => image),
  stats: d.stats,
  indexed_at: d.indexedAt,
  updated_at: d.indexedAt,
});
