import { Projection, RecordedEvent } from '@lib/platform';
import { SqliteDatabase, SqliteProjectionState, SqliteReadStore, SqliteSearchIndex } from '@lib/platform/sqlite';

/**
 * given(events).project(): applies a projection's operations through the embedded sinks, event by event,
 * and can replay a suffix of the log as a crash would (checkpoint behind the writes) to show that the
 * projection converges to the same state.
 */
export class ProjectionHarness {
  readonly sqlite = new SqliteDatabase({ path: ':memory:' });
  readonly state = new SqliteProjectionState(this.sqlite);
  readonly reads = new SqliteReadStore(this.sqlite, this.state);
  readonly search = new SqliteSearchIndex(this.sqlite, this.state);
  private prepared = false;

  constructor(readonly projection: Projection) {}

  private sink() {
    return this.projection.target === 'read' ? this.reads : this.search;
  }

  async project(events: readonly RecordedEvent[]): Promise<this> {
    if (!this.prepared) {
      const shape = { name: this.projection.name, version: this.projection.version, collections: this.projection.target === 'read' ? this.projection.collections : [] };
      await this.sink().prepare(shape, 1);
      await this.sink().activate(shape, 1);
      this.prepared = true;
    }
    for (const e of events) {
      if (!this.projection.eventTypes.includes(e.type)) continue;
      await (this.sink().applyBatch as (n: string, g: number, b: unknown[], c: number) => Promise<void>)(
        this.projection.name,
        1,
        [{ position: e.position, ops: this.projection.apply(e) }],
        e.position,
      );
    }
    return this;
  }

  /** Re-applies `events` as after a crash that lost the checkpoint but kept the writes. */
  async replay(events: readonly RecordedEvent[]): Promise<this> {
    await this.sqlite.db.prepare('DELETE FROM projection_checkpoints WHERE name = ?').run(this.projection.name);
    return this.project(events);
  }

  /** Applies each event twice in a row, the second time as after a crash that lost the checkpoint but kept the writes. */
  async projectTwice(events: readonly RecordedEvent[]): Promise<this> {
    for (const e of events) {
      await this.project([e]);
      await this.replay([e]);
    }
    return this;
  }

  /** Every row of every collection the projection declares, by collection (read projections only). */
  async rows(): Promise<Record<string, unknown[]>> {
    if (this.projection.target !== 'read') throw new Error(`${this.projection.name} writes a search index: read its state with h.search`);
    const out: Record<string, unknown[]> = {};
    for (const { name } of this.projection.collections) {
      const rows: unknown[] = [];
      let pageKey: string | undefined;
      do {
        const page = await this.reads.find(name, { limit: 500, pageKey });
        rows.push(...page.items);
        pageKey = page.nextPageKey;
      } while (pageKey);
      out[name] = rows;
    }
    return out;
  }

  close(): void {
    this.sqlite.close();
  }
}

export const given = (events: readonly RecordedEvent[]) => ({
  project: (projection: Projection) => new ProjectionHarness(projection).project(events),
  /** Each event applied twice in a row (see `projectTwice`). */
  projectTwice: (projection: Projection) => new ProjectionHarness(projection).projectTwice(events),
});

/**
 * The state `read` sees after applying `events` once, and after applying each of them twice in a row: a
 * projection is idempotent when the two are equal (CONVENTIONS.md §8). `read` defaults to every row of a
 * read projection's collections.
 */
export async function onceAndTwice(
  projection: Projection,
  events: readonly RecordedEvent[],
  read: (h: ProjectionHarness) => Promise<unknown> = (h) => h.rows(),
): Promise<{ once: unknown; twice: unknown }> {
  const once = await given(events).project(projection);
  const twice = await given(events).projectTwice(projection);
  try {
    return { once: await read(once), twice: await read(twice) };
  } finally {
    once.close();
    twice.close();
  }
}
