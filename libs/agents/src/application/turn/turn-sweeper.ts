import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { Clock, CLOCK, CommandContext, READ_STORE, ReadStore, SERVICE_CONFIG, ServiceConfig } from '@lib/platform';
import { Sessions } from '../sessions/sessions';
import { SESSIONS, SessionRow } from '../../read-models';
import { RunningTurns } from './running-turns';

/**
 * The worker's sweep for turns whose runner died (a process killed mid-turn): a session shown running whose
 * lease nobody holds any more gets `session_interrupted` (reason crash) and its turn ended, so it is visible as
 * such and takes input again without waiting for one. Also deletes sessions idle past their `tti_minutes`.
 * Runs every WORKER_POLL_MS.
 */
@Injectable()
export class TurnSweeper implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly log = new Logger('turn-sweeper');
  private timer?: NodeJS.Timeout;
  private sweeping = false;

  constructor(
    private readonly turns: RunningTurns,
    private readonly sessions: Sessions,
    @Inject(READ_STORE) private readonly reads: ReadStore,
    @Inject(SERVICE_CONFIG) private readonly config: ServiceConfig,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  onApplicationBootstrap(): void {
    this.timer = setInterval(() => void this.sweep(), this.config.workerPollMs);
    this.timer.unref();
    void this.sweep();
  }

  onApplicationShutdown(): void {
    clearInterval(this.timer);
  }

  /** One pass; returns how many crashed turns it closed. */
  async sweep(): Promise<number> {
    if (this.sweeping) return 0;
    this.sweeping = true;
    let closed = 0;
    try {
      const running = await this.reads.find<SessionRow>(SESSIONS, { where: [{ field: 'status', op: 'eq', value: 'running' }], limit: 100 });
      for (const row of running.items) {
        try {
          if (await this.turns.recoverCrashed(row.agent_key, row.key)) {
            closed++;
            this.log.warn(`closed the turn of session ${row.agent_key}/${row.key}: its runner stopped`);
          }
        } catch (e) {
          this.log.warn(`could not check session ${row.agent_key}/${row.key}: ${(e as Error).message}`);
        }
      }
      closed += await this.expireIdle();
    } finally {
      this.sweeping = false;
    }
    return closed;
  }

  /** Deletes sessions idle for longer than their `tti_minutes` (time to idle; 0 never expires). */
  private async expireIdle(): Promise<number> {
    const now = this.clock.now();
    const candidates = await this.reads.find<SessionRow>(SESSIONS, { where: [{ field: 'tti_minutes', op: 'gt', value: 0 }], limit: 500 });
    let expired = 0;
    for (const row of candidates.items) {
      if (row.status === 'running' || Date.parse(row.updated_at) + row.tti_minutes * 60_000 > now.getTime()) continue;
      const ctx: CommandContext = { actor: { type: 'system', id: 'session-expiry' }, requestId: `expire-${row.id}`, commandId: `expire-${row.id}-${row.updated_at}`, now };
      try {
        await this.sessions.remove(row.agent_key, row.key, ctx);
        expired++;
        this.log.log(`deleted session ${row.agent_key}/${row.key}: idle for more than ${row.tti_minutes} minutes`);
      } catch (e) {
        this.log.warn(`could not expire session ${row.agent_key}/${row.key}: ${(e as Error).message}`);
      }
    }
    return expired;
  }
}
