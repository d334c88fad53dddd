import { givenEvents } from '@lib/testing';
import { CorpusEvent, corpusFold, CorpusSettings, decideReplaceFilterAttributes, decideResetCorpus } from './corpus';
import { decideIndexDocument, decideUpdateDocumentMetadata, DocumentEvent, documentFold, eachPart, tableTexts } from './document';
import { filterProblems } from './filter-attributes';
import { decideFinishJob, decideJobProgress, decideQueueJob, decideStartJob, JobEvent, jobFold, NO_COUNTS } from './job';

const now = new Date('2026-11-23T10:00:00.000Z');
const settings: CorpusSettings = { name: 'N', description: '', enabled: true, saveHistory: false, queriesAreAnswers: false, documentsAreQuestions: false, filterAttributes: [] };
const created: CorpusEvent = { type: 'CorpusCreated', data: { corpusKey: 'k', corpusId: 'crp_1', settings, createdAt: now.toISOString() } };
const ids = { corpusKey: 'k', corpusId: 'crp_1', documentId: 'd' };
const indexed = (metadata: Record<string, unknown>): DocumentEvent =>
  decideIndexDocument({ status: 'absent' }, { corpusKey: 'k', corpusId: 'crp_1', input: { type: 'core', id: 'd', metadata, parts: [{ text: 'Text.' }] } }, now)[0];

describe('corpus reset and filter attributes', () => {
  it('moves the corpus to a new epoch on every reset, and refuses a missing corpus', () => {
    const first = givenEvents(corpusFold, [created]).when((s) => decideResetCorpus(s, { corpusKey: 'k' }, now));
    first.then([{ type: 'CorpusReset', data: { corpusKey: 'k', corpusId: 'crp_1', epoch: 1, resetAt: now.toISOString() } }]);
    const reset1: CorpusEvent = { type: 'CorpusReset', data: { corpusKey: 'k', corpusId: 'crp_1', epoch: 1, resetAt: now.toISOString() } };
    expect(givenEvents(corpusFold, [created, reset1]).state).toMatchObject({ status: 'active', epoch: 1 });
    givenEvents(corpusFold, [created, reset1]).when((s) => decideResetCorpus(s, { corpusKey: 'k' }, now)).then([{ ...reset1, data: { ...reset1.data, epoch: 2 } }]);
    givenEvents(corpusFold, []).when((s) => decideResetCorpus(s, { corpusKey: 'k' }, now)).thenFails({ kind: 'not_found' });
  });

  it('replaces filter attributes; the same name may exist once per level', () => {
    const attrs = [
      { name: 'year', level: 'document' as const, indexed: true, type: 'integer' as const },
      { name: 'year', level: 'part' as const, indexed: true, type: 'integer' as const },
    ];
    const ev = decideReplaceFilterAttributes(givenEvents(corpusFold, [created]).state, { corpusKey: 'k', filterAttributes: attrs, jobId: 'job_1' }, now);
    expect(givenEvents(corpusFold, [created, ...ev]).state).toMatchObject({ settings: { filterAttributes: attrs } });
    givenEvents(corpusFold, [created])
      .when((s) => decideReplaceFilterAttributes(s, { corpusKey: 'k', filterAttributes: [attrs[0], attrs[0]], jobId: 'job_1' }, now))
      .thenFails({ code: 'corpus.duplicate_filter_attribute' });
  });
});

describe('document metadata updates', () => {
  it('merges over the current metadata, replaces it whole, and appends nothing when nothing changes', () => {
    const history = [indexed({ a: 1, b: { c: 2 } })];
    const merge = givenEvents(documentFold, history).when((s) => decideUpdateDocumentMetadata(s, { ...ids, metadata: { b: { c: 2 }, d: 3 }, strategy: 'merge' }, now));
    merge.then([
      {
        type: 'DocumentMetadataUpdated',
        data: { ...ids, metadata: { a: 1, b: { c: 2 }, d: 3 }, strategy: 'merge', stats: { parts: 1, characters: 5, metadataBytes: 25 }, updatedAt: now.toISOString() },
      },
    ]);
    givenEvents(documentFold, history).when((s) => decideUpdateDocumentMetadata(s, { ...ids, metadata: { b: { c: 2 } }, strategy: 'merge' }, now)).then([]);
    // Key order does not make a change.
    givenEvents(documentFold, history).when((s) => decideUpdateDocumentMetadata(s, { ...ids, metadata: { b: { c: 2 }, a: 1 }, strategy: 'replace' }, now)).then([]);
    const replaced = decideUpdateDocumentMetadata(givenEvents(documentFold, history).state, { ...ids, metadata: { z: true }, strategy: 'replace' }, now);
    expect(givenEvents(documentFold, [...history, ...replaced]).state).toMatchObject({ status: 'indexed', metadata: { z: true } });
    givenEvents(documentFold, []).when((s) => decideUpdateDocumentMetadata(s, { ...ids, metadata: {}, strategy: 'merge' }, now)).thenFails({ code: 'document.not_found' });
  });
});

describe('tables as parts', () => {
  const table = {
    id: 'table_1',
    title: 'Birds',
    data: { headers: [[{ text_value: 'Species' }, { text_value: 'Count' }]], rows: [[{ text_value: 'Heron' }, { int_value: 7 }], [{ text_value: 'Owl' }, { float_value: 1.5 }]] },
  };
  it('writes one sentence per row under the column names, after a line naming the table', () => {
    expect(tableTexts(table)).toEqual(['Birds. Table with 2 rows and columns Species, Count. Species: Heron; Count: 7. Species: Owl; Count: 1.5.']);
    const parts = [...eachPart({ type: 'structured', id: 'd', metadata: {}, sections: [{ text: 'Intro.' }], tables: [table] })];
    expect(parts.map((p) => p.tableId)).toEqual([undefined, 'table_1']);
  });
  it('splits a long table into parts of about 2,000 characters without splitting a row', () => {
    const rows = Array.from({ length: 200 }, (_, i) => [{ text_value: `Species number ${i}` }, { int_value: i }]);
    const texts = tableTexts({ ...table, data: { ...table.data, rows } });
    expect(texts.length).toBeGreaterThan(3);
    expect(texts.every((t) => t.length <= 2000)).toBe(true);
    expect(texts.join(' ').match(/Species: Species number \d+; Count: \d+\./g)).toHaveLength(200);
  });
});

describe('filters against filter attributes', () => {
  const attrs = [
    { name: 'year', level: 'document' as const, indexed: true, type: 'integer' as const },
    { name: 'tags', level: 'document' as const, indexed: true, type: 'list[text]' as const },
    { name: 'lang', level: 'part' as const, indexed: true, type: 'text' as const },
  ];
  const year = { level: 'doc' as const, name: 'year' };
  it('accepts declared attributes at their level with literals of their type', () => {
    expect(filterProblems({ kind: 'and', items: [{ kind: 'cmp', field: year, op: '>', value: 2020 }, { kind: 'like', field: { level: 'part', name: 'lang' }, pattern: 'e%' }] }, attrs)).toEqual([]);
    expect(filterProblems({ kind: 'in', field: { level: 'doc', name: 'tags' }, values: ['a', 'b'] }, attrs)).toEqual([]);
  });
  it('names undeclared attributes, wrong levels, wrong literal types, LIKE on non-text, and levels not allowed here', () => {
    expect(filterProblems({ kind: 'cmp', field: { level: 'doc', name: 'lang' }, op: '=', value: 'x' }, attrs)[0]).toMatch(/doc\.lang is not a filter attribute/);
    expect(filterProblems({ kind: 'cmp', field: year, op: '=', value: 2020.5 }, attrs)[0]).toMatch(/integer/);
    expect(filterProblems({ kind: 'like', field: year, pattern: '20%' }, attrs)[0]).toMatch(/LIKE applies to text/);
    expect(filterProblems({ kind: 'is_null', field: { level: 'part', name: 'lang' }, negated: false }, attrs, ['doc'])[0]).toMatch(/only doc\. fields/);
  });
});

describe('job decisions', () => {
  const request = { type: 'bulk_update_document_metadata' as const, documentIds: ['a'], metadata: { x: 1 }, strategy: 'merge' as const };
  const queued = decideQueueJob({ status: 'absent' }, { jobId: 'job_1', corpusKey: 'k', corpusId: 'crp_1', request, total: 1 }, now);
  it('goes queued → started → progressed → completed, each step once', () => {
    const started = decideStartJob(givenEvents(jobFold, queued).state, 'job_1', now);
    expect(started).toHaveLength(1);
    expect(decideStartJob(givenEvents(jobFold, [...queued, ...started]).state, 'job_1', now)).toEqual([]);
    const counts = { processed: 1, updated: 1, skipped: 0, failed: 0 };
    const progressed = decideJobProgress(givenEvents(jobFold, [...queued, ...started]).state, 'job_1', counts, 1);
    const s = givenEvents<ReturnType<typeof jobFold.evolve>, JobEvent>(jobFold, [...queued, ...started, ...progressed]).state;
    expect(s).toMatchObject({ status: 'started', counts, cursor: 1 });
    const done = decideFinishJob(s, 'job_1', { counts }, now);
    expect(done[0].type).toBe('JobCompleted');
    expect(decideFinishJob(givenEvents(jobFold, [...queued, ...started, ...progressed, ...done]).state, 'job_1', { counts }, now)).toEqual([]);
    expect(decideFinishJob(s, 'job_1', { counts: NO_COUNTS, failure: 'corpus deleted' }, now)[0]).toMatchObject({ type: 'JobFailed', data: { reason: 'corpus deleted' } });
  });
  it('refuses a second JobQueued on the same stream', () => {
    givenEvents(jobFold, queued).when((st) => decideQueueJob(st, { jobId: 'job_1', corpusKey: 'k', corpusId: 'crp_1', request }, now)).thenFails({ kind: 'conflict' });
  });
});
