import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { READ_STORE, ReadStore, SERVICE_CONFIG, ServiceConfig } from '@lib/platform';
import { SESSIONS, SessionRow } from '../../read-models';
import { SessionInputs } from './session-inputs';

/**
 * The worker's sweep for turns whose runner died (a process killed mid-turn): a session shown running whose
 * lease nobody holds any more gets `session_interrupted` (reason crash) and its turn ended, so it is visible as
 * such and takes input again without waiting for one. Runs every WORKER_POLL_MS.
 */
@Injectable()
export class TurnSweeper implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly log = new Logger('turn-sweeper');
  private timer?: NodeJS.Timeout;
  private sweeping = false;

  constructor(
    private readonly inputs: SessionInputs,
    @Inject(READ_STORE) private readonly reads: ReadStore,
    @Inject(SERVICE_CONFIG) private readonly config: ServiceConfig,
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
          if (await this.inputs.recoverCrashed(row.agent_key, row.key)) {
            closed++;
            this.log.warn(`closed the turn of session ${row.agent_key}/${row.key}: its runner stopped`);
          }
        } catch (e) {
          this.log.warn(`could not check session ${row.agent_key}/${row.key}: ${(e as Error).message}`);
        }
      }
    } finally {
      this.sweeping = false;
    }
    return closed;
  }
}
