/**
 * The events entry of the corpora context (`@lib/corpora/events`): the event types of its streams and the pure
 * helpers projections need to read them. Domain code only: loads no framework, adapter or encoder.
 */
export type { CorpusEvent } from './domain/corpus';
export { corpusIncarnation, documentIncarnation } from './domain/corpus';
export type { DocumentEvent, DocumentPart, Metadata } from './domain/document';
export type { JobEvent } from './domain/job';
export { decodeVector, encodeVector } from './domain/embedding';
