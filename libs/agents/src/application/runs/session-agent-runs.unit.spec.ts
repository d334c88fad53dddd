import type { CommandContext } from '@lib/platform';
import type { Sessions } from '../sessions/sessions';
import type { AgentRuns } from './agent-runs.port';
import { SessionAgentRuns } from './session-agent-runs';

/** The port passes each call to the sessions or their inputs unchanged, and hands back what they answer. */
describe('SessionAgentRuns', () => {
  const ctx: CommandContext = { actor: { type: 'system', id: 't' }, requestId: 'r', commandId: 'c', now: new Date(0) };
  const calls: unknown[][] = [];
  const sessions = {
    create: async (...a: unknown[]) => (calls.push(['create', ...a]), { key: 's' }),
    exists: async (...a: unknown[]) => (calls.push(['exists', ...a]), {}),
    active: async (...a: unknown[]) => (calls.push(['active', ...a]), { streamId: 'session-x' }),
    events: async (...a: unknown[]) => (calls.push(['events', ...a]), { page: [] }),
  } as unknown as Sessions;
  const inputs: Pick<AgentRuns, 'input' | 'outstanding'> = {
    input: async (...a: unknown[]) => (calls.push(['input', ...a]), { events: [], outcome: 'answered' }),
    outstanding: async (...a: unknown[]) => (calls.push(['outstanding', ...a]), []),
  };
  const runs = new SessionAgentRuns(sessions, inputs);

  it('creates, finds, reads and sends through the sessions and their inputs', async () => {
    const signal = new AbortController().signal;
    expect(await runs.create('a', { key: 's' }, ctx)).toEqual({ key: 's' });
    expect(await runs.exists('a', 's')).toEqual({});
    expect(await runs.input('a', 's', { type: 'interrupt' }, ctx, undefined, true, signal)).toEqual({ events: [], outcome: 'answered' });
    expect(await runs.outstanding('a', 's')).toEqual([]);
    expect(await runs.active('a', 's')).toEqual({ streamId: 'session-x' });
    expect(await runs.events('a', 's', { limit: 1, offset: 0, includeHidden: true })).toEqual({ page: [] });
    expect(calls).toEqual([
      ['create', 'a', { key: 's' }, ctx],
      ['exists', 'a', 's'],
      ['input', 'a', 's', { type: 'interrupt' }, ctx, undefined, true, signal],
      ['outstanding', 'a', 's'],
      ['active', 'a', 's'],
      ['events', 'a', 's', { limit: 1, offset: 0, includeHidden: true }],
    ]);
  });
});
