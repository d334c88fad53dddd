import { QUERY_HISTORY } from '@lib/retrieval/read-models';
import { EventLog, given, onceAndTwice } from '@lib/testing';
import { queryHistoryProjection } from './query-history.projection';

describe('query history projection', () => {
  const log = new EventLog();
  const record = (queryId: string, extra: Record<string, unknown> = {}) => ({
    queryId,
    request: { query: 'otters?', search: { corpora: [{ corpus_key: 'sea' }] } },
    query: 'otters?',
    corpusKeys: ['sea', 'land'],
    results: [{ documentId: 'd1', corpusKey: 'sea', partIndex: 0, requestCorporaIndex: 0, score: 0.5 }],
    spans: [{ type: 'search', startedAt: '2026-01-01T00:00:00.000Z', latencyMillis: 3 }],
    startedAt: '2026-01-01T00:00:00.000Z',
    latencyMillis: 7,
    ...extra,
  });
  log.append('query-qry_1', 'QueryHistoryRecorded', record('qry_1'));
  log.append('query-qry_2', 'QueryHistoryRecorded', record('qry_2', { chatId: 'cht_1', turnId: 'trn_1', generation: { prompt: '[]', answer: 'They float.' }, factualConsistencyScore: 0.8 }));

  it('keeps one summary row per query: its first corpus, all corpora, the answer and score', async () => {
    const h = await given(log.events).project(queryHistoryProjection);
    expect(await h.reads.get(QUERY_HISTORY, 'qry_1')).toEqual({ id: 'qry_1', query: 'otters?', corpus_key: 'sea', corpus_keys: ['sea', 'land'], started_at: '2026-01-01T00:00:00.000Z', latency_millis: 7 });
    expect(await h.reads.get(QUERY_HISTORY, 'qry_2')).toMatchObject({ chat_id: 'cht_1', generation: 'They float.', factual_consistency_score: 0.8 });
    h.close();
  });

  it('applying every event twice changes nothing', async () => {
    const { once, twice } = await onceAndTwice(queryHistoryProjection, log.events);
    expect(once).toMatchObject({ [QUERY_HISTORY]: [{ id: 'qry_1' }, { id: 'qry_2' }] });
    expect(twice).toEqual(once);
  });
});
