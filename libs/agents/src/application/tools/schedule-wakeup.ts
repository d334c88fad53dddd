import { Inject, Injectable, Logger, OnModuleInit, Optional } from '@nestjs/common';
import { Clock, CLOCK, CommandContext, ConcurrencyError, DURABLE_TIMERS, DueTimer, DurableTimers, EVENT_STORE, EventStore, ID_GENERATOR, IdGenerator, streamId } from '@lib/platform';
import { WAKEUP_SCHEDULER, WAKEUP_TIMER_KIND } from '../agent-timers';
import { AGENT_RUNS, AgentRuns } from '../runs/agent-runs.port';
import type { Tool, ToolConfig, ToolContext, ToolDefinition, ToolResult } from '@lib/tools';

/** Longest a wakeup may be put off. */
export const MAX_WAKEUP_DELAY_S = 30 * 24 * 3600;

const err = (message: string): ToolResult => ({ output: { error: message }, error: true });

interface WakeupPayload {
  readonly agentKey: string;
  readonly sessionKey: string;
  readonly prompt: string;
  readonly reason: string;
}

/** The session's pending wakeup: stream `wakeup-<agentKey>.<sessionKey>`, one `SessionWakeupSet` per change. */
type WakeupEvent = { type: 'SessionWakeupSet'; data: { timerId: string; dueAt: string; reason: string; setAt: string } };
const pointer = (agentKey: string, sessionKey: string) => streamId('wakeup', agentKey, sessionKey);

/**
 * `schedule_wakeup`: the agent asks to be woken after `delay_seconds` with `prompt` (and a `reason`). The wakeup
 * is a durable timer (it survives restarts); at most one is pending per session and a later call moves it
 * earlier, never later. When it fires the prompt arrives as an input of the session (after a running turn).
 */
@Injectable()
export class ScheduleWakeupTool implements Tool {
  constructor(
    @Inject(WAKEUP_SCHEDULER) private readonly timers: DurableTimers,
    @Inject(EVENT_STORE) private readonly store: EventStore,
    @Inject(ID_GENERATOR) private readonly ids: IdGenerator,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  definition(name: string, config: ToolConfig): ToolDefinition {
    return {
      type: 'function',
      function: {
        name,
        description: config.description ?? 'Wakes this conversation up later with a prompt (one pending wakeup; a sooner one replaces a later one).',
        parameters: { type: 'object', properties: { delay_seconds: { type: 'integer', minimum: 1, maximum: MAX_WAKEUP_DELAY_S }, prompt: { type: 'string' }, reason: { type: 'string' } }, required: ['delay_seconds', 'prompt'] },
      },
    };
  }

  async run(_config: ToolConfig, args: Record<string, unknown>, ctx: ToolContext): Promise<ToolResult> {
    const delay = Number(args.delay_seconds);
    if (!Number.isInteger(delay) || delay < 1 || delay > MAX_WAKEUP_DELAY_S) return err(`delay_seconds must be an integer from 1 to ${MAX_WAKEUP_DELAY_S}`);
    if (typeof args.prompt !== 'string' || !args.prompt.trim()) return err('prompt must be a non-empty string');
    const reason = typeof args.reason === 'string' ? args.reason : '';
    const dueAt = new Date(this.clock.now().getTime() + delay * 1000);
    const stream = pointer(ctx.agentKey, ctx.sessionKey);
    for (let attempt = 0; attempt < 5; attempt++) {
      const history = (await this.store.readStream(stream)) as unknown as (WakeupEvent & { revision: number })[];
      const last = history.at(-1);
      const pending = last && Date.parse(last.data.dueAt) > this.clock.now().getTime() ? last.data : undefined;
      if (pending && Date.parse(pending.dueAt) <= dueAt.getTime()) {
        return { output: { scheduled: false, pending_at: pending.dueAt, note: 'a sooner wakeup is already pending: a later one does not replace it' }, error: false };
      }
      const timerId = `wakeup-${this.ids.uuid()}`;
      const event: WakeupEvent = { type: 'SessionWakeupSet', data: { timerId, dueAt: dueAt.toISOString(), reason, setAt: this.clock.now().toISOString() } };
      try {
        await this.store.append(stream, [{ id: this.ids.uuid(), type: event.type, data: event.data, metadata: { actor: { type: 'agent', id: ctx.agentKey }, correlationId: ctx.command?.requestId ?? timerId, schemaVersion: 1 } }], { expectedRevision: last ? last.revision : 'no_stream' });
      } catch (e) {
        if (e instanceof ConcurrencyError) continue;
        throw e;
      }
      if (pending) await this.timers.cancel(pending.timerId);
      await this.timers.schedule({ timerId, kind: WAKEUP_TIMER_KIND, dueAt, payload: { agentKey: ctx.agentKey, sessionKey: ctx.sessionKey, prompt: args.prompt, reason } satisfies WakeupPayload });
      return { output: { scheduled: true, due_at: dueAt.toISOString(), ...(pending ? { replaced: pending.dueAt } : {}) }, error: false };
    }
    return err('the wakeup changed concurrently: try again');
  }
}

/**
 * The worker wing's side: a due wakeup becomes an input of its session (as a follow-up of a running turn). Its
 * `external_id` is the timer id, so a wakeup fired twice (a handler may run more than once) is one input.
 */
@Injectable()
export class WakeupHandler implements OnModuleInit {
  private readonly log = new Logger('agent-wakeups');

  constructor(
    @Optional() @Inject(DURABLE_TIMERS) private readonly timers: DurableTimers | undefined,
    @Inject(AGENT_RUNS) private readonly runs: AgentRuns,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  onModuleInit(): void {
    this.timers?.handle(WAKEUP_TIMER_KIND, (timer) => this.fire(timer));
  }

  async fire(timer: DueTimer): Promise<void> {
    const p = timer.payload as WakeupPayload;
    const ctx: CommandContext = { actor: { type: 'system', id: 'wakeup' }, requestId: timer.timerId, commandId: timer.timerId, now: this.clock.now() };
    const content = p.reason ? `[Scheduled wakeup — ${p.reason}] ${p.prompt}` : `[Scheduled wakeup] ${p.prompt}`;
    try {
      await this.runs.input(p.agentKey, p.sessionKey, { type: 'input_message', messages: [{ type: 'text', content }], behavior: 'follow_up', external_id: timer.timerId }, ctx);
    } catch (e) {
      this.log.warn(`wakeup ${timer.timerId} of session ${p.agentKey}/${p.sessionKey} could not run: ${(e as Error).message}`);
    }
  }
}
