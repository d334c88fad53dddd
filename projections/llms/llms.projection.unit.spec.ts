import { LLMS } from '@lib/llms/read-models';
import { EventLog, given, onceAndTwice } from '@lib/testing';
import { llmsProjection } from './llms.projection';

describe('llms projection', () => {
  const log = new EventLog();
  const settings = { type: 'openai-compatible', model: 'm', uri: 'http://x/v1', description: '', headers: {}, idleTimeoutSeconds: null, capabilities: {}, quota: null, enabled: true, auth: null };
  log.append('llm-a', 'LlmCreated', { llmId: 'llm_1', name: 'a', settings, createdAt: '2026-01-01T00:00:00.000Z' });
  log.append('llm-a', 'LlmUpdated', { llmId: 'llm_1', name: 'a', changes: { idleTimeoutSeconds: 30, quota: { requests_per_second: 2 } }, updatedAt: '2026-01-02T00:00:00.000Z' });
  log.append('llm-b', 'LlmCreated', { llmId: 'llm_2', name: 'b', settings, createdAt: '2026-01-01T00:00:00.000Z' });
  log.append('llm-b', 'LlmDeleted', { llmId: 'llm_2', name: 'b', deletedAt: '2026-01-03T00:00:00.000Z' });

  it('keeps one row per model in the API names, drops deleted ones, and replays to the same state', async () => {
    const harness = await given(log.events).project(llmsProjection);
    const row = await harness.reads.get(LLMS, 'llm_1');
    expect(row).toMatchObject({ name: 'a', idle_timeout_seconds: 30, llm_quota: { requests_per_second: 2 }, updated_at: '2026-01-02T00:00:00.000Z', position: 2 });
    expect(await harness.reads.get(LLMS, 'llm_2')).toBeUndefined();
    await harness.replay(log.events.slice(1));
    expect(await harness.reads.get(LLMS, 'llm_1')).toEqual(row);
    expect(await harness.reads.get(LLMS, 'llm_2')).toBeUndefined();
    harness.close();
  });

  it('applying every event twice changes nothing', async () => {
    const { once, twice } = await onceAndTwice(llmsProjection, log.events);
    expect(once).toMatchObject({ [LLMS]: [{ id: 'llm_1', idle_timeout_seconds: 30 }] });
    expect(twice).toEqual(once);
  });
});
