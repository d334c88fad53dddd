import { Inject, Injectable } from '@nestjs/common';
import { Clock, CLOCK, CommandContext, ConcurrencyError, conflict, EVENT_STORE, EventStore, invalid, notFound, streamId, toNewEvents } from '@lib/platform';
import { agentNotFound, type ActiveAgent } from '../../domain/agent';
import { blockState, decideMemoryEdit, decideSessionRevert, bySession, MemoryAuthor, MemoryBlock, memoryBlocks, memoryBlockView, MemoryChange, memoryChangeView, MemoryEdit, MemoryRefusal, MemoryScope } from '../../domain/memory';
import { requireSession, type ActiveSession } from '../../domain/session';
import { AgentWriter } from '../agent-writer';
import { SessionStore } from '../sessions/session-store';

/** A change of an agent-scoped or end-user-scoped block, in the block's own stream. */
export type MemoryEvent = { type: 'MemoryBlockChanged'; data: MemoryChange & { agentId: string; scope: 'agent' | 'end_user'; endUser?: string } };

/**
 * One stream per block and owner, keyed by the agent's incarnation id (an agent created again under its key starts
 * with no memory): `agent_memory-<agentId>.agent.<block>`, `agent_memory-<agentId>.end_user.<owner>.<block>`
 * (`streamId` escapes the owner, which an end user's token names).
 */
export const memoryStream = (agentId: string, block: string, endUser?: string): string => (endUser === undefined ? streamId('agent_memory', agentId, 'agent', block) : streamId('agent_memory', agentId, 'end_user', endUser, block));

/** Where a block lives: the agent's, or one end user's. */
export interface MemoryOwner {
  readonly scope: 'agent' | 'end_user';
  readonly endUser?: string;
}

/** A block written by many at once (turns, operators): each lost race re-reads the stream and decides again. */
const WRITE_ATTEMPTS = 10;

export const blockNotFound = (agentKey: string, key: string, where: string) => notFound('memory.block_not_found', `Agent "${agentKey}" has no ${where} memory block "${key}"`, key);

/**
 * Memory blocks of agents and end users (docs/agents.md "Memory"): read from and written to their streams; a
 * session's own blocks are in its stream (`SessionMemoryChanged`). Nothing is cached: the log is the state.
 */
@Injectable()
export class AgentMemory {
  constructor(
    @Inject(EVENT_STORE) private readonly store: EventStore,
    private readonly agents: AgentWriter,
    private readonly sessions: SessionStore,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  async agent(agentKey: string): Promise<ActiveAgent> {
    const state = await this.agents.state(agentKey);
    if (state.status === 'absent') throw agentNotFound(agentKey);
    return state;
  }

  /** The block of that key in that scope, or 404. */
  blockOf(agent: ActiveAgent, key: string, scope: MemoryScope): MemoryBlock {
    const block = memoryBlocks(agent.config.memory).find((b) => b.key === key);
    if (!block || block.scope !== scope) throw blockNotFound(agent.key, key, scope === 'agent' ? 'agent-scoped' : scope === 'end_user' ? 'end-user' : 'session');
    return block;
  }

  async changes(agent: ActiveAgent, block: string, owner: MemoryOwner): Promise<{ changes: MemoryChange[]; streamRevision: number }> {
    const events = await this.store.readStream(memoryStream(agent.agentId, block, owner.scope === 'end_user' ? owner.endUser : undefined));
    return { changes: events.filter((e) => e.type === 'MemoryBlockChanged').map((e) => changeOf(e.data as MemoryEvent['data'])), streamRevision: events.length ? events[events.length - 1].revision : -1 };
  }

  /** `GET …/memory`: the blocks of a scope with their values. */
  async list(agentKey: string, owner: MemoryOwner): Promise<Record<string, unknown>> {
    const agent = await this.agent(agentKey);
    const blocks = memoryBlocks(agent.config.memory).filter((b) => b.scope === owner.scope);
    return { blocks: await Promise.all(blocks.map(async (b) => memoryBlockView(b, blockState(b, (await this.changes(agent, b.key, owner)).changes), endUserField(owner)))) };
  }

  async get(agentKey: string, key: string, owner: MemoryOwner): Promise<Record<string, unknown>> {
    const agent = await this.agent(agentKey);
    const block = this.blockOf(agent, key, owner.scope);
    return memoryBlockView(block, blockState(block, (await this.changes(agent, key, owner)).changes), endUserField(owner));
  }

  /** `GET …/memory/{block}/history`: newest first, `limit` from `offset`. */
  async history(agentKey: string, key: string, owner: MemoryOwner, limit: number, offset: number): Promise<{ changes: Record<string, unknown>[]; more: boolean }> {
    const agent = await this.agent(agentKey);
    this.blockOf(agent, key, owner.scope);
    const { changes } = await this.changes(agent, key, owner);
    return { changes: [...changes].reverse().slice(offset, offset + limit).map(memoryChangeView), more: offset + limit < changes.length };
  }

  /** `PUT …/memory/{block}` and `POST …/revert` by an API caller (read-only blocks too: read-only binds the agent). */
  async edit(agentKey: string, key: string, owner: MemoryOwner, edit: Extract<MemoryEdit, { operation: 'put' | 'revert' }>, ctx: CommandContext): Promise<Record<string, unknown>> {
    const agent = await this.agent(agentKey);
    const block = this.blockOf(agent, key, owner.scope);
    const result = await this.write(agent, block, owner, edit, { actor: ctx.actor }, ctx, false);
    if (result.refusal) throw invalid('memory.invalid_edit', result.refusal.message, { [result.refusal.field]: result.refusal.message });
    return memoryBlockView(block, result.state, endUserField(owner));
  }

  /**
   * Decides and appends one edit at the stream's revision, again on a concurrent write (another turn's or caller's
   * change lands first: the edit is decided against it, so `old_text` is looked for in what is there now).
   */
  async write(agent: ActiveAgent, block: MemoryBlock, owner: MemoryOwner, edit: MemoryEdit, by: MemoryAuthor, ctx: CommandContext, byTool: boolean): Promise<{ refusal?: MemoryRefusal; change?: MemoryChange; state: ReturnType<typeof blockState> }> {
    for (let attempt = 1; ; attempt++) {
      const { changes, streamRevision } = await this.changes(agent, block.key, owner);
      const { change, refusal } = decideMemoryEdit(block, changes, edit, by, this.clock.now(), byTool);
      if (!change) return { ...(refusal ? { refusal } : {}), state: blockState(block, changes) };
      try {
        await this.append(agent, owner, change, streamRevision, ctx);
        return { change, state: blockState(block, [...changes, change]) };
      } catch (e) {
        if (!(e instanceof ConcurrencyError) || attempt >= WRITE_ATTEMPTS) throw e;
      }
    }
  }

  private async append(agent: ActiveAgent, owner: MemoryOwner, change: MemoryChange, streamRevision: number, ctx: CommandContext): Promise<void> {
    const stream = memoryStream(agent.agentId, change.block, owner.scope === 'end_user' ? owner.endUser : undefined);
    const event: MemoryEvent = { type: 'MemoryBlockChanged', data: { ...change, agentId: agent.agentId, scope: owner.scope, ...(owner.scope === 'end_user' ? { endUser: owner.endUser } : {}) } };
    // The new revision makes the event's id: a retried request writes nothing twice, two changes in one turn both land.
    await this.store.append(stream, toNewEvents([event], ctx, stream, change.revision), { expectedRevision: streamRevision < 0 ? 'no_stream' : streamRevision });
  }

  /** The blocks a session sees, with their values: the agent's, its end user's (when it has one), its own. */
  async inScope(agent: ActiveAgent, session: ActiveSession): Promise<{ block: MemoryBlock; value: string }[]> {
    const blocks = memoryBlocks(agent.config.memory);
    if (!blocks.length) return [];
    return Promise.all(
      blocks
        .filter((b) => b.scope !== 'end_user' || session.endUser !== undefined)
        .map(async (block) => {
          if (block.scope === 'session') return { block, value: blockState(block, session.memory?.[block.key] ?? []).value };
          const owner: MemoryOwner = block.scope === 'agent' ? { scope: 'agent' } : { scope: 'end_user', endUser: session.endUser };
          return { block, value: blockState(block, (await this.changes(agent, block.key, owner)).changes).value };
        }),
    );
  }

  private async session(agentKey: string, sessionKey: string): Promise<{ agent: ActiveAgent; session: ActiveSession }> {
    const agent = await this.agent(agentKey);
    const loaded = await this.sessions.load(agent.agentId, sessionKey);
    return { agent, session: requireSession(loaded.state, agentKey, sessionKey) };
  }

  /** `GET …/sessions/{key}/memory`: the session's own blocks. */
  async sessionBlocks(agentKey: string, sessionKey: string): Promise<Record<string, unknown>> {
    const { agent, session } = await this.session(agentKey, sessionKey);
    return { blocks: memoryBlocks(agent.config.memory).filter((b) => b.scope === 'session').map((b) => memoryBlockView(b, blockState(b, session.memory?.[b.key] ?? []))) };
  }

  /** The end-user blocks a session's end user reads (the end-user route); none when the session has no end user. */
  async endUserBlocks(agentKey: string, sessionKey: string): Promise<Record<string, unknown>> {
    const { session } = await this.session(agentKey, sessionKey);
    if (session.endUser === undefined) return { blocks: [] };
    const { blocks } = await this.list(agentKey, { scope: 'end_user', endUser: session.endUser });
    return { blocks: (blocks as Record<string, unknown>[]).map(({ end_user: _owner, updated_by: _by, ...shown }) => shown) };
  }

  /** The agent-scoped and end-user blocks a session could change, with their changes. */
  private async taught(agent: ActiveAgent, session: ActiveSession): Promise<{ block: MemoryBlock; owner: MemoryOwner; changes: MemoryChange[]; streamRevision: number }[]> {
    const blocks = memoryBlocks(agent.config.memory).filter((b) => b.scope === 'agent' || (b.scope === 'end_user' && session.endUser !== undefined));
    return Promise.all(
      blocks.map(async (block) => {
        const owner: MemoryOwner = block.scope === 'agent' ? { scope: 'agent' } : { scope: 'end_user', endUser: session.endUser };
        return { block, owner, ...(await this.changes(agent, block.key, owner)) };
      }),
    );
  }

  /** `GET …/sessions/{key}/memory_changes`: every change the session's tool calls made to agent and end-user blocks. */
  async sessionChanges(agentKey: string, sessionKey: string): Promise<Record<string, unknown>> {
    const { agent, session } = await this.session(agentKey, sessionKey);
    const all = (await this.taught(agent, session)).flatMap(({ block, owner, changes }) => changes.filter((c) => bySession(c, sessionKey)).map((c): Record<string, unknown> => ({ block: block.key, scope: owner.scope, ...endUserField(owner), ...memoryChangeView(c) })));
    return { changes: all.sort((a, b) => String(a.changed_at).localeCompare(String(b.changed_at))) };
  }

  /**
   * `POST …/sessions/{key}/memory_changes/revert`: each block the session changed goes back to its value before the
   * session's first change, one `revert` per block stream. When someone else changed a block after the session did,
   * nothing is written (409 naming the blocks) unless `force`.
   */
  async revertSession(agentKey: string, sessionKey: string, force: boolean, ctx: CommandContext): Promise<Record<string, unknown>> {
    const { agent, session } = await this.session(agentKey, sessionKey);
    const by: MemoryAuthor = { actor: ctx.actor };
    const decided = (await this.taught(agent, session)).map((t) => ({ ...t, ...decideSessionRevert(t.block, t.changes, sessionKey, by, this.clock.now(), force) }));
    const conflicts = decided.filter((d) => d.conflict);
    if (conflicts.length) throw conflict('memory.changed_since', `Nothing reverted: memory blocks ${conflicts.map((c) => c.block.key).join(', ')} were changed after session "${sessionKey}" changed them; send "force": true to revert them anyway`);
    const reverted: Record<string, unknown>[] = [];
    for (const d of decided) {
      if (!d.change) continue;
      await this.append(agent, d.owner, d.change, d.streamRevision, ctx);
      reverted.push({ block: d.block.key, scope: d.owner.scope, ...endUserField(d.owner), revision: d.change.revision, reverted_to: d.change.revertedTo, value: d.change.value });
    }
    return { reverted };
  }
}

const endUserField = (owner: MemoryOwner): Record<string, unknown> => (owner.scope === 'end_user' ? { end_user: owner.endUser } : {});

function changeOf(d: MemoryEvent['data']): MemoryChange {
  return { block: d.block, revision: d.revision, operation: d.operation, value: d.value, ...(d.revertedTo !== undefined ? { revertedTo: d.revertedTo } : {}), by: d.by, changedAt: d.changedAt };
}
