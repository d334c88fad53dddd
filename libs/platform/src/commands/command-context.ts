import type { AppendCondition } from '../event-store/event-store.port';
import type { Actor, EventMetadata, NewEvent } from '../event-store/events';
import { uuidV5 } from '../kernel/ids';

/** Who asked, and the ids that tie a command's events to its request. */
export interface CommandContext {
  readonly actor: Actor;
  readonly requestId: string;
  /** Stable across retries of the same request (an `Idempotency-Key`), else the request id. */
  readonly commandId: string;
  readonly now: Date;
  /**
   * Work run under a lease (a job, a pipeline run): every append of the command is conditional on the lease not having
   * been acquired by another holder since (`fence`, docs/workers.md "Fencing"), and its events name the holder.
   */
  readonly lease?: { readonly holder: string; readonly fence: AppendCondition };
}

export const EVENT_SCHEMA_VERSION = 1;

/** Wraps decided `{type, data}` into events with deterministic ids (same command, same attempt → same ids). */
export function toNewEvents(
  decided: readonly { type: string; data: unknown }[],
  ctx: CommandContext,
  streamId: string,
  attempt: number,
): NewEvent[] {
  const metadata: EventMetadata = {
    actor: ctx.actor,
    requestId: ctx.requestId,
    correlationId: ctx.requestId,
    causationId: ctx.commandId,
    schemaVersion: EVENT_SCHEMA_VERSION,
    ...(ctx.lease ? { holder: ctx.lease.holder } : {}),
  };
  return decided.map((e, i) => ({ id: uuidV5(`${ctx.commandId}|${streamId}|${attempt}|${i}`), type: e.type, data: e.data, metadata }));
}
