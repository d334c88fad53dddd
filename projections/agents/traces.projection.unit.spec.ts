import { TRACE_PARTS, TRACES, traceIdOf, traceSpans, type TracePartRow, type TraceRow } from '@lib/agents';
import { EventLog, given, onceAndTwice } from '@lib/testing';
import { tracesProjection } from './traces.projection';

describe('agent traces projection', () => {
  const stream = 'session-agt_1.s1';
  const at = (s: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, s)).toISOString();
  const log = new EventLog();
  log.append(stream, 'SessionCreated', { agentId: 'agt_1', agentKey: 'a', sessionKey: 's1', name: 's1', metadata: {}, enabled: true, ttiMinutes: 0, createdAt: at(0) });
  log.append(stream, 'SessionInputReceived', { eventId: 'aev_in', messages: [{ type: 'text', content: 'hi' }], step: 'main', createdAt: at(0) });
  log.append(stream, 'SessionTurnStarted', { turnId: 't1', step: 'main', holder: 'h', agentRevision: 0, createdAt: at(1) });
  log.append(stream, 'SessionToolCalled', { eventId: 'aev_c1', turnId: 't1', toolCallId: 'call_1', modelCallId: 'mc_1', toolConfigurationName: 'docs', toolName: 'corpora_search', toolInput: { query: 'q' }, arguments: '{"query":"q"}', step: 'main', createdAt: at(3) });
  log.append(stream, 'SessionToolReturned', { eventId: 'aev_r1', turnId: 't1', toolCallId: 'call_1', toolConfigurationName: 'docs', toolName: 'corpora_search', toolOutput: { error: 'down' }, error: true, step: 'main', createdAt: at(4) });
  log.append(stream, 'SessionAgentOutput', { eventId: 'aev_o1', turnId: 't1', content: 'done', step: 'main', createdAt: at(9) });
  log.append(stream, 'SessionTurnEnded', { turnId: 't1', outcome: 'answered', usage: { input_tokens: 10, output_tokens: 4 }, createdAt: at(10) });
  log.append(stream, 'SessionTurnStarted', { turnId: 't2', step: 'main', holder: 'h', agentRevision: 0, createdAt: at(20) });
  log.append(stream, 'SessionTurnEnded', { turnId: 't2', outcome: 'failed', usage: { input_tokens: 0, output_tokens: 0 }, error: 'LLM "m" failed: 500', createdAt: at(22) });
  log.append('session-agt_2.s9', 'SessionCreated', { agentId: 'agt_2', agentKey: 'b', sessionKey: 's9', name: 's9', metadata: {}, enabled: true, ttiMinutes: 0, createdAt: at(0) });
  log.append('session-agt_2.s9', 'SessionTurnStarted', { turnId: 't9', step: 'main', holder: 'h', agentRevision: 0, createdAt: at(1) });
  log.append('agent-b', 'AgentDeleted', { agentId: 'agt_2', agentKey: 'b', deletedAt: at(2) });

  it('keeps a trace per turn and what each event recorded, and assembles spans with times and links from them', async () => {
    const harness = await given(log.events).project(tracesProjection);
    const t1 = (await harness.reads.get<TraceRow>(TRACES, traceIdOf(stream, 't1')))!;
    expect(t1).toMatchObject({ agent_id: 'agt_1', session_key: 's1', ended: true, status: 'ok', input_tokens: 10, output_tokens: 4, ops: { execute_tool: true, chat: true, output: true }, tool_errors: { execution_error: true } });
    const t2 = (await harness.reads.get<TraceRow>(TRACES, traceIdOf(stream, 't2')))!;
    expect(t2).toMatchObject({ status: 'error', error_types: { llm_generation_error: true } });
    expect(await harness.reads.get(TRACES, traceIdOf('session-agt_2.s9', 't9'))).toBeUndefined();
    const parts = (await harness.reads.find<TracePartRow>(TRACE_PARTS, { where: [{ field: 'trace_id', op: 'eq', value: t1.id }], sort: { field: 'seq', direction: 'asc' }, limit: 100 })).items;
    const spans = traceSpans(t1, parts, { depth: 0 }, false);
    expect(spans.map((s) => [s.operation, s.started_at, s.duration_ms, s.status])).toEqual([
      ['invoke_agent', at(1), 9000, 'ok'],
      ['chat', at(1), 2000, 'ok'],
      ['execute_tool', at(3), 1000, 'error'],
      ['chat', at(4), 5000, 'ok'],
      ['output', at(9), 0, 'ok'],
    ]);
    expect(spans[2]).toMatchObject({ parent_span_id: spans[1].span_id, error_message: 'down' });
    harness.close();
  });

  it('gives every trace and span the same id on a rebuild, and applying every event twice changes nothing', async () => {
    const { once, twice } = await onceAndTwice(tracesProjection, log.events);
    expect(twice).toEqual(once);
    const rebuilt = await onceAndTwice(tracesProjection, log.events);
    expect(rebuilt.once).toEqual(once);
    expect(once).toMatchObject({ [TRACES]: expect.arrayContaining([expect.objectContaining({ id: traceIdOf(stream, 't1') })]) });
  });
});
