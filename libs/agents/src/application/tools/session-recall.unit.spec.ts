import type { Encoder, EncoderRegistry } from '@lib/encoders';
import type { SearchHit, SearchIndex, SearchRequest } from '@lib/platform';
import type { ToolContext } from '@lib/tools';
import type { RecallScopes } from '../recall/recall-scope';
import { SessionRecallTool } from './session-recall';

const hit: SearchHit = { documentId: 'aev_1', seq: 0, text: 'My cat is called Mittens.', partMetadata: { event_id: 'aev_1', role: 'user', created_at: '2026-12-03T00:00:00.000Z' }, documentMetadata: { session_key: 'pets', hidden: false }, score: 0.5 };

/** The index's requests, answered with one hit; a search by meaning fails when `vectorsFail`. */
function fakes(vectorsFail = false) {
  const requests: SearchRequest[] = [];
  const index = {
    search: async (_index: string, request: SearchRequest) => {
      requests.push(request);
      if (vectorsFail && request.mode !== 'lexical') throw new Error('Vector dimension mismatch');
      return [hit];
    },
  } as unknown as SearchIndex;
  const scopes = { of: async () => ({ agentId: 'agt_1', currentSessionKey: 'now' }) } as unknown as RecallScopes;
  const encoder: Encoder = { name: 'e', dimensions: 2, lexicalUnit: 100, encode: async (texts) => texts.map(() => new Float32Array([0.6, 0.8])) };
  const registry = { resolve: () => encoder } as unknown as EncoderRegistry;
  return { requests, tool: new SessionRecallTool(index, scopes, registry), lexicalOnly: new SessionRecallTool(index, scopes) };
}
const ctx = { agentKey: 'a', sessionKey: 'now' } as unknown as ToolContext;

describe('session_recall ranking', () => {
  it('asks for hybrid by default, the vector side weighted 1 − w(0.025) with the encoder\'s unit', async () => {
    const { requests, tool } = fakes();
    await tool.run({ type: 'session_recall' }, { query: 'kitten' }, ctx);
    expect(requests[0]).toMatchObject({ mode: 'hybrid', text: 'kitten', vector: [expect.closeTo(0.6, 5), expect.closeTo(0.8, 5)] });
    expect(requests[0].alpha).toBeCloseTo(1 - (0.025 * 100) / (0.975 + 0.025 * 100), 6);
  });

  it('ranks by words only at lexical_interpolation 1 or without an encoder, by meaning only at 0', async () => {
    const a = fakes();
    await a.tool.run({ type: 'session_recall', lexical_interpolation: 1 }, { query: 'cat' }, ctx);
    await a.lexicalOnly.run({ type: 'session_recall' }, { query: 'cat' }, ctx);
    await a.tool.run({ type: 'session_recall', lexical_interpolation: 0 }, { query: 'cat' }, ctx);
    expect(a.requests.map((r) => [r.mode, r.vector === undefined])).toEqual([['lexical', true], ['lexical', true], ['vector', false]]);
  });

  it('falls back to words, and says so, when the search by meaning fails (vectors of another encoder)', async () => {
    const { requests, tool } = fakes(true);
    const out = await tool.run({ type: 'session_recall' }, { query: 'cat' }, ctx);
    expect(requests.map((r) => r.mode)).toEqual(['hybrid', 'lexical']);
    expect(out.error).toBe(false);
    expect(out.output).toMatchObject({ results: [{ event_id: 'aev_1', session_key: 'pets' }], note: expect.stringMatching(/^ranked by words only: .*dimension mismatch/) });
  });
});
