import { getEventListeners } from 'node:events';
import { ChatCompletions } from './chat-completions';

/** The model layer with a model that answers at once: what a caller's signal holds after each call. */
function service() {
  const row = { id: 'llm_1', name: 'm', enabled: true, llm_quota: undefined, capabilities: {} };
  const answer = { id: 'c', object: 'chat.completion', created: 0, model: 'm', choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }] };
  const upstream = {
    model: 'm',
    idleTimeoutSeconds: 30,
    secrets: [],
    complete: async () => answer,
    stream: async () =>
      (async function* () {
        yield { chunk: { id: 'c', object: 'chat.completion.chunk', created: 0, model: 'm', choices: [{ index: 0, delta: { content: 'ok' } }] } };
      })(),
  };
  const quotas = { admit: async () => undefined, record: async () => undefined };
  return new ChatCompletions({ resolve: async () => row } as never, { forRow: () => upstream } as never, quotas as never);
}

const ctx = { actor: { type: 'system', id: 'test' } } as never;
const request = { model: 'm', messages: [{ role: 'user' as const, content: 'hi' }] };

describe('ChatCompletions and the caller signal', () => {
  it('stops following the signal once a call is over: a turn making 30 calls on one signal leaves no listener', async () => {
    const chat = service();
    const turn = new AbortController();
    for (let i = 0; i < 30; i++) await chat.complete(request, ctx, turn.signal);
    for (let i = 0; i < 5; i++) for await (const _ of await chat.stream({ ...request, stream: true }, ctx, turn.signal)) void _;
    // Each call added one; before the fix 35 were left (Node warns past 10: MaxListenersExceededWarning).
    expect(getEventListeners(turn.signal, 'abort')).toHaveLength(0);
  });

  it('still cancels a running call when the signal fires', async () => {
    const chat = service();
    const turn = new AbortController();
    let seen: AbortSignal | undefined;
    (chat as unknown as { providers: { forRow: () => unknown } }).providers.forRow = () => ({
      model: 'm',
      idleTimeoutSeconds: 30,
      secrets: [],
      classify: undefined,
      complete: (_b: unknown, s: AbortSignal) => ((seen = s), new Promise((_r, reject) => s.addEventListener('abort', () => reject(new Error('aborted'))))),
    });
    const pending = chat.complete(request, ctx, turn.signal).catch((e: Error) => e);
    await new Promise((r) => setImmediate(r));
    turn.abort();
    expect(await pending).toBeInstanceOf(Error);
    expect(seen?.aborted).toBe(true);
  });
});
