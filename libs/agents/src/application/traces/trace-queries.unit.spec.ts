import type { ReadStore } from '@lib/platform';
import { TraceQueries } from './trace-queries';

/** 3,000 ended traces of 1 ms, newest first, served 50 (or `limit`) at a time as the read store pages them. */
function traces(count: number) {
  const rows = Array.from({ length: count }, (_, i) => ({ id: `t${i}`, agent_id: 'agt_1', session_key: 's', ended: true, started_seq: count - i, started_ms: 0, ended_ms: 1, started_at: '', status: 'ok' }));
  let finds = 0;
  const reads = {
    find: async (_collection: unknown, query: { limit: number; pageKey?: string }) => {
      finds++;
      const from = query.pageKey ? Number(query.pageKey) : 0;
      const items = rows.slice(from, from + query.limit);
      return { items, nextPageKey: from + query.limit < rows.length ? String(from + query.limit) : undefined };
    },
    get: async () => undefined,
  } as unknown as ReadStore;
  return { reads, finds: () => finds };
}

describe('the trace list filtered by duration', () => {
  it('looks at a bounded number of traces per request: a bound nothing meets answers a short page that goes on', async () => {
    const store = traces(3000);
    const page = await new TraceQueries(store.reads).list({ minDurationMs: 10 }, '*', 10);
    expect(page.traces).toEqual([]);
    expect(page.metadata.page_key).toBeDefined();
    expect(store.finds()).toBe(40); // 2,000 rows, 50 a read
  });

  it('fills the page when enough traces meet the bound', async () => {
    const store = traces(3000);
    const page = await new TraceQueries(store.reads).list({ maxDurationMs: 10 }, '*', 10);
    expect(page.traces).toHaveLength(10);
    expect(store.finds()).toBe(2); // one page of traces, then their agents' keys
  });
});
