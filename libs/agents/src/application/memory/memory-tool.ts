import { Inject, Injectable } from '@nestjs/common';
import { Clock, CLOCK } from '@lib/platform';
import type { ToolConfig } from '@lib/tools';
import type { AgentConfig } from '../../domain/agent-config';
import { blocksInScope, blockState, decideMemoryEdit, MemoryAuthor, MemoryChange, toolEdit } from '../../domain/memory';
import type { SessionEvent } from '../../domain/session-events';
import type { TurnSetup } from '../turn/turn-setup';
import type { TurnState } from '../turn/turn-state';
import { AgentMemory } from './agent-memory';

/** A `memory_replace`/`memory_append` call as the tool round planned it. */
export interface MemoryCall {
  readonly call: { readonly id: string; readonly name: string; readonly arguments: string };
  readonly args: Record<string, unknown>;
  /** The arguments were not a JSON object. */
  readonly problem?: string;
  /** The call's `tool_input` event: the change names it. */
  readonly eventId: string;
}

/**
 * The built-in memory tools of a turn: an edit of a writable block in the session's scope, recorded with the tool's
 * output (a session block's change in the same append; an agent or end-user block's in its own stream first).
 * Every refusal (unknown or read-only block, over the limit, old_text absent or not unique) is a tool error the
 * model reads; the turn goes on. A replay takes the recorded output and writes nothing (docs/replay.md).
 */
@Injectable()
export class MemoryTools {
  constructor(
    private readonly memory: AgentMemory,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  /** Whether the model is offered the memory tools: a writable block is in the session's scope. */
  static offered(config: AgentConfig, hasEndUser: boolean): string[] {
    return blocksInScope(config.memory, hasEndUser)
      .filter((b) => !b.read_only)
      .map((b) => b.key);
  }

  async run(p: MemoryCall, config: AgentConfig, step: string, turn: TurnState, turnId: string, setup: TurnSetup): Promise<{ error: boolean }> {
    const names = { toolCallId: p.call.id, toolConfigurationName: p.call.name, toolName: p.call.name, step };
    const returned = (toolOutput: Record<string, unknown>, error: boolean): SessionEvent => ({ type: 'SessionToolReturned', data: { ...turn.base(turnId), ...names, toolOutput, error } });
    const fail = async (message: string) => (await turn.record(returned({ error: message }, true)), { error: true });
    if (p.problem) return fail(p.problem);
    const recorded = setup.replay?.toolOutput({ id: p.call.id, name: p.call.name, arguments: p.call.arguments, tool: { type: p.call.name } as ToolConfig });
    if (recorded) return (await turn.record(returned(recorded.output, recorded.error)), { error: recorded.error });
    const { block: key, edit, refusal } = toolEdit(p.call.name, p.args);
    if (!edit) return fail(refusal ?? 'the arguments are not an edit');
    const state = turn.state;
    const block = blocksInScope(config.memory, state.endUser !== undefined).find((b) => b.key === key);
    if (!block) return fail(`there is no memory block ${key} (the writable blocks are ${MemoryTools.offered(config, state.endUser !== undefined).join(', ') || 'none'})`);
    const by: MemoryAuthor = { session_key: state.key, turn_id: turnId, event_id: p.eventId };
    const done = (change: MemoryChange | undefined, value: string, revision: number) => ({ block: key, revision, chars: value.length, limit_chars: block.limit_chars, ...(change ? {} : { unchanged: true }) });
    if (block.scope === 'session') {
      const changes = state.memory?.[key] ?? [];
      const { change, refusal: refused } = decideMemoryEdit(block, changes, edit, by, this.clock.now(), true);
      if (refused) return fail(refused.message);
      const after = blockState(block, change ? [...changes, change] : changes);
      await turn.recordMany([returned(done(change, after.value, after.revision), false), ...(change ? [{ type: 'SessionMemoryChanged' as const, data: change }] : [])]);
      return { error: false };
    }
    const owner = block.scope === 'agent' ? { scope: 'agent' as const } : { scope: 'end_user' as const, endUser: state.endUser };
    const written = await this.memory.write(setup.agent, block, owner, edit, by, setup.ctx, true);
    if (written.refusal) return fail(written.refusal.message);
    await turn.record(returned(done(written.change, written.state.value, written.state.revision), false));
    return { error: false };
  }
}
