import { isDeepStrictEqual } from 'node:util';
import { assertNever, DomainError, invalid, notFound } from '@lib/platform';
import { ChunkingStrategy, chunkText } from './chunking';

export type Metadata = Readonly<Record<string, unknown>>;

/** Characters of text one document may hold; the spec leaves the exact limit to the account. */
export const MAX_DOCUMENT_CHARACTERS = 10_000_000;

/** One stored part (chunk) of a document. */
export interface DocumentPart {
  readonly text: string;
  readonly metadata: Metadata;
  readonly sectionTitle?: string;
  readonly context?: string;
  /** Set on the part that carries a table's text. */
  readonly tableId?: string;
}

/** A table cell as the reference API types it: exactly one value field. */
export type TableCell =
  | { readonly text_value: string; readonly colspan?: number }
  | { readonly int_value: number; readonly colspan?: number }
  | { readonly float_value: number; readonly colspan?: number }
  | { readonly bool_value: boolean; readonly colspan?: number };

export interface DocumentTable {
  readonly id: string;
  readonly title?: string;
  readonly description?: string;
  readonly data: { readonly headers: readonly (readonly TableCell[])[]; readonly rows: readonly (readonly TableCell[])[] };
}

export interface CoreDocumentInput {
  readonly type: 'core';
  readonly id: string;
  readonly metadata: Metadata;
  readonly parts: readonly { text: string; metadata?: Metadata; context?: string }[];
}

export interface StructuredSectionInput {
  readonly title?: string;
  readonly text: string;
  readonly metadata?: Metadata;
  readonly sections?: readonly StructuredSectionInput[];
}

export interface StructuredDocumentInput {
  readonly type: 'structured';
  readonly id: string;
  readonly title?: string;
  readonly description?: string;
  readonly metadata: Metadata;
  readonly sections: readonly StructuredSectionInput[];
  readonly chunking?: ChunkingStrategy;
  /** Tables of the document (from upload with table extraction, or sent with the document). */
  readonly tables?: readonly DocumentTable[];
}

export type DocumentInput = CoreDocumentInput | StructuredDocumentInput;

export interface DocumentStats {
  readonly parts: number;
  readonly characters: number;
  readonly metadataBytes: number;
}

export type DocumentEvent =
  | {
      type: 'DocumentIndexed';
      data: {
        corpusKey: string;
        corpusId: string;
        documentId: string;
        documentType: 'core' | 'structured';
        title?: string;
        description?: string;
        metadata: Metadata;
        parts: readonly DocumentPart[];
        tables?: readonly DocumentTable[];
        stats: DocumentStats;
        indexedAt: string;
      };
    }
  | { type: 'DocumentDeleted'; data: { corpusKey: string; corpusId: string; documentId: string; stats: DocumentStats; deletedAt: string } }
  /** The whole new metadata, whatever the strategy that produced it; `stats` are the document's stats after it. */
  | {
      type: 'DocumentMetadataUpdated';
      data: { corpusKey: string; corpusId: string; documentId: string; metadata: Metadata; strategy: MetadataStrategy; stats: DocumentStats; jobId?: string; updatedAt: string };
    };

export const DOCUMENT_EVENT_TYPES = ['DocumentIndexed', 'DocumentDeleted', 'DocumentMetadataUpdated'] as const;

export type MetadataStrategy = 'merge' | 'replace';

export type DocumentState =
  | { readonly status: 'absent' }
  | { readonly status: 'indexed'; readonly stats: DocumentStats; readonly metadata: Metadata }
  | { readonly status: 'deleted' };

export const documentFold = {
  initialState: { status: 'absent' } as DocumentState,
  evolve(state: DocumentState, event: DocumentEvent): DocumentState {
    switch (event.type) {
      case 'DocumentIndexed':
        return { status: 'indexed', stats: event.data.stats, metadata: event.data.metadata };
      case 'DocumentDeleted':
        return { status: 'deleted' };
      case 'DocumentMetadataUpdated':
        return state.status === 'indexed' ? { ...state, stats: event.data.stats, metadata: event.data.metadata } : state;
      default:
        return assertNever(event);
    }
  },
};

export const documentNotFound = (corpusKey: string, id: string): DomainError =>
  notFound('document.not_found', `Document "${id}" does not exist in corpus "${corpusKey}"`, id);

/** Parts of a structured document: each section's text chunked, titles kept, nested sections flattened in order. */
export function partsOf(input: DocumentInput): DocumentPart[] {
  if (input.type === 'core') return input.parts.map((p) => ({ text: p.text, metadata: p.metadata ?? {}, context: p.context }));
  const strategy = input.chunking ?? { type: 'sentence_chunking_strategy' };
  const out: DocumentPart[] = [];
  const walk = (sections: readonly StructuredSectionInput[]) => {
    for (const s of sections) {
      for (const text of chunkText(s.text, strategy)) out.push({ text, metadata: s.metadata ?? {}, sectionTitle: s.title });
      if (s.sections) walk(s.sections);
    }
  };
  walk(input.sections);
  for (const table of input.tables ?? []) {
    for (const text of tableTexts(table)) out.push({ text, metadata: {}, sectionTitle: table.title, tableId: table.id });
  }
  return out;
}

const cellText = (c: TableCell): string =>
  'text_value' in c ? c.text_value : 'int_value' in c ? String(c.int_value) : 'float_value' in c ? String(c.float_value) : String(c.bool_value);

/** Rows of a table text part: a table is searchable through these. */
const TABLE_PART_CHARS = 2000;

/**
 * A table as text, row by row with its column names ("Species: Otter; Count: 12; Weight: 4.5."), after a
 * line naming the table and its columns; long tables continue in further parts of about 2,000 characters.
 * This is the table's summary when no language model writes one (docs/corpora.md).
 */
export function tableTexts(table: DocumentTable): string[] {
  const header = table.data.headers[0]?.map(cellText) ?? [];
  const intro = [table.title, table.description].filter(Boolean).join('. ');
  const head = `${intro ? `${intro}. ` : ''}Table with ${table.data.rows.length} rows${header.length ? ` and columns ${header.join(', ')}` : ''}.`;
  const rows = table.data.rows.map((r) => `${r.map((c, i) => (header[i] ? `${header[i]}: ${cellText(c)}` : cellText(c))).join('; ')}.`);
  const out: string[] = [];
  let current = head;
  for (const row of rows) {
    if (current.length + row.length + 1 > TABLE_PART_CHARS && current) {
      out.push(current);
      current = row;
    } else current = current ? `${current} ${row}` : row;
  }
  if (current) out.push(current);
  return out;
}

export function decideIndexDocument(
  state: DocumentState,
  command: { corpusKey: string; corpusId: string; input: DocumentInput },
  now: Date,
): DocumentEvent[] {
  const { input } = command;
  if (state.status === 'indexed') {
    // As the spec says: a duplicate document id is a 400.
    throw invalid('document.id_taken', `Document "${input.id}" already exists in corpus "${command.corpusKey}"`, { id: 'document id already exists' });
  }
  const parts = partsOf(input);
  if (parts.length === 0) throw invalid('document.empty', 'The document has no text to index', { [input.type === 'core' ? 'document_parts' : 'sections']: 'no text' });
  const stats: DocumentStats = {
    parts: parts.length,
    characters: parts.reduce((n, p) => n + p.text.length, 0),
    metadataBytes: Buffer.byteLength(JSON.stringify(input.metadata)),
  };
  if (stats.characters > MAX_DOCUMENT_CHARACTERS) {
    throw invalid('document.too_large', `The document has more than ${MAX_DOCUMENT_CHARACTERS} characters of text`, { text: 'document too large' });
  }
  return [
    {
      type: 'DocumentIndexed',
      data: {
        corpusKey: command.corpusKey,
        corpusId: command.corpusId,
        documentId: input.id,
        documentType: input.type,
        title: input.type === 'structured' ? input.title : undefined,
        description: input.type === 'structured' ? input.description : undefined,
        metadata: input.metadata,
        parts,
        ...(input.type === 'structured' && input.tables?.length ? { tables: input.tables } : {}),
        stats,
        indexedAt: now.toISOString(),
      },
    },
  ];
}

export function decideDeleteDocument(state: DocumentState, command: { corpusKey: string; corpusId: string; documentId: string }, now: Date): DocumentEvent[] {
  if (state.status !== 'indexed') throw documentNotFound(command.corpusKey, command.documentId);
  return [
    {
      type: 'DocumentDeleted',
      data: { corpusKey: command.corpusKey, corpusId: command.corpusId, documentId: command.documentId, stats: state.stats, deletedAt: now.toISOString() },
    },
  ];
}

const metadataBytes = (m: Metadata): number => Buffer.byteLength(JSON.stringify(m));

/** Merge adds or overwrites the supplied fields; replace swaps the whole object. No change → no event. */
export function decideUpdateDocumentMetadata(
  state: DocumentState,
  command: { corpusKey: string; corpusId: string; documentId: string; metadata: Metadata; strategy: MetadataStrategy; jobId?: string },
  now: Date,
): DocumentEvent[] {
  if (state.status !== 'indexed') throw documentNotFound(command.corpusKey, command.documentId);
  const metadata = command.strategy === 'merge' ? { ...state.metadata, ...command.metadata } : command.metadata;
  if (isDeepStrictEqual(metadata, state.metadata)) return [];
  return [
    {
      type: 'DocumentMetadataUpdated',
      data: {
        corpusKey: command.corpusKey,
        corpusId: command.corpusId,
        documentId: command.documentId,
        metadata,
        strategy: command.strategy,
        stats: { ...state.stats, metadataBytes: metadataBytes(metadata) },
        ...(command.jobId ? { jobId: command.jobId } : {}),
        updatedAt: now.toISOString(),
      },
    },
  ];
}
