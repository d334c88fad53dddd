import { randomUUID } from 'node:crypto';
import { CorpusEvent, corpusStream, DocumentEvent, documentStream } from '@lib/corpora';
import type { NewEvent } from '@lib/platform';

const metadata = { actor: { type: 'api_key' as const, id: 'aky_bench' }, correlationId: 'bench', schemaVersion: 1 };
const WORDS = 'cell protein gene expression tumor patient clinical trial immune response receptor signaling pathway mutation dose risk cohort brain neuron insulin glucose'.split(' ');

export function text(i: number, words = 14): string {
  return Array.from({ length: words }, (_, j) => WORDS[(i * 7 + j * 13) % WORDS.length]).join(' ') + '.';
}

export function corpusCreated(key: string): { stream: string; event: NewEvent } {
  const data: Extract<CorpusEvent, { type: 'CorpusCreated' }>['data'] = {
    corpusKey: key,
    corpusId: `crp_${key}`,
    settings: { name: key, description: '', enabled: true, saveHistory: false, queriesAreAnswers: false, documentsAreQuestions: false, filterAttributes: [] },
    createdAt: new Date().toISOString(),
  };
  return { stream: corpusStream(key), event: { id: randomUUID(), type: 'CorpusCreated', data, metadata } };
}

export function documentIndexed(key: string, i: number): { stream: string; event: NewEvent } {
  const t = text(i);
  const data: Extract<DocumentEvent, { type: 'DocumentIndexed' }>['data'] = {
    corpusKey: key,
    corpusId: `crp_${key}`,
    documentId: `doc-${i}`,
    documentType: 'core',
    metadata: { n: i, group: `g${i % 10}` },
    parts: [{ text: t, metadata: {} }],
    stats: { parts: 1, characters: t.length, metadataBytes: 20 },
    indexedAt: new Date().toISOString(),
  };
  return { stream: documentStream(`crp_${key}`, `doc-${i}`), event: { id: randomUUID(), type: 'DocumentIndexed', data, metadata } };
}
