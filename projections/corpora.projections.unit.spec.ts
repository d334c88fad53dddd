import { CorpusEvent, corpusStream, DocumentEvent, documentStream } from '@lib/corpora';
import { EventLog, given } from '@lib/testing';
import { corporaProjection } from './corpora/corpora.projection';
import { documentsProjection } from './documents/documents.projection';
import { searchProjection } from './search/search.projection';

/** Builders for the corpora context's events, as its command handlers append them. */
function scenario() {
  const log = new EventLog();
  const corpus = (e: CorpusEvent) => log.append(corpusStream(e.data.corpusKey), e.type, e.data);
  const doc = (e: DocumentEvent) => log.append(documentStream(e.data.corpusId, e.data.documentId), e.type, e.data);
  const settings = { name: 'N', description: '', enabled: true, saveHistory: false, queriesAreAnswers: false, documentsAreQuestions: false, filterAttributes: [] };
  const stats = (parts: number) => ({ parts, characters: parts * 10, metadataBytes: 2 });
  const parts = (...texts: string[]) => texts.map((text) => ({ text, metadata: {} }));
  return {
    log,
    created: (key: string, corpusId = `crp_${key}`) => corpus({ type: 'CorpusCreated', data: { corpusKey: key, corpusId, settings, createdAt: '2026-01-01T00:00:00.000Z' } }),
    deleted: (key: string, corpusId = `crp_${key}`) => corpus({ type: 'CorpusDeleted', data: { corpusKey: key, corpusId, deletedAt: '2026-01-02T00:00:00.000Z' } }),
    indexed: (key: string, id: string, texts: string[], corpusId = `crp_${key}`) =>
      doc({ type: 'DocumentIndexed', data: { corpusKey: key, corpusId, documentId: id, documentType: 'core', metadata: { id }, parts: parts(...texts), stats: stats(texts.length), indexedAt: '2026-01-01T00:00:00.000Z' } }),
    removed: (key: string, id: string, n: number, corpusId = `crp_${key}`) =>
      doc({ type: 'DocumentDeleted', data: { corpusKey: key, corpusId, documentId: id, stats: stats(n), deletedAt: '2026-01-03T00:00:00.000Z' } }),
  };
}

describe('corpora projections', () => {
  it('corpora: counts documents, parts and characters; replaying a suffix changes nothing', async () => {
    const s = scenario();
    s.created('a');
    s.indexed('a', 'd1', ['one', 'two']);
    s.indexed('a', 'd2', ['three']);
    s.removed('a', 'd1', 2);
    const h = await given(s.log.events).project(corporaProjection);
    const expected = { id: 'a', corpus_id: 'crp_a', used_docs: 1, used_parts: 1, used_characters: 10 };
    expect(await h.reads.get('corpora', 'a')).toMatchObject(expected);
    await h.replay(s.log.events.slice(1));
    expect(await h.reads.get('corpora', 'a')).toMatchObject(expected);
    h.close();
  });

  it('documents: keeps parts, removes deleted documents and every document of a deleted corpus', async () => {
    const s = scenario();
    s.created('a');
    s.created('b');
    s.indexed('a', 'd1', ['one']);
    s.indexed('b', 'd2', ['two']);
    const h = await given(s.log.events).project(documentsProjection);
    expect(await h.reads.get('documents', 'a/d1')).toMatchObject({ document_id: 'd1', parts: [{ text: 'one' }] });
    s.deleted('a');
    await h.project(s.log.events.slice(-1));
    expect(await h.reads.get('documents', 'a/d1')).toBeUndefined();
    expect(await h.reads.get('documents', 'b/d2')).toBeDefined();
    await h.replay(s.log.events);
    expect(await h.reads.count('documents')).toBe(1);
    h.close();
  });

  it('search: indexes parts per corpus, forgets deleted documents, and a re-created corpus starts empty', async () => {
    const s = scenario();
    s.created('a');
    s.indexed('a', 'd1', ['whales sing']);
    s.indexed('a', 'd2', ['sharks swim']);
    s.removed('a', 'd2', 1);
    const h = await given(s.log.events).project(searchProjection);
    const ids = async (q: string) => (await h.search.search('a', { mode: 'lexical', text: q, limit: 5 })).map((x) => x.documentId);
    expect(await ids('whales sharks')).toEqual(['d1']);
    await h.replay(s.log.events.slice(2));
    expect(await ids('whales sharks')).toEqual(['d1']);
    s.deleted('a');
    s.created('a', 'crp_a2');
    await h.project(s.log.events.slice(-2));
    expect(await ids('whales')).toEqual([]);
    h.close();
  });
});
