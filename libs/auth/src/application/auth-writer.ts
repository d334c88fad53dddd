import { Inject, Injectable } from '@nestjs/common';
import { CommandContext, EVENT_STORE, EventStore, Fold, PROJECTION_PROGRESS, ProjectionProgress, SERVICE_CONFIG, ServiceConfig, writeAndWait } from '@lib/platform';
import { AUTH_WRITE_VISIBILITY } from './read-models';

/** Auth writes answer once the auth read model shows them, so a new key or role works on the next request. */
@Injectable()
export class AuthWriter {
  constructor(
    @Inject(EVENT_STORE) private readonly store: EventStore,
    @Inject(PROJECTION_PROGRESS) private readonly progress: ProjectionProgress,
    @Inject(SERVICE_CONFIG) private readonly config: ServiceConfig,
  ) {}

  write<S, E extends { type: string; data: unknown }>(streamId: string, fold: Fold<S, E>, decide: (state: S) => readonly E[], ctx: CommandContext) {
    return writeAndWait({ store: this.store, progress: this.progress, timeoutMs: this.config.readYourWritesTimeoutMs }, streamId, fold, decide, ctx, AUTH_WRITE_VISIBILITY);
  }
}
