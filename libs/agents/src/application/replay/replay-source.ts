import { createHash } from 'node:crypto';
import { DomainError } from '@lib/platform';
import type { ToolConfig, ToolDefinition, ToolResult } from '@lib/tools';
import type { PromptMessage } from '../../domain/history';
import { canonicalArguments, canonicalJson, RecordedAnswer, RecordedToolOutput, RecordedTurn, ReplayDivergence } from '../../domain/replay';
import type { ActiveSession } from '../../domain/session';
import type { ReplayOrigin } from '../../domain/session-events';
import type { ModelAnswer } from '../turn/model-call';
import type { ReplaySource } from '../turn/turn-setup';

/** A replay's turn stopped where its configuration could not follow the record. */
export class ReplayDiverged extends DomainError {
  constructor(readonly divergence: ReplayDivergence) {
    super('conflict', 'replay.diverged', `The replay diverged from the record at model call ${divergence.model_call}: ${divergence.detail}`);
  }
}

/** The system prompt and the tools offered, as the original's revision builds them for a step and a session state. */
export type BaselinePrompt = (step: string, state: ActiveSession) => Promise<{ readonly messages: readonly PromptMessage[]; readonly tools: readonly ToolDefinition[] }>;

const hash = (v: unknown) => createHash('sha256').update(canonicalJson(v)).digest('hex').slice(0, 16);
const systemOf = (messages: readonly PromptMessage[]) => messages.find((m) => m.role === 'system')?.content ?? '';

/**
 * Answers one replayed turn from its recorded turn (docs/replay.md).
 * - `recorded`: each model call gets the next recorded answer, in order; it diverges (throws) when the answer's step is
 *   not the replay's, when the answer calls a tool the replay does not offer, when there is no answer left, or (given
 *   a baseline: another revision than the one that ran the turn) when the system prompt or the tools offered differ
 *   from what the original revision builds. Tool outputs come from the record by tool call id.
 * - `live_model` / `live`: the model runs; a call with the same tool configuration name and arguments (canonical
 *   JSON) as a recorded one gets its recorded output (`live_model` only, each recorded output once); others run,
 *   except side effects, refused with an error output unless allowed.
 */
export class TurnReplaySource implements ReplaySource {
  private next = 0;
  private readonly unused: RecordedToolOutput[];
  divergence?: ReplayDivergence;

  constructor(
    private readonly turn: RecordedTurn,
    private readonly origin: Pick<ReplayOrigin, 'mode' | 'allowSideEffects'>,
    private readonly sideEffects: (tool: ToolConfig, args: Record<string, unknown>) => boolean,
    private readonly baseline?: BaselinePrompt,
  ) {
    this.unused = [...turn.toolOutputs];
  }

  /** Model calls the replay made (recorded mode: answers taken from the record). */
  get modelCalls(): number {
    return this.next;
  }

  /** The recorded answers the replay did not ask for (recorded mode: the turn ended sooner than the original). */
  leftover(): ReplayDivergence | undefined {
    if (this.origin.mode !== 'recorded' || this.divergence || this.next >= this.turn.answers.length) return undefined;
    return { kind: 'fewer_model_calls', detail: `the replay's turn ended after ${this.next} model call(s); the original made ${this.turn.answers.length}`, model_call: this.next };
  }

  async answer(call: { readonly step: string; readonly messages: readonly PromptMessage[]; readonly tools: readonly ToolDefinition[]; readonly state: ActiveSession }): Promise<ModelAnswer | undefined> {
    if (this.origin.mode !== 'recorded') return undefined;
    const at = this.next++;
    const recorded: RecordedAnswer | undefined = this.turn.answers[at];
    if (!recorded) return this.diverge('more_model_calls', `the replay asks for model call ${at + 1}; the original made ${this.turn.answers.length}`, at);
    if (recorded.step !== call.step) return this.diverge('step', `the replay is in step "${call.step}" where the original was in step "${recorded.step}"`, at);
    const offered = new Set(call.tools.map((t) => t.function.name));
    const missing = recorded.toolCalls.find((c) => !offered.has(c.name));
    if (missing) return this.diverge('tool_not_offered', `the recorded answer calls tool "${missing.name}", which the replay's step "${call.step}" does not offer (it offers ${[...offered].join(', ') || 'none'})`, at);
    if (this.baseline) {
      const expected = await this.baseline(call.step, call.state);
      if (hash(systemOf(expected.messages)) !== hash(systemOf(call.messages))) return this.diverge('prompt', `the system prompt of step "${call.step}" differs from the one the original revision builds (sha256 ${hash(systemOf(expected.messages))} → ${hash(systemOf(call.messages))})`, at);
      if (hash(expected.tools) !== hash(call.tools)) return this.diverge('tools_offered', `the tools offered in step "${call.step}" differ: ${expected.tools.map((t) => t.function.name).join(', ') || 'none'} → ${call.tools.map((t) => t.function.name).join(', ') || 'none'}`, at);
    }
    return { content: recorded.content, toolCalls: recorded.toolCalls, usage: recorded.usage };
  }

  toolOutput(call: { readonly id: string; readonly name: string; readonly arguments: string; readonly tool: ToolConfig }): ToolResult | undefined {
    if (this.origin.mode === 'recorded') {
      const found = this.turn.toolOutputs.find((o) => o.toolCallId === call.id);
      return found ? { output: found.output, error: found.error } : this.refuseOrRun(call);
    }
    if (this.origin.mode === 'live_model') {
      const args = canonicalArguments(call.arguments);
      const i = this.unused.findIndex((o) => o.name === call.name && o.arguments === args);
      if (i >= 0) {
        const [found] = this.unused.splice(i, 1);
        return { output: found.output, error: found.error };
      }
    }
    return this.refuseOrRun(call);
  }

  private refuseOrRun(call: { readonly name: string; readonly arguments: string; readonly tool: ToolConfig }): ToolResult | undefined {
    if (this.origin.allowSideEffects) return undefined;
    let args: Record<string, unknown> = {};
    try {
      args = JSON.parse(call.arguments || '{}') as Record<string, unknown>;
    } catch {
      args = {};
    }
    if (!this.sideEffects(call.tool, args)) return undefined;
    return { output: { error: `Refused in a replay: tool "${call.name}" (${call.tool.type}) has side effects; replay with "allow_side_effects": true to run it` }, error: true };
  }

  private diverge(kind: ReplayDivergence['kind'], detail: string, at: number): never {
    this.divergence = { kind, detail, model_call: at };
    throw new ReplayDiverged(this.divergence);
  }
}
