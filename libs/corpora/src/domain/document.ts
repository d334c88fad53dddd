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
        stats: DocumentStats;
        indexedAt: string;
      };
    }
  | { type: 'DocumentDeleted'; data: { corpusKey: string; corpusId: string; documentId: string; stats: DocumentStats; deletedAt: string } };

export const DOCUMENT_EVENT_TYPES = ['DocumentIndexed', 'DocumentDeleted'] as const;

export type DocumentState =
  | { readonly status: 'absent' }
  | { readonly status: 'indexed'; readonly stats: DocumentStats }
  | { readonly status: 'deleted' };

export const documentFold = {
  initialState: { status: 'absent' } as DocumentState,
  evolve(state: DocumentState, event: DocumentEvent): DocumentState {
    switch (event.type) {
      case 'DocumentIndexed':
        return { status: 'indexed', stats: event.data.stats };
      case 'DocumentDeleted':
        return { status: 'deleted' };
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
