import { CorpusEvent, corpusStream, DocumentEvent, documentStream, JobEvent, jobStream } from '@lib/corpora';
import { EventLog } from './events';

const at = (day: number) => `2026-01-0${day}T00:00:00.000Z`;
const settings = { name: 'N', description: '', enabled: true, saveHistory: false, queriesAreAnswers: false, documentsAreQuestions: false, filterAttributes: [] };
const stats = (parts: number) => ({ parts, characters: parts * 10, metadataBytes: 2 });
const parts = (texts: readonly string[]) => texts.map((text) => ({ text, metadata: {} }));

/**
 * Builds the corpora context's events on their streams, as its command handlers append them. Document events take
 * the corpus epoch they were decided against (their stream's), 0 unless given.
 */
export function corporaHistory(log = new EventLog()) {
  const corpus = (e: CorpusEvent) => log.append(corpusStream(e.data.corpusKey), e.type, e.data);
  const doc = (e: DocumentEvent, epoch = 0) => log.append(documentStream(e.data.corpusId, e.data.documentId, epoch), e.type, e.data);
  const job = (e: JobEvent) => log.append(jobStream(e.data.jobId), e.type, e.data);
  return {
    log,
    created: (key: string, corpusId = `crp_${key}`) => corpus({ type: 'CorpusCreated', data: { corpusKey: key, corpusId, settings, createdAt: at(1) } }),
    updated: (key: string, name: string, corpusId = `crp_${key}`) => corpus({ type: 'CorpusUpdated', data: { corpusKey: key, corpusId, changes: { name }, updatedAt: at(2) } }),
    reset: (key: string, epoch: number, corpusId = `crp_${key}`) => corpus({ type: 'CorpusReset', data: { corpusKey: key, corpusId, epoch, resetAt: at(2) } }),
    filterAttributes: (key: string, names: readonly string[], corpusId = `crp_${key}`) =>
      corpus({
        type: 'CorpusFilterAttributesReplaced',
        data: { corpusKey: key, corpusId, filterAttributes: names.map((name) => ({ name, level: 'document', type: 'text', indexed: true })), jobId: 'job_0', replacedAt: at(2) },
      }),
    deleted: (key: string, corpusId = `crp_${key}`) => corpus({ type: 'CorpusDeleted', data: { corpusKey: key, corpusId, deletedAt: at(2) } }),
    indexed: (key: string, id: string, texts: readonly string[], corpusId = `crp_${key}`, images: readonly string[] = [], epoch = 0) =>
      doc({
        type: 'DocumentIndexed',
        data: {
          corpusKey: key,
          corpusId,
          documentId: id,
          documentType: 'core',
          metadata: { id },
          parts: parts(texts),
          images: images.map((imageId) => ({ id: imageId, mimeType: 'image/png', data: Buffer.from(imageId).toString('base64') })),
          stats: stats(texts.length),
          indexedAt: at(1),
        },
      }, epoch),
    metadataUpdated: (key: string, id: string, metadata: Record<string, unknown>, n: number, corpusId = `crp_${key}`, epoch = 0) =>
      doc({ type: 'DocumentMetadataUpdated', data: { corpusKey: key, corpusId, documentId: id, metadata, strategy: 'replace', stats: stats(n), updatedAt: at(3) } }, epoch),
    removed: (key: string, id: string, n: number, corpusId = `crp_${key}`, epoch = 0) =>
      doc({ type: 'DocumentDeleted', data: { corpusKey: key, corpusId, documentId: id, stats: stats(n), deletedAt: at(3) } }, epoch),
    /**
     * Writes that lost a race with a reset or delete: decided against the corpus as it was (`epoch`, `corpusId`),
     * appended after it. The projections must leave every read model as if they had never happened.
     */
    raced: (key: string, corpusId: string, epoch: number) => ({
      indexed: (id: string, texts: readonly string[]) =>
        doc({ type: 'DocumentIndexed', data: { corpusKey: key, corpusId, documentId: id, documentType: 'core', metadata: { id }, parts: parts(texts), stats: stats(texts.length), indexedAt: at(1) } }, epoch),
      removed: (id: string, n: number) => doc({ type: 'DocumentDeleted', data: { corpusKey: key, corpusId, documentId: id, stats: stats(n), deletedAt: at(3) } }, epoch),
      metadataUpdated: (id: string, metadata: Record<string, unknown>, n: number) =>
        doc({ type: 'DocumentMetadataUpdated', data: { corpusKey: key, corpusId, documentId: id, metadata, strategy: 'replace', stats: stats(n), updatedAt: at(3) } }, epoch),
    }),
    jobQueued: (jobId: string, key: string, corpusId = `crp_${key}`) =>
      job({ type: 'JobQueued', data: { jobId, corpusKey: key, corpusId, request: { type: 'bulk_update_document_metadata', metadata: { a: 1 }, strategy: 'merge' }, total: 2, createdBy: 'ada', createdAt: at(1) } }),
    jobStarted: (jobId: string) => job({ type: 'JobStarted', data: { jobId, startedAt: at(2) } }),
    jobProgressed: (jobId: string, processed: number) => job({ type: 'JobProgressed', data: { jobId, counts: { processed, updated: processed, skipped: 0, failed: 0 }, cursor: processed } }),
    jobCompleted: (jobId: string, processed: number) => job({ type: 'JobCompleted', data: { jobId, counts: { processed, updated: processed, skipped: 0, failed: 0 }, completedAt: at(3) } }),
    jobFailed: (jobId: string, reason: string) => job({ type: 'JobFailed', data: { jobId, counts: { processed: 0, updated: 0, skipped: 0, failed: 1 }, reason, failedAt: at(3) } }),
  };
}

/**
 * A history where writes lost their race with a reset (corpus `a`) and a delete then re-create (corpus `b`): only
 * `a/fresh` (indexed in epoch 1, with its first metadata) may be visible anywhere, and `b` must be empty.
 */
export function racedHistory() {
  const s = corporaHistory();
  s.created('a');
  s.indexed('a', 'kept', ['whales before']);
  s.reset('a', 1);
  s.raced('a', 'crp_a', 0).indexed('late', ['whales late']);
  s.indexed('a', 'fresh', ['whales fresh'], 'crp_a', [], 1);
  s.raced('a', 'crp_a', 0).removed('fresh', 1);
  s.raced('a', 'crp_a', 0).metadataUpdated('fresh', { stale: true }, 1);
  s.created('b');
  s.deleted('b');
  s.raced('b', 'crp_b', 0).indexed('orphan', ['whales orphan']);
  s.created('b', 'crp_b2');
  s.raced('b', 'crp_b', 0).indexed('orphan2', ['whales orphan']);
  return s;
}
