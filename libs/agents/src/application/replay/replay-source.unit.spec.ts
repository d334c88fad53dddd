import type { ToolDefinition } from '@lib/tools';
import type { RecordedTurn } from '../../domain/replay';
import type { ActiveSession } from '../../domain/session';
import { ReplayDiverged, TurnReplaySource } from './replay-source';

const usage = { input_tokens: 5, output_tokens: 2 };
const turn: RecordedTurn = {
  inputEventId: 'aev_in',
  trigger: { kind: 'message', messages: [{ type: 'text', content: 'hi' }], step: 'research' },
  agentRevision: 0,
  events: [],
  answers: [
    { step: 'research', content: '', toolCalls: [{ id: 'c1', name: 'docs', arguments: '{"q":"refunds"}' }], usage },
    { step: 'research', content: 'Refunds take 14 days.', toolCalls: [], usage },
    { step: 'wrapup', content: '14 days.', toolCalls: [], usage },
  ],
  toolOutputs: [{ toolCallId: 'c1', name: 'docs', arguments: '{"q":"refunds"}', output: { hits: ['14 days'] }, error: false }],
};
const tool = (name: string) => ({ type: 'function', function: { name, parameters: {} } }) as ToolDefinition;
const state = {} as ActiveSession;
const call = (step: string, tools: ToolDefinition[] = [tool('docs')], system = 'Answer.') => ({ step, messages: [{ role: 'system' as const, content: system }], tools, state });
const noSideEffects = () => false;
const sideEffects = (t: { type: string }) => t.type === 'glossary_put_entries';

async function divergence(p: Promise<unknown>) {
  try {
    await p;
  } catch (e) {
    if (e instanceof ReplayDiverged) return e.divergence;
    throw e;
  }
  throw new Error('did not diverge');
}

describe('the replay source, recorded mode', () => {
  const recorded = (baseline?: ConstructorParameters<typeof TurnReplaySource>[3]) => new TurnReplaySource(turn, { mode: 'recorded', allowSideEffects: false }, noSideEffects, baseline);

  it('answers each model call with the next recorded answer and each tool call with its recorded output', async () => {
    const source = recorded();
    expect(await source.answer(call('research'))).toEqual({ content: '', toolCalls: [{ id: 'c1', name: 'docs', arguments: '{"q":"refunds"}' }], usage });
    expect(source.toolOutput({ id: 'c1', name: 'docs', arguments: '{"q":"refunds"}', tool: { type: 'corpora_search' } })).toEqual({ output: { hits: ['14 days'] }, error: false });
    expect((await source.answer(call('research')))?.content).toBe('Refunds take 14 days.');
    expect((await source.answer(call('wrapup')))?.content).toBe('14 days.');
    expect(source.leftover()).toBeUndefined();
  });

  it('diverges on another step, on a tool the step does not offer, and when asked for more calls than were made', async () => {
    expect(await divergence(recorded().answer(call('wrapup')))).toMatchObject({ kind: 'step', model_call: 0 });
    expect(await divergence(recorded().answer(call('research', [tool('faq')])))).toMatchObject({ kind: 'tool_not_offered', detail: expect.stringContaining('"docs"') });
    const source = recorded();
    for (const step of ['research', 'research', 'wrapup']) await source.answer(call(step));
    expect(await divergence(source.answer(call('wrapup')))).toMatchObject({ kind: 'more_model_calls', model_call: 3 });
    expect(source.divergence?.kind).toBe('more_model_calls');
  });

  it('says when the turn ended with recorded answers left', async () => {
    const source = recorded();
    await source.answer(call('research'));
    expect(source.leftover()).toMatchObject({ kind: 'fewer_model_calls', model_call: 1 });
  });

  it('compares the prompt and the tools with what the original revision builds, when given one', async () => {
    const same = recorded(async () => ({ messages: [{ role: 'system', content: 'Answer.' }], tools: [tool('docs')] }));
    expect((await same.answer(call('research')))?.toolCalls).toHaveLength(1);
    const prompt = recorded(async () => ({ messages: [{ role: 'system', content: 'Answer briefly.' }], tools: [tool('docs')] }));
    expect(await divergence(prompt.answer(call('research')))).toMatchObject({ kind: 'prompt' });
    const tools = recorded(async () => ({ messages: [{ role: 'system', content: 'Answer.' }], tools: [tool('docs'), tool('faq')] }));
    expect(await divergence(tools.answer(call('research')))).toMatchObject({ kind: 'tools_offered', detail: expect.stringContaining('docs, faq → docs') });
  });
});

describe('the replay source, live modes', () => {
  const learn = { type: 'glossary_put_entries' as const };

  it('live_model: calls the model, reuses a recorded output once for the same tool and arguments, runs others', async () => {
    const source = new TurnReplaySource(turn, { mode: 'live_model', allowSideEffects: false }, sideEffects);
    expect(await source.answer(call('research'))).toBeUndefined();
    expect(source.toolOutput({ id: 'z', name: 'docs', arguments: '{ "q" : "refunds" }', tool: { type: 'corpora_search' } })).toEqual({ output: { hits: ['14 days'] }, error: false });
    expect(source.toolOutput({ id: 'y', name: 'docs', arguments: '{"q":"refunds"}', tool: { type: 'corpora_search' } })).toBeUndefined();
    expect(source.toolOutput({ id: 'x', name: 'faq', arguments: '{"q":"refunds"}', tool: { type: 'corpora_search' } })).toBeUndefined();
    expect(source.leftover()).toBeUndefined();
  });

  it('refuses side effects with an error output unless allowed; live reuses nothing', () => {
    const refused = new TurnReplaySource(turn, { mode: 'live', allowSideEffects: false }, sideEffects).toolOutput({ id: 'g', name: 'learn', arguments: '{}', tool: learn });
    expect(refused).toEqual({ output: { error: expect.stringMatching(/^Refused in a replay: tool "learn" \(glossary_put_entries\) has side effects/) }, error: true });
    expect(new TurnReplaySource(turn, { mode: 'live', allowSideEffects: true }, sideEffects).toolOutput({ id: 'g', name: 'learn', arguments: '{}', tool: learn })).toBeUndefined();
    expect(new TurnReplaySource(turn, { mode: 'live', allowSideEffects: false }, sideEffects).toolOutput({ id: 'c1', name: 'docs', arguments: '{"q":"refunds"}', tool: { type: 'corpora_search' } })).toBeUndefined();
  });
});
