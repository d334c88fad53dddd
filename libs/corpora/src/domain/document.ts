import { isDeepStrictEqual } from 'node:util';
import { assertNever, DomainError, invalid, notFound } from '@lib/platform/kernel';
import { Attachments, attachmentsOf, checkAttachments, DocumentImage, DocumentTable, imageText, tableTexts } from './attachments';

export { imageText, MAX_IMAGE_BYTES, tableTexts } from './attachments';
export type { DocumentImage, DocumentTable, TableCell } from './attachments';
import { ChunkingStrategy, eachChunk } from './chunking';
import type { DocumentEmbedding } from './embedding';

export type Metadata = Readonly<Record<string, unknown>>;

/** Characters of text one document may hold; the spec leaves the exact limit to the account. */
export const MAX_DOCUMENT_CHARACTERS = 10_000_000;
/** A document's own metadata, serialised (the reference's `max_metadata_bytes`). */
export const MAX_METADATA_BYTES = 1_048_576;

/**
 * Parts one document may have (the core document's `document_parts` limit too). Bounds the work and the event a
 * single document costs: chunking stops reading at the first part past it.
 */
export const MAX_DOCUMENT_PARTS = 50_000;

const tooManyParts = (input: DocumentInput): DomainError =>
  invalid(
    'document.too_many_parts',
    input.type === 'core'
      ? `The document has more than ${MAX_DOCUMENT_PARTS} parts; split it into several documents`
      : `The document has more than ${MAX_DOCUMENT_PARTS} parts; send it with a max_chars_chunking_strategy (larger parts) or split it into several documents`,
    {
      [input.type === 'core' ? 'document_parts' : 'sections']: `more than ${MAX_DOCUMENT_PARTS} parts`,
    },
  );

/** One stored part (chunk) of a document. */
export interface DocumentPart {
  readonly text: string;
  readonly metadata: Metadata;
  readonly sectionTitle?: string;
  readonly context?: string;
  /** Set on the part that carries a table's text. */
  readonly tableId?: string;
  /** Set on the part that carries an image's text (its title, caption and description). */
  readonly imageId?: string;
}

/** A table cell as the reference API types it: exactly one value field. */
export interface CoreDocumentInput {
  readonly type: 'core';
  readonly id: string;
  readonly metadata: Metadata;
  readonly parts: readonly { text: string; metadata?: Metadata; context?: string; tableId?: string; imageId?: string }[];
  readonly tables?: readonly DocumentTable[];
  readonly images?: readonly DocumentImage[];
}

export interface StructuredSectionInput {
  readonly title?: string;
  readonly text: string;
  readonly metadata?: Metadata;
  readonly sections?: readonly StructuredSectionInput[];
  readonly tables?: readonly DocumentTable[];
  readonly images?: readonly DocumentImage[];
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
  readonly images?: readonly DocumentImage[];
}

export type DocumentInput = CoreDocumentInput | StructuredDocumentInput;

export interface DocumentStats {
  readonly parts: number;
  readonly characters: number;
  readonly metadataBytes: number;
  /** Decoded bytes of the document's images; absent in events from before images (read as 0). */
  readonly imageBytes?: number;
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
        /** Every table and image of the document, sections' included, in document order. */
        tables?: readonly DocumentTable[];
        images?: readonly DocumentImage[];
        /** The parts' vectors from the corpus's encoder; absent when the corpus has none (created before encoders). */
        embedding?: DocumentEmbedding;
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

/**
 * A document's parts, one at a time, in order. Core parts are taken as sent. A structured document's sections are
 * chunked (titles kept, nested sections flattened in order), each followed by its tables' and images' parts with
 * the section's metadata; the document's own tables and images come last. One at a time, so a caller can give the
 * loop turns between (chunking is ICU's sentence segmenter, ~10 µs a section: 50,000 one-line sections held the
 * loop ~0.5 s in one go). Throws once a part past the bound would be read.
 */
export function* eachPart(input: DocumentInput): Generator<DocumentPart> {
  if (input.type === 'core') {
    if (input.parts.length > MAX_DOCUMENT_PARTS) throw tooManyParts(input);
    for (const p of input.parts) {
      yield {
        text: p.text,
        metadata: p.metadata ?? {},
        context: p.context,
        ...(p.tableId !== undefined ? { tableId: p.tableId } : {}),
        ...(p.imageId !== undefined ? { imageId: p.imageId } : {}),
      };
    }
    return;
  }
  const strategy = input.chunking ?? { type: 'sentence_chunking_strategy' };
  let count = 0;
  const counted = (part: DocumentPart): DocumentPart => {
    if (count++ === MAX_DOCUMENT_PARTS) throw tooManyParts(input);
    return part;
  };
  function* attachments(owner: Attachments, metadata: Metadata, title: string | undefined): Generator<DocumentPart> {
    for (const table of owner.tables ?? []) {
      for (const text of tableTexts(table)) yield counted({ text, metadata, sectionTitle: table.title ?? title, tableId: table.id });
    }
    for (const image of owner.images ?? []) {
      const text = imageText(image);
      if (text) yield counted({ text, metadata, sectionTitle: image.title ?? title, imageId: image.id });
    }
  }
  function* walk(sections: readonly StructuredSectionInput[]): Generator<DocumentPart> {
    for (const s of sections) {
      for (const text of eachChunk(s.text, strategy)) yield counted({ text, metadata: s.metadata ?? {}, sectionTitle: s.title });
      yield* attachments(s, s.metadata ?? {}, s.title);
      if (s.sections) yield* walk(s.sections);
    }
  }
  yield* walk(input.sections);
  yield* attachments(input, {}, undefined);
}

/** A document's parts, attachments and stats, checked: what indexing stores, before any state is consulted. */
export interface DocumentContent {
  readonly parts: DocumentPart[];
  readonly tables: DocumentTable[];
  readonly images: DocumentImage[];
  readonly stats: DocumentStats;
}

/** Checks a document's content on its own (empty, too large, attachments): a 400 before any work is spent on it. */
export function documentContent(input: DocumentInput): DocumentContent {
  const steps = documentContentSteps(input);
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
  }
}

/**
 * `documentContent` in steps, one per part read: its caller gives the loop turns between them (a large document's
 * chunking is a while of work). The checks and their order are `documentContent`'s.
 */
export function* documentContentSteps(input: DocumentInput): Generator<void, DocumentContent> {
  const { tables, images } = attachmentsOf(input);
  const imageBytes = checkAttachments(input, tables, images);
  const parts: DocumentPart[] = [];
  let characters = 0;
  for (const part of eachPart(input)) {
    parts.push(part);
    // Refused as soon as the text passes the bound, not once a 50 MB body has been chunked whole.
    if ((characters += part.text.length) > MAX_DOCUMENT_CHARACTERS) {
      throw invalid('document.too_large', `The document has more than ${MAX_DOCUMENT_CHARACTERS} characters of text`, { text: 'document too large' });
    }
    yield;
  }
  if (parts.length === 0) throw invalid('document.empty', 'The document has no text to index', { [input.type === 'core' ? 'document_parts' : 'sections']: 'no text' });
  const stats: DocumentStats = { parts: parts.length, characters, metadataBytes: Buffer.byteLength(JSON.stringify(input.metadata)), ...(imageBytes ? { imageBytes } : {}) };
  if (stats.metadataBytes > MAX_METADATA_BYTES) throw tooMuchMetadata(stats.metadataBytes);
  return { parts, tables, images, stats };
}

export function decideIndexDocument(
  state: DocumentState,
  command: { corpusKey: string; corpusId: string; input: DocumentInput; content?: DocumentContent; embedding?: DocumentEmbedding },
  now: Date,
): DocumentEvent[] {
  const { input, embedding } = command;
  if (state.status === 'indexed') {
    // As the spec says: a duplicate document id is a 400.
    throw invalid('document.id_taken', `Document "${input.id}" already exists in corpus "${command.corpusKey}"`, { id: 'document id already exists' });
  }
  const { parts, tables, images, stats } = command.content ?? documentContent(input);
  if (embedding && embedding.vectors.length !== parts.length) {
    throw new Error(`embedding has ${embedding.vectors.length} vectors for ${parts.length} parts`);
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
        ...(tables.length ? { tables } : {}),
        ...(images.length ? { images } : {}),
        ...(embedding ? { embedding } : {}),
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
const tooMuchMetadata = (bytes: number) => invalid('document.metadata_too_large', `The document's metadata is ${bytes} bytes, over the corpus limit of ${MAX_METADATA_BYTES} (max_metadata_bytes)`, { metadata: `over ${MAX_METADATA_BYTES} bytes` });

/** Merge adds or overwrites the supplied fields; replace swaps the whole object. No change → no event. */
export function decideUpdateDocumentMetadata(
  state: DocumentState,
  command: { corpusKey: string; corpusId: string; documentId: string; metadata: Metadata; strategy: MetadataStrategy; jobId?: string },
  now: Date,
): DocumentEvent[] {
  if (state.status !== 'indexed') throw documentNotFound(command.corpusKey, command.documentId);
  const metadata = command.strategy === 'merge' ? { ...state.metadata, ...command.metadata } : command.metadata;
  if (isDeepStrictEqual(metadata, state.metadata)) return [];
  if (metadataBytes(metadata) > MAX_METADATA_BYTES) throw tooMuchMetadata(metadataBytes(metadata));
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
