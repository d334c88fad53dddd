import { MAX_METADATA_BYTES } from '../domain/document';
import { collection } from '@lib/platform/projections';
import { corpusIncarnation, type CorpusEvent, type FilterAttribute } from '../domain/corpus';

/** One row per corpus, keyed by corpus key, with usage counters kept by document events (projections/corpora). */
export type CorpusRow = {
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
  /** Σ of the documents' `bytes_used` (text and image bytes; metadata apart). Absent on rows from version 1. */
  readonly used_bytes?: number;
  /** Set by a reset (the documents' epoch); absent before the first. */
  readonly epoch?: number;
  /**
   * True once a document with tables or images was indexed (until a reset): only then do query results need their
   * document's row to show the table or image a part was cut from. Never unset by a delete (the deletion event does
   * not say what it removed); absent on rows written before it, read as true.
   */
  readonly has_attachments?: boolean;
  /** The corpus id and epoch (`corpusIncarnation`): document events of another one leave the counters alone. */
  readonly incarnation: string;
  readonly created_at: string;
};

export const CORPORA = collection<CorpusRow>('corpora');

type CorpusCreated = Extract<CorpusEvent, { type: 'CorpusCreated' }>['data'];

/** The row a `CorpusCreated` makes. */
export function corpusRow(d: CorpusCreated): CorpusRow {
  const s = d.settings;
  return {
    id: d.corpusKey,
    corpus_id: d.corpusId,
    incarnation: corpusIncarnation(d.corpusId),
    key: d.corpusKey,
    name: s.name,
    description: s.description,
    enabled: s.enabled,
    save_history: s.saveHistory,
    queries_are_answers: s.queriesAreAnswers,
    documents_are_questions: s.documentsAreQuestions,
    encoder_name: s.encoderName ?? null,
    request_timeout: s.requestTimeout ?? null,
    request_timeout_millis: s.requestTimeoutMillis ?? null,
    filter_attributes: s.filterAttributes,
    used_docs: 0,
    used_parts: 0,
    used_characters: 0,
    used_bytes: 0,
    has_attachments: false,
    created_at: d.createdAt,
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
    // The reference's CorpusLimits: no byte quota and no indexing rate limit here (0, as the reference shows for
    // none), document metadata at most MAX_METADATA_BYTES.
    limits: { used_docs: row.used_docs, used_parts: row.used_parts, used_bytes: row.used_bytes ?? 0, used_characters: row.used_characters, max_bytes: 0, max_metadata_bytes: MAX_METADATA_BYTES, index_rate: 0 },
    created_at: row.created_at,
  };
}
