import { Inject, Injectable, Logger, OnModuleDestroy } from '@nestjs/common';
import { Quota, QuotaEngine, UsageCarrier, UsageLedgerSpec } from '@lib/llms';
import { Clock, CLOCK, CommandContext, EVENT_STORE, EventStore, RecordedEvent, streamId } from '@lib/platform';
import type { ActiveAgent } from '../sessions/sessions';

/** One usage event per model call of an agent, in a ledger stream per agent and UTC month. */
export interface AgentUsageRecorded {
  readonly type: 'AgentUsageRecorded';
  readonly data: { readonly agentId: string; readonly agentKey: string; readonly input: number; readonly output: number; readonly at: string };
}

export const agentUsageLedger: UsageLedgerSpec = {
  stream: (agentId, at) => streamId('agentusage', agentId, at.toISOString().slice(0, 7)),
  usageOf(event: RecordedEvent) {
    if (event.type !== 'AgentUsageRecorded') return undefined;
    const d = (event as unknown as AgentUsageRecorded).data;
    return { usage: { input: d.input, output: d.output }, at: new Date(d.at) };
  },
};

/**
 * An agent's `llm_quota`, enforced by the quota engine the registered models use (same windows, same 429),
 * counted over every model call the agent's sessions make.
 */
@Injectable()
export class AgentQuotas implements OnModuleDestroy {
  private readonly engine: QuotaEngine;

  constructor(@Inject(EVENT_STORE) store: EventStore, @Inject(CLOCK) clock: Clock) {
    const log = new Logger('agent-quotas');
    this.engine = new QuotaEngine(store, clock, agentUsageLedger, (e) => log.error(`agent usage could not be recorded: ${(e as Error).message}`));
  }

  admit(agent: ActiveAgent): Promise<void> {
    return this.engine.admit(agent.agentId, `agent "${agent.key}"`, (agent.config.llm_quota ?? null) as Quota | null);
  }

  /** `call` numbers the model calls of one request, so each is its own usage event. */
  record(agent: ActiveAgent, usage: { input_tokens: number; output_tokens: number }, ctx: CommandContext, call: string, carrier?: UsageCarrier): Promise<void> {
    if (!agent.config.llm_quota) return Promise.resolve();
    return this.engine.record(
      agent.agentId,
      { input: usage.input_tokens, output: usage.output_tokens },
      (at) => ({ type: 'AgentUsageRecorded', data: { agentId: agent.agentId, agentKey: agent.key, input: usage.input_tokens, output: usage.output_tokens, at: at.toISOString() } }),
      { ...ctx, commandId: `${ctx.commandId}:${call}` },
      carrier,
    );
  }

  async onModuleDestroy(): Promise<void> {
    await this.engine.flush();
  }
}
