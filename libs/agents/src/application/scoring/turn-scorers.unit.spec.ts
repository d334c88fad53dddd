import { DomainError } from '@lib/platform';
import type { SessionEvent } from '../../domain/session-events';
import { TurnScorers } from './turn-scorers';

const at = '2026-12-02T09:00:00.000Z';
const ctx = { actor: { type: 'system', id: 'test' }, requestId: 'r', commandId: 'c', now: new Date(at) } as never;
const b = (n: number) => ({ eventId: `aev_${n}`, turnId: 't1', createdAt: at });

/** A session whose turn t1 searched, then answered `answer` (text or structured) in step `step`. */
function session(opts: { answer?: string; structured?: unknown; step?: string; calls?: Record<string, unknown>[]; retrieved?: string[] }): SessionEvent[] {
  const step = opts.step ?? 'main';
  const calls = opts.calls ?? [{ q: 'x' }];
  return [
    { type: 'SessionCreated', data: { agentId: 'agt_1', agentKey: 'ag', sessionKey: 's1', name: 's1', metadata: {}, enabled: true, ttiMinutes: 0, createdAt: at } },
    { type: 'SessionInputReceived', data: { eventId: 'aev_0', createdAt: at, messages: [{ type: 'text', content: 'where?' }], step } },
    { type: 'SessionTurnStarted', data: { turnId: 't1', step, holder: 'h', agentRevision: 3, createdAt: at } },
    ...calls.flatMap((args, i): SessionEvent[] => [
      { type: 'SessionToolCalled', data: { ...b(10 + i), toolCallId: `c${i}`, modelCallId: 'm', toolConfigurationName: 'search', toolName: 'corpora_search', toolInput: args, arguments: JSON.stringify(args), step } },
      { type: 'SessionToolReturned', data: { ...b(20 + i), toolCallId: `c${i}`, toolConfigurationName: 'search', toolName: 'corpora_search', toolOutput: { search_results: (opts.retrieved ?? []).map((text) => ({ text })) }, error: false, step } },
    ]),
    opts.structured !== undefined
      ? { type: 'SessionStructuredOutput', data: { ...b(30), schemaName: 'Where', content: opts.structured, step } }
      : { type: 'SessionAgentOutput', data: { ...b(30), content: opts.answer ?? 'In the drawer.', step } },
    { type: 'SessionTurnEnded', data: { turnId: 't1', outcome: 'answered', usage: { input_tokens: 1, output_tokens: 1 }, createdAt: at } },
  ];
}

function scorers(streams: Record<string, SessionEvent[]>, fakes: { judge?: string; fcs?: (req: { generatedText: string; sourceTexts: readonly string[] }) => Promise<{ score: number; scorer: string }>; lambda?: Record<string, unknown> } = {}) {
  const judged: { model: string; messages: { content: string }[] }[] = [];
  const lambdaInputs: Record<string, unknown>[] = [];
  const events = { readStream: async (id: string) => streams[id] ?? [] };
  const reads = { get: async () => undefined, find: async (_c: string, q: { where: { value: string }[] }) => ({ items: q.where[0].value === 'judge' ? [{ name: 'judge' }] : [] }) };
  const revisions = {
    configAt: async (agentKey: string, revision: number) => {
      expect([agentKey, revision]).toEqual(['ag', 3]);
      return { steps: { main: { output_parser: { type: 'default' } }, answer: { output_parser: { type: 'structured', json_schema: { name: 'Where', schema: { type: 'object', properties: { place: { type: 'string' } }, required: ['place'] } } } } } };
    },
  };
  const fcs = { evaluate: fakes.fcs ?? (async () => { throw new DomainError('unavailable', 'fcs.not_configured', 'Factual consistency scoring has no scorer configured'); }) };
  const chat = {
    complete: async (req: { model: string; messages: { content: string }[] }) => {
      judged.push(req);
      return { choices: [{ message: { content: fakes.judge ?? '{"score": 0.8, "reason": "fine"}' } }] };
    },
  };
  const userTools = {
    get: async (id: string) => {
      if (id !== 'tool_lambda') throw new DomainError('not_found', 'tool.not_found', 'no');
      return { type: 'lambda' };
    },
    test: async (_id: string, input: Record<string, unknown>) => {
      lambdaInputs.push(input);
      return fakes.lambda ?? { type: 'success', output: { score: 0.5, reason: 'half' } };
    },
  };
  return { scoring: new TurnScorers(events as never, reads as never, revisions as never, fcs as never, chat as never, userTools as never), judged, lambdaInputs };
}

const turn = { sessionStream: 'session-agt_1.s1', turnId: 't1' };
const baseline = { sessionStream: 'session-agt_1.s0', turnId: 't1' };

describe('turn scorers', () => {
  it('factual_consistency: the answer against the texts the turn retrieved; null without any', async () => {
    const seen: unknown[] = [];
    const { scoring } = scorers({ [turn.sessionStream]: session({ retrieved: ['The manual is in the drawer.'] }), [baseline.sessionStream]: session({}) }, { fcs: async (req) => (seen.push(req), { score: 0.9, scorer: 'hhem_v2.3' }) });
    expect(await scoring.score(turn, [{ type: 'factual_consistency' }], ctx)).toEqual([{ type: 'factual_consistency', score: 0.9, reason: 'judged by hhem_v2.3 against 1 retrieved texts' }]);
    expect(seen).toEqual([{ generatedText: 'In the drawer.', sourceTexts: ['The manual is in the drawer.'] }]);
    expect((await scoring.score(baseline, [{ type: 'factual_consistency' }], ctx))[0]).toMatchObject({ score: null, reason: 'the turn retrieved no texts to check the answer against' });
  });

  it('factual_consistency without a configured scorer is an error result, not a rejection', async () => {
    const { scoring } = scorers({ [turn.sessionStream]: session({ retrieved: ['t'] }) });
    expect(await scoring.score(turn, [{ type: 'factual_consistency' }, { type: 'same_tool_calls' }], ctx)).toEqual([
      { type: 'factual_consistency', score: null, error: 'Factual consistency scoring has no scorer configured' },
      { type: 'same_tool_calls', score: null, reason: 'no baseline turn to compare with' },
    ]);
  });

  it('llm_judge: the judge sees the rubric, input, calls and answer; its JSON score is the score', async () => {
    const { scoring, judged } = scorers({ [turn.sessionStream]: session({}) });
    expect(await scoring.score(turn, [{ type: 'llm_judge', llm_name: 'judge', rubric: 'Is it precise?' }], ctx)).toEqual([{ type: 'llm_judge', score: 0.8, reason: 'fine' }]);
    expect(judged[0].model).toBe('judge');
    expect(judged[0].messages[1].content).toBe('RUBRIC:\nIs it precise?\n\nINPUT:\nwhere?\n\nTOOL CALLS:\nsearch {"q":"x"}\n\nANSWER:\nIn the drawer.');
  });

  it('llm_judge: a malformed answer is a recorded scorer error', async () => {
    const { scoring } = scorers({ [turn.sessionStream]: session({}) }, { judge: 'Score: 8/10' });
    const [r] = await scoring.score(turn, [{ type: 'llm_judge', llm_name: 'judge', rubric: 'r' }], ctx);
    expect(r).toMatchObject({ type: 'llm_judge', score: null });
    expect(r.error).toContain('llm_judge "judge": the judge did not answer a JSON object');
  });

  it('same_tool_calls: the fraction of the baseline calls the turn made', async () => {
    const { scoring } = scorers({ [turn.sessionStream]: session({ calls: [{ q: 'x' }] }), [baseline.sessionStream]: session({ calls: [{ q: 'x' }, { q: 'y' }] }) });
    expect(await scoring.score(turn, [{ type: 'same_tool_calls' }], ctx, baseline)).toEqual([{ type: 'same_tool_calls', score: 0.5, reason: "1 of the baseline's 2 tool calls made" }]);
  });

  it("structured_output_valid: against the step's schema at the turn's revision; null for a step asking none", async () => {
    const good = scorers({ [turn.sessionStream]: session({ step: 'answer', structured: { place: 'drawer' } }) }).scoring;
    expect((await good.score(turn, [{ type: 'structured_output_valid' }], ctx))[0]).toEqual({ type: 'structured_output_valid', score: 1, reason: 'matches Where' });
    const bad = scorers({ [turn.sessionStream]: session({ step: 'answer', structured: { room: 1 } }) }).scoring;
    expect((await bad.score(turn, [{ type: 'structured_output_valid' }], ctx))[0]).toMatchObject({ score: 0, reason: "(root) must have required property 'place'" });
    const none = scorers({ [turn.sessionStream]: session({ step: 'answer' }) }).scoring;
    expect((await none.score(turn, [{ type: 'structured_output_valid' }], ctx))[0]).toMatchObject({ score: 0, reason: 'the step asks a structured output and the turn gave none' });
    const text = scorers({ [turn.sessionStream]: session({}) }).scoring;
    expect((await text.score(turn, [{ type: 'structured_output_valid' }], ctx))[0]).toMatchObject({ score: null, reason: 'step "main" asks no structured output' });
  });

  it('lambda: runs the tool with the turn and the baseline, reads its score; a bad output or a failed run is an error', async () => {
    const ok = scorers({ [turn.sessionStream]: session({}), [baseline.sessionStream]: session({ answer: 'Upstairs.' }) });
    expect(await ok.scoring.score(turn, [{ type: 'lambda', tool_id: 'tool_lambda' }], ctx, baseline)).toEqual([{ type: 'lambda', score: 0.5, reason: 'half' }]);
    expect(ok.lambdaInputs[0]).toMatchObject({ turn: { input: 'where?', answer: 'In the drawer.', tool_calls: [{ name: 'search', arguments: { q: 'x' } }] }, baseline: { answer: 'Upstairs.' } });
    const wrong = scorers({ [turn.sessionStream]: session({}) }, { lambda: { type: 'success', output: { result: 'yes' } } });
    expect((await wrong.scoring.score(turn, [{ type: 'lambda', tool_id: 'tool_lambda' }], ctx))[0]).toEqual({ type: 'lambda', score: null, error: 'lambda "tool_lambda" answered no "score" between 0 and 1' });
    const failed = scorers({ [turn.sessionStream]: session({}) }, { lambda: { type: 'error', error: { message: 'boom' } } });
    expect((await failed.scoring.score(turn, [{ type: 'lambda', tool_id: 'tool_lambda' }], ctx))[0]).toEqual({ type: 'lambda', score: null, error: 'lambda "tool_lambda" failed: "boom"' });
  });

  it('a turn that has not ended is refused, with every scorer', async () => {
    const { scoring } = scorers({ [turn.sessionStream]: session({}).slice(0, -1) });
    await expect(scoring.score(turn, [{ type: 'same_tool_calls' }], ctx)).rejects.toMatchObject({ code: 'scoring.turn_not_found' });
  });

  it('checks a list: its shape, then that named models and lambda tools exist', async () => {
    const { scoring } = scorers({});
    expect(await scoring.problem([{ type: 'llm_judge', llm_name: 'judge', rubric: 'r' }, { type: 'lambda', tool_id: 'tool_lambda' }])).toBeUndefined();
    expect(await scoring.problem([{ type: 'llm_judge', llm_name: 'nobody', rubric: 'r' }])).toEqual(['scorers[0].llm_name', 'no LLM "nobody" (GET /v2/llms)']);
    expect(await scoring.problem([{ type: 'same_tool_calls' }, { type: 'lambda', tool_id: 'tool_gone' }], 'body.scorers')).toEqual(['body.scorers[1].tool_id', 'no lambda tool "tool_gone" (GET /v2/tools)']);
    expect(await scoring.problem([{ type: 'rouge' }])).toEqual(['scorers[0].type', 'must be one of factual_consistency, llm_judge, same_tool_calls, structured_output_valid, lambda']);
  });
});
