import { blockState, decideMemoryEdit, decideSessionRevert, MemoryAuthor, memoryBlocks, MemoryChange, memoryProblems, memoryPrompt, toolEdit } from './memory';
import { sessionFold } from './session';
import type { SessionEvent } from './session-events';

const now = new Date('2026-12-03T01:00:00Z');
const [facts, persona, tiny] = memoryBlocks({
  blocks: [
    { key: 'facts', scope: 'agent' },
    { key: 'persona', scope: 'agent', read_only: true, initial_value: 'I am Coach.' },
    { key: 'tiny', scope: 'session', limit_chars: 10, initial_value: 'abc' },
  ],
});
const tool = (session: string, n = 1): MemoryAuthor => ({ session_key: session, turn_id: `trn_${n}`, event_id: `aev_${n}` });
const operator: MemoryAuthor = { actor: { type: 'user', id: 'ada' } };

/** Applies edits one after the other, as the stream would hold them. */
function history(block = facts, ...edits: [Parameters<typeof decideMemoryEdit>[2], MemoryAuthor][]): MemoryChange[] {
  const out: MemoryChange[] = [];
  for (const [edit, by] of edits) {
    const { change } = decideMemoryEdit(block, out, edit, by, now, false);
    if (change) out.push(change);
  }
  return out;
}

describe('memory configuration', () => {
  it('fills the defaults: 2,000 characters, writable, empty', () => {
    expect(facts).toEqual({ key: 'facts', scope: 'agent', description: '', limit_chars: 2000, read_only: false, initial_value: '' });
  });

  it('names each bad field, and accepts a good configuration', () => {
    expect(memoryProblems({ blocks: [{ key: 'a', scope: 'agent' }] }, [])).toEqual({});
    expect(memoryProblems(undefined, [])).toEqual({});
    expect(memoryProblems({ blocks: {} }, [])).toEqual({ 'memory.blocks': 'must be an array of blocks' });
    expect(memoryProblems({ blocks: [], extra: 1 }, [])).toEqual({ 'memory.extra': expect.stringContaining('not a field') });
    expect(Object.keys(memoryProblems({ blocks: [{ key: 'x'.repeat(65), scope: 'agent' }, { key: 'b', scope: 'agent', read_only: 'yes' }, { key: 'c', scope: 'agent', initial_value: 5 }] }, []))).toEqual(['memory.blocks[0].key', 'memory.blocks[1].read_only', 'memory.blocks[2].initial_value']);
    expect(memoryProblems({ blocks: [{ key: 'a', scope: 'agent' }] }, ['memory_replace'])).toEqual({ 'tool_configurations.memory_replace': expect.stringContaining('built-in') });
    expect(memoryProblems({ blocks: [] }, ['memory_replace'])).toEqual({});
  });
});

describe('deciding an edit', () => {
  it('appends on a new line, replaces a unique text, and counts revisions from the initial value (0)', () => {
    const changes = history(facts, [{ operation: 'append', text: 'likes tea' }, tool('s1')], [{ operation: 'append', text: 'likes cake' }, tool('s1', 2)], [{ operation: 'replace', old_text: 'tea', new_text: 'rum' }, operator]);
    expect(changes.map((c) => [c.revision, c.operation, c.value])).toEqual([
      [1, 'append', 'likes tea'],
      [2, 'append', 'likes tea\nlikes cake'],
      [3, 'replace', 'likes rum\nlikes cake'],
    ]);
    expect(blockState(facts, [])).toEqual({ value: '', revision: 0 });
  });

  it('refuses what the model must be told: read-only, absent or repeated old_text, over the limit', () => {
    expect(decideMemoryEdit(persona, [], { operation: 'append', text: 'x' }, tool('s'), now, true).refusal?.message).toBe('memory block persona is read-only');
    // An operator may edit a read-only block: read-only binds the agent.
    expect(decideMemoryEdit(persona, [], { operation: 'put', value: 'I am Tutor.' }, operator, now, false).change?.value).toBe('I am Tutor.');
    const twice = history(facts, [{ operation: 'put', value: 'tea and tea' }, operator]);
    expect(decideMemoryEdit(facts, twice, { operation: 'replace', old_text: 'tea', new_text: 'x' }, tool('s'), now, true).refusal).toEqual({ field: 'old_text', message: expect.stringContaining('more than once') });
    expect(decideMemoryEdit(facts, twice, { operation: 'replace', old_text: 'rum', new_text: 'x' }, tool('s'), now, true).refusal?.field).toBe('old_text');
    expect(decideMemoryEdit(tiny, [], { operation: 'append', text: '12345678' }, tool('s'), now, true).refusal).toEqual({ field: 'text', message: 'memory block tiny would hold 12 characters, over its limit of 10' });
    expect(decideMemoryEdit(facts, [], { operation: 'revert', revision: 4 }, operator, now, false).refusal?.field).toBe('revision');
  });

  it('stores nothing for an edit that changes nothing', () => {
    expect(decideMemoryEdit(tiny, [], { operation: 'put', value: 'abc' }, operator, now, false)).toEqual({});
  });

  it('reverts to a revision, the initial value being revision 0', () => {
    const changes = history(tiny, [{ operation: 'put', value: 'new' }, operator]);
    expect(decideMemoryEdit(tiny, changes, { operation: 'revert', revision: 0 }, operator, now, false).change).toMatchObject({ revision: 2, operation: 'revert', value: 'abc', revertedTo: 0 });
  });
});

describe('reverting what a session taught', () => {
  it('goes back to the value before the session’s first change, in one change', () => {
    const changes = history(facts, [{ operation: 'put', value: 'base' }, operator], [{ operation: 'append', text: 'one' }, tool('s1')], [{ operation: 'append', text: 'two' }, tool('s1', 2)]);
    expect(decideSessionRevert(facts, changes, 's1', operator, now, false)).toEqual({ change: expect.objectContaining({ revision: 4, operation: 'revert', value: 'base', revertedTo: 1 }) });
    expect(decideSessionRevert(facts, changes, 's2', operator, now, false)).toEqual({});
  });

  it('refuses when someone changed the block after the session, unless forced; nothing when already back', () => {
    const changes = history(facts, [{ operation: 'append', text: 'one' }, tool('s1')], [{ operation: 'append', text: 'other' }, tool('s2')]);
    expect(decideSessionRevert(facts, changes, 's1', operator, now, false).conflict?.map((c) => c.revision)).toEqual([2]);
    const forced = decideSessionRevert(facts, changes, 's1', operator, now, true).change!;
    expect(forced).toMatchObject({ value: '', revertedTo: 0 });
    expect(decideSessionRevert(facts, [...changes, forced], 's1', operator, now, false)).toEqual({});
  });
});

describe('the prompt and the tools', () => {
  it('shows each block with its use of the limit, read-only ones marked', () => {
    const text = memoryPrompt([{ block: persona, value: 'I am Coach.' }]);
    expect(text).toContain('<memory_block key="persona" scope="agent" chars="11/2000" read_only="true">');
    expect(text).not.toContain('memory_replace');
    expect(memoryPrompt([])).toBe('');
  });

  it('reads a tool call’s arguments as an edit, or says what is wrong', () => {
    expect(toolEdit('memory_append', { block: 'facts', text: 'x' })).toEqual({ block: 'facts', edit: { operation: 'append', text: 'x' } });
    expect(toolEdit('memory_replace', { block: 'facts', old_text: 'x' }).refusal).toBe('old_text and new_text must be strings');
    expect(toolEdit('memory_append', { text: 'x' }).refusal).toBe('block must name a memory block');
  });
});

describe('a session’s own blocks', () => {
  it('are folded from its stream, and a fork carries them', () => {
    const created = (key: string): SessionEvent => ({ type: 'SessionCreated', data: { agentId: 'agt_1', agentKey: 'coach', sessionKey: key, name: key, metadata: {}, enabled: true, ttiMinutes: 0, createdAt: now.toISOString() } });
    const change = decideMemoryEdit(tiny, [], { operation: 'append', text: 'x' }, tool('s1'), now, true).change!;
    const parent = [created('s1'), { type: 'SessionMemoryChanged', data: change } as SessionEvent].reduce(sessionFold.evolve, sessionFold.initialState);
    expect(parent.status === 'active' && parent.memory).toEqual({ tiny: [change] });
    const fork = sessionFold.evolve(parent, created('s2'));
    expect(fork.status === 'active' && fork.memory?.tiny).toEqual([change]);
  });
});
