import { Injectable } from '@nestjs/common';
import { CommandContext, Fold, StreamWriter } from '@lib/platform';
import { AUTH_WRITE_VISIBILITY } from './streams';

/** Auth writes answer once the auth read model shows them, so a new key or role works on the next request. */
@Injectable()
export class AuthWriter {
  constructor(private readonly streams: StreamWriter) {}

  write<S, E extends { type: string; data: unknown }>(streamId: string, fold: Fold<S, E>, decide: (state: S) => readonly E[], ctx: CommandContext) {
    return this.streams.write(streamId, fold, decide, ctx, AUTH_WRITE_VISIBILITY);
  }
}
