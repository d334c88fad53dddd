import { streamId } from '@lib/platform';

export const corpusStream = (corpusKey: string): string => streamId('corpus', corpusKey);
export const documentStream = (corpusId: string, documentId: string): string => streamId('document', corpusId, documentId);

/** Projections whose read models a corpus or document write must be visible in before the response. */
export const CORPUS_WRITE_VISIBILITY = ['corpora', 'search'] as const;
export const DOCUMENT_WRITE_VISIBILITY = ['corpora', 'documents', 'search'] as const;
