import type { FilterAttribute } from '../domain/corpus';
import type { DocumentImage, DocumentPart, DocumentStats, DocumentTable, Metadata } from '../domain/document';

/** Shapes of the read models the corpora projections write (see projections/). */
export interface CorpusRow {
  readonly id: string;
  readonly corpus_id: string;
  readonly key: string;
  readonly name: string;
  readonly description: string;
  readonly enabled: boolean;
  readonly save_history: boolean;
  readonly queries_are_answers: boolean;
  readonly documents_are_questions: boolean;
  readonly encoder_name: string | null;
  readonly request_timeout: number | null;
  readonly request_timeout_millis: number | null;
  readonly filter_attributes: readonly FilterAttribute[];
  readonly used_docs: number;
  readonly used_parts: number;
  readonly used_characters: number;
  readonly created_at: string;
  readonly [k: string]: unknown;
}

export interface DocumentRow {
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
  readonly [k: string]: unknown;
}

export interface JobRow {
  readonly id: string;
  readonly type: string;
  readonly corpus_key: string;
  readonly corpus_id: string;
  readonly state: 'queued' | 'started' | 'completed' | 'failed';
  readonly created_at: string;
  readonly started_at?: string;
  readonly completed_at?: string;
  readonly created_by: string | null;
  readonly cutoff_at: string | null;
  readonly total: number | null;
  readonly counts: { processed: number; updated: number; skipped: number; failed: number };
  readonly comment?: string;
  readonly [k: string]: unknown;
}

/** The reference API's Job, with `progress` (counts so far) added. */
export function jobView(row: JobRow): Record<string, unknown> {
  return {
    id: row.id,
    type: row.type,
    corpus_keys: [row.corpus_key],
    state: row.state,
    created_at: row.created_at,
    ...(row.started_at ? { started_at: row.started_at } : {}),
    ...(row.completed_at ? { completed_at: row.completed_at } : {}),
    ...(row.created_by ? { created_by_username: row.created_by } : {}),
    ...(row.comment ? { comment: row.comment } : {}),
    progress: { ...(row.total !== null ? { total: row.total } : {}), ...row.counts },
  };
}

export const CORPORA = 'corpora';
export const JOBS = 'jobs';
export const DOCUMENTS = 'documents';
export const DOCUMENT_IMAGES = 'document_images';

export interface ImageRow extends Omit<DocumentImage, 'id'> {
  readonly id: string;
  readonly corpus_key: string;
  readonly document_id: string;
  readonly image_id: string;
  readonly [k: string]: unknown;
}

/** The reference API's ImageMetadata, and with `data` its Image. */
export function imageView(image: Omit<DocumentImage, 'data'> & { data?: string }): Record<string, unknown> {
  return {
    id: image.id,
    ...(image.title !== undefined ? { title: image.title } : {}),
    ...(image.caption !== undefined ? { caption: image.caption } : {}),
    ...(image.description !== undefined ? { description: image.description } : {}),
    ...(image.data !== undefined ? { image_data: { data: image.data, mime_type: image.mimeType } } : { mime_type: image.mimeType }),
  };
}

/** The reference API's Corpus object. */
export function corpusView(row: CorpusRow): Record<string, unknown> {
  return {
    id: row.corpus_id,
    key: row.key,
    name: row.name,
    description: row.description,
    enabled: row.enabled,
    chat_history_corpus: false,
    queries_are_answers: row.queries_are_answers,
    documents_are_questions: row.documents_are_questions,
    encoder_name: row.encoder_name ?? undefined,
    save_history: row.save_history,
    ...(row.request_timeout !== null ? { request_timeout: row.request_timeout } : {}),
    ...(row.request_timeout_millis !== null ? { request_timeout_millis: row.request_timeout_millis } : {}),
    filter_attributes: row.filter_attributes,
    custom_dimensions: [],
    limits: { used_docs: row.used_docs, used_parts: row.used_parts, used_characters: row.used_characters },
    created_at: row.created_at,
  };
}
