import { givenEvents } from '@lib/testing';
import { chunkText } from './chunking';
import { CorpusEvent, corpusFold, CorpusSettings, decideCreateCorpus, decideDeleteCorpus, decideUpdateCorpus } from './corpus';
import { decideDeleteDocument, decideIndexDocument, DocumentEvent, documentFold, MAX_DOCUMENT_CHARACTERS } from './document';

const now = new Date('2026-11-22T10:00:00.000Z');
const settings: CorpusSettings = { name: 'N', description: '', enabled: true, saveHistory: false, queriesAreAnswers: false, documentsAreQuestions: false, filterAttributes: [] };
const created = (corpusId = 'crp_1'): CorpusEvent => ({ type: 'CorpusCreated', data: { corpusKey: 'k', corpusId, settings, createdAt: now.toISOString() } });
const deleted = (corpusId = 'crp_1'): CorpusEvent => ({ type: 'CorpusDeleted', data: { corpusKey: 'k', corpusId, deletedAt: now.toISOString() } });

describe('corpus decisions', () => {
  it('creates a corpus with a new id; a taken key is a 400-kind error; a deleted key can be reused with a fresh id', () => {
    givenEvents(corpusFold, []).when((s) => decideCreateCorpus(s, { corpusKey: 'k', settings }, now, () => 'crp_1')).then([created()]);
    givenEvents(corpusFold, [created()])
      .when((s) => decideCreateCorpus(s, { corpusKey: 'k', settings }, now, () => 'crp_2'))
      .thenFails({ kind: 'invalid', code: 'corpus.key_taken', details: { fieldErrors: { key: expect.any(String) } } });
    givenEvents(corpusFold, [created(), deleted()]).when((s) => decideCreateCorpus(s, { corpusKey: 'k', settings }, now, () => 'crp_2')).then([created('crp_2')]);
  });

  it('rejects duplicate filter attribute names', () => {
    const attr = { name: 'year', level: 'document' as const, indexed: true, type: 'integer' as const };
    givenEvents(corpusFold, [])
      .when((s) => decideCreateCorpus(s, { corpusKey: 'k', settings: { ...settings, filterAttributes: [attr, attr] } }, now, () => 'crp_1'))
      .thenFails({ code: 'corpus.duplicate_filter_attribute' });
  });

  it('records only real changes, and refuses to update or delete a missing corpus', () => {
    givenEvents(corpusFold, [created()]).when((s) => decideUpdateCorpus(s, { corpusKey: 'k', changes: { name: 'N', description: undefined } }, now)).then([]);
    givenEvents(corpusFold, [created()])
      .when((s) => decideUpdateCorpus(s, { corpusKey: 'k', changes: { name: 'M' } }, now))
      .then([{ type: 'CorpusUpdated', data: { corpusKey: 'k', corpusId: 'crp_1', changes: { name: 'M' }, updatedAt: now.toISOString() } }]);
    givenEvents(corpusFold, [created(), deleted()]).when((s) => decideDeleteCorpus(s, { corpusKey: 'k' }, now)).thenFails({ kind: 'not_found', details: { id: 'k' } });
  });
});

describe('document decisions', () => {
  const input = { type: 'structured' as const, id: 'd', metadata: { a: 1 }, sections: [{ title: 'T', text: 'One. Two!' }, { text: 'Three?' }] };
  const cmd = { corpusKey: 'k', corpusId: 'crp_1', input };
  it('indexes structured sections as sentence parts with their titles, and counts them', () => {
    const [e] = decideIndexDocument(documentFold.initialState, cmd, now);
    expect(e.type).toBe('DocumentIndexed');
    const data = (e as Extract<DocumentEvent, { type: 'DocumentIndexed' }>).data;
    expect(data.parts).toEqual([
      { text: 'One.', metadata: {}, sectionTitle: 'T' },
      { text: 'Two!', metadata: {}, sectionTitle: 'T' },
      { text: 'Three?', metadata: {}, sectionTitle: undefined },
    ]);
    expect(data.stats).toEqual({ parts: 3, characters: 14, metadataBytes: 7 });
  });

  it('refuses a duplicate id and an empty document; deletes carry the counts they remove', () => {
    const history = decideIndexDocument(documentFold.initialState, cmd, now);
    givenEvents(documentFold, history).when((s) => decideIndexDocument(s, cmd, now)).thenFails({ kind: 'invalid', code: 'document.id_taken' });
    givenEvents(documentFold, []).when((s) => decideIndexDocument(s, { ...cmd, input: { ...input, sections: [{ text: '  ' }] } }, now)).thenFails({ code: 'document.empty' });
    givenEvents(documentFold, history)
      .when((s) => decideDeleteDocument(s, { corpusKey: 'k', corpusId: 'crp_1', documentId: 'd' }, now))
      .then([{ type: 'DocumentDeleted', data: { corpusKey: 'k', corpusId: 'crp_1', documentId: 'd', stats: { parts: 3, characters: 14, metadataBytes: 7 }, deletedAt: now.toISOString() } }]);
  });

  it('refuses a document over the character limit', () => {
    const big = { type: 'core' as const, id: 'big', metadata: {}, parts: [{ text: 'x'.repeat(MAX_DOCUMENT_CHARACTERS + 1) }] };
    givenEvents(documentFold, []).when((s) => decideIndexDocument(s, { corpusKey: 'k', corpusId: 'crp_1', input: big }, now)).thenFails({ kind: 'invalid', code: 'document.too_large' });
  });

  it('chunks by max characters without crossing the limit except for an overlong sentence', () => {
    const text = 'Short one. Another short one. ' + 'X'.repeat(250) + '. End.';
    const chunks = chunkText(text, { type: 'max_chars_chunking_strategy', maxCharsPerChunk: 100 });
    expect(chunks[0]).toBe('Short one. Another short one.');
    expect(chunks.every((c) => c.length <= 100)).toBe(true);
    expect(chunks.join('').replace(/\s/g, '')).toBe(text.replace(/\s/g, ''));
  });
});
