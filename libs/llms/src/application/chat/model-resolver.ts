import { Inject, Injectable } from '@nestjs/common';
import { EVENT_STORE, EventStore, READ_STORE, ReadStore } from '@lib/platform';
import { findLlm, llmStream } from '../llm-writer';
import { LlmProviders } from '../provider/llm-providers';
import type { LlmRow } from '../../read-models';

/**
 * The registered model a chat names, cached per name or id. An entry is kept with the revision of the
 * model's stream it was built from and used only while that stream has no later event: one read of the event
 * store (the truth, shared by every replica) per call, instead of the read model's two lookups, and a rotated
 * credential, a disabled or a deleted model is seen by the very next call on any replica.
 */
@Injectable()
export class ModelResolver {
  private readonly rows = new Map<string, { readonly row: LlmRow; readonly revision: number }>();

  constructor(
    @Inject(READ_STORE) private readonly reads: ReadStore,
    @Inject(EVENT_STORE) private readonly store: EventStore,
    private readonly providers: LlmProviders,
  ) {}

  async resolve(nameOrId: string): Promise<LlmRow | undefined> {
    const cached = this.rows.get(nameOrId);
    if (cached) {
      const later = await this.store.readStream(llmStream(cached.row.name), { fromRevision: cached.revision + 1, maxCount: 1 });
      if (later.length === 0) return cached.row;
      this.rows.delete(nameOrId);
    }
    const row = await findLlm(this.reads, nameOrId);
    if (!row) {
      // Deleted, perhaps through another replica: its client and the credentials it holds go too.
      if (cached) this.providers.forget(cached.row.name);
      return undefined;
    }
    // Cached only when the row was built from the stream's last event; a projection still behind is read again next time.
    const [last] = await this.store.readStream(llmStream(row.name), { direction: 'backwards', maxCount: 1 });
    if (last && last.position === row.position) this.rows.set(nameOrId, { row, revision: last.revision });
    return row;
  }
}
