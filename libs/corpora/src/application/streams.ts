import { streamId } from '@lib/platform';
import { corpusIncarnation } from '../domain/corpus';

export const corpusStream = (corpusKey: string): string => streamId('corpus', corpusKey);
/** Documents of a corpus epoch (docs/corpora.md): epoch 0 keeps the original name, a reset starts a new set. */
export const documentStream = (corpusId: string, documentId: string, epoch = 0): string => streamId('document', corpusIncarnation(corpusId, epoch), documentId);
export const jobStream = (jobId: string): string => streamId('job', jobId);

/** Projections whose read models a corpus or document write must be visible in before the response. */
export const CORPUS_WRITE_VISIBILITY = ['corpora', 'search'] as const;
export const DOCUMENT_WRITE_VISIBILITY = ['corpora', 'documents', 'search'] as const;
