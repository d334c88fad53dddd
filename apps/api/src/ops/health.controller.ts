import { Controller, Get, Inject, Res } from '@nestjs/common';
import type { Response } from 'express';
import { INFRASTRUCTURE } from '../tokens';
import type { Infrastructure } from '../../../infrastructure/infrastructure';
import { Policy } from '../http/policy';

/** Projections further behind the log than this make the service not ready. */
const MAX_READY_LAG = 10_000;
/** A store that has not answered its ping in this long is not ready: a probe must not hang on a cut link. */
const PING_TIMEOUT_MS = 2_000;

@Controller('health')
export class HealthController {
  constructor(@Inject(INFRASTRUCTURE) private readonly infra: Infrastructure) {}

  /** Liveness: the process answers. */
  @Get()
  @Policy('public')
  live() {
    return { status: 'ok' };
  }

  /** Readiness: every store reachable, projections running and close to the head of the log. */
  @Get('ready')
  @Policy('public')
  async ready(@Res({ passthrough: true }) res: Response) {
    const check = async (name: string, adapter: string, ping: () => Promise<void>) => {
      try {
        await bounded(ping());
        return { name, adapter, ok: true };
      } catch (e) {
        return { name, adapter, ok: false, error: e instanceof Error ? e.message : String(e) };
      }
    };
    const stores = await Promise.all([
      check('event_store', this.infra.adapters.events, () => this.infra.events.ping()),
      check('read_store', this.infra.adapters.reads, () => this.infra.reads.ping()),
      check('search_index', this.infra.adapters.search, () => this.infra.search.ping()),
      check('recall_index', this.infra.adapters.search, () => this.infra.recall.ping()),
    ]);
    // The lag reads the log's head: with the event store unreachable it fails, and the answer is "not ready" with the
    // stores' detail, not the error of the head's read.
    let projections: Awaited<ReturnType<NonNullable<Infrastructure['runtime']>['lag']>> = [];
    let lagUnknown = false;
    try {
      projections = this.infra.runtime ? await bounded(this.infra.runtime.lag()) : [];
    } catch {
      lagUnknown = true;
    }
    const ok = stores.every((s) => s.ok) && !lagUnknown && projections.every((p) => p.running && p.behind <= MAX_READY_LAG);
    res.status(ok ? 200 : 503);
    return { status: ok ? 'ready' : 'not_ready', stores, projections };
  }
}

/** `work`, or an error once it has not settled within PING_TIMEOUT_MS. */
async function bounded<T>(work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${PING_TIMEOUT_MS} ms`)), PING_TIMEOUT_MS);
  });
  try {
    return await Promise.race([work, late]);
  } finally {
    clearTimeout(timer);
  }
}
