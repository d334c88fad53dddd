import { Inject, Injectable, Logger, OnModuleInit, Optional } from '@nestjs/common';
import { DURABLE_TIMERS, DueTimer, DurableTimers } from '@lib/platform';
import { APPROVAL_TIMER_KIND } from '../agent-timers';
import { SessionInputs } from './session-inputs';
import type { ApprovalTimerPayload } from './tool-round';

/**
 * The worker wing's side of tool approvals: a due approval timer resolves its call as expired and resumes the
 * turn (`SessionInputs.expireApproval`). A handler that throws (the store failing) leaves the timer pending, and
 * it fires again; one that fires twice finds the call decided and does nothing.
 */
@Injectable()
export class ApprovalExpiryHandler implements OnModuleInit {
  private readonly log = new Logger('agent-approvals');

  constructor(
    @Optional() @Inject(DURABLE_TIMERS) private readonly timers: DurableTimers | undefined,
    private readonly inputs: SessionInputs,
  ) {}

  onModuleInit(): void {
    this.timers?.handle(APPROVAL_TIMER_KIND, (timer) => this.fire(timer));
  }

  async fire(timer: DueTimer): Promise<void> {
    const p = timer.payload as ApprovalTimerPayload;
    try {
      await this.inputs.expireApproval(p.agentKey, p.sessionKey, p.toolCallId, timer.timerId);
    } catch (e) {
      this.log.warn(`approval ${timer.timerId} of session ${p.agentKey}/${p.sessionKey} could not expire yet: ${(e as Error).message}`);
      throw e;
    }
  }
}
