import { Inject, Injectable } from '@nestjs/common';
import {
  CommandContext,
  EVENT_STORE,
  EventStore,
  Fold,
  loadState,
  PROJECTION_PROGRESS,
  ProjectionProgress,
  SERVICE_CONFIG,
  ServiceConfig,
  writeAndWait,
} from '@lib/platform';

/** The write path every corpora command shares: decide on a stream, append, wait for the reads it implies. */
@Injectable()
export class StreamWriter {
  constructor(
    @Inject(EVENT_STORE) private readonly store: EventStore,
    @Inject(PROJECTION_PROGRESS) private readonly progress: ProjectionProgress,
    @Inject(SERVICE_CONFIG) private readonly config: ServiceConfig,
  ) {}

  state<S, E extends { type: string; data: unknown }>(streamId: string, fold: Fold<S, E>): Promise<S> {
    return loadState(this.store, streamId, fold);
  }

  /**
   * `visibleIn` names the projections that must have applied the events before the caller answers; an
   * empty list returns as soon as the events are durably appended.
   */
  async write<S, E extends { type: string; data: unknown }>(
    streamId: string,
    fold: Fold<S, E>,
    decide: (state: S) => readonly E[],
    ctx: CommandContext,
    visibleIn: readonly string[],
  ): Promise<{ events: readonly E[]; position: number; visible: boolean }> {
    return writeAndWait({ store: this.store, progress: this.progress, timeoutMs: this.config.readYourWritesTimeoutMs }, streamId, fold, decide, ctx, visibleIn);
  }
}
