import type { PoolClient } from 'pg';
import { assertNever } from '../../kernel/errors';
import type { ReadOp, RowGuard } from '../read-store.port';
import { applyPatch } from '../patch';
import { conditionSql } from './postgres-read-sql';
import { tableName } from './postgres-read-schema';
import { encodeText, fromJsonb, toJsonb } from './postgres-text';

interface StoredRow {
  doc: Record<string, unknown>;
  pos: number;
}

interface Entry {
  collection: string;
  id: string;
  row: StoredRow | undefined;
  dirty: boolean;
  /** False while only the stored position is known (a put or a delete needs no more). */
  loaded: boolean;
  /** Not read at all (a collection the run only puts into): the upsert itself keeps the position guard. */
  blind?: boolean;
}

type Staged = { readonly op: ReadOp; readonly position: number };
type Want = { readonly collection: string; readonly id: string; readonly whole: boolean };

const key = (collection: string, id: string) => `${collection}\u0000${id}`;

/**
 * The writes of one batch inside its transaction, with the SQLite adapter's semantics (its `PendingWrites`): a
 * document touched by many events of the batch is read once and written once, and a document already written by
 * a later event is left alone, which keeps a replay after a crash harmless. In round trips: per run of ops between
 * two `deleteWhere`s, one read per collection of the rows the run touches, then one delete and one upsert per
 * collection. A collection the run only puts whole rows into (no patch, delete or guard) is not read: its upsert
 * skips a row already written at or after the put's position, in SQL.
 */
export class PostgresPendingWrites {
  private readonly rows = new Map<string, Entry>();

  constructor(
    private readonly client: PoolClient,
    private readonly generation: number,
  ) {}

  async run(staged: readonly Staged[], guarded: boolean): Promise<void> {
    let from = 0;
    while (from < staged.length) {
      let to = from;
      while (to < staged.length && staged[to].op.op !== 'deleteWhere') to++;
      const run = staged.slice(from, to);
      const blind = PostgresPendingWrites.putOnly(run);
      await this.load(run.filter((s) => !blind.has(s.op.collection)).flatMap((s) => PostgresPendingWrites.wants(s.op)));
      for (const s of run) this.apply(s.op, s.position, guarded, blind.has(s.op.collection));
      await this.flush(guarded);
      if (to < staged.length) {
        const op = staged[to].op as Extract<ReadOp, { op: 'deleteWhere' }>;
        if (!op.onlyIf || (await this.guardHolds(op.collection, op.onlyIf))) {
          const params: unknown[] = [];
          const where = conditionSql(op.where, params);
          await this.client.query(`DELETE FROM ${tableName(op.collection, this.generation)} WHERE ${where}`, params);
        }
        this.rows.clear();
      }
      from = to + 1;
    }
  }

  private async guardHolds(collection: string, guard: RowGuard): Promise<boolean> {
    await this.load([{ collection, id: guard.id, whole: true }]);
    return this.holds(collection, guard);
  }

  /** Collections every op of the run only puts whole, unguarded rows into. */
  private static putOnly(run: readonly Staged[]): Set<string> {
    const puts = new Set<string>();
    const others = new Set<string>();
    for (const { op } of run) (op.op === 'put' && !op.onlyIf ? puts : others).add(op.collection);
    for (const c of others) puts.delete(c);
    return puts;
  }

  /** The rows an op reads: whole for patches and guards, the stored position alone for puts and deletes. */
  private static wants(op: ReadOp): Want[] {
    const guard = op.onlyIf ? [{ collection: op.collection, id: op.onlyIf.id, whole: true }] : [];
    switch (op.op) {
      case 'put':
        return [...guard, { collection: op.collection, id: op.doc.id, whole: false }];
      case 'patch':
        return [...guard, { collection: op.collection, id: op.id, whole: true }];
      case 'delete':
        return [...guard, { collection: op.collection, id: op.id, whole: false }];
      case 'deleteWhere':
        return guard;
      default:
        return assertNever(op);
    }
  }

  /** Reads, in one query per collection, the rows wanted that the cache does not hold yet. */
  private async load(wants: readonly Want[]): Promise<void> {
    const wanted = new Map<string, { ids: Set<string>; whole: Set<string> }>();
    for (const { collection, id, whole } of wants) {
      const known = this.rows.get(key(collection, id));
      if (known && (known.loaded || !whole)) continue;
      const w = wanted.get(collection) ?? { ids: new Set<string>(), whole: new Set<string>() };
      w.ids.add(id);
      if (whole) w.whole.add(id);
      wanted.set(collection, w);
    }
    for (const [collection, { ids, whole }] of wanted) {
      const { rows } = await this.client.query<{ id: string; pos: string; doc: string | null }>(
        `SELECT id, pos, CASE WHEN id = ANY($2::text[]) THEN doc::text END AS doc FROM ${tableName(collection, this.generation)} WHERE id = ANY($1::text[])`,
        [[...ids].map(encodeText), [...whole].map(encodeText)],
      );
      const found = new Map(rows.map((r) => [r.id, r]));
      for (const id of ids) {
        const r = found.get(encodeText(id));
        const row = r ? { doc: r.doc === null ? {} : fromJsonb<Record<string, unknown>>(r.doc), pos: Number(r.pos) } : undefined;
        this.rows.set(key(collection, id), { collection, id, row, dirty: false, loaded: whole.has(id) || !r });
      }
    }
  }

  private entry(collection: string, id: string): Entry {
    const e = this.rows.get(key(collection, id));
    if (!e) throw new Error(`read store: row ${collection}/${id} was not loaded before its op`);
    return e;
  }

  private apply(op: ReadOp, position: number, guarded: boolean, blind: boolean): void {
    if (op.op === 'deleteWhere') throw new Error('deleteWhere runs between runs');
    if (op.onlyIf && !this.holds(op.collection, op.onlyIf)) return;
    switch (op.op) {
      case 'put': {
        const e = blind ? this.blindEntry(op.collection, op.doc.id) : this.entry(op.collection, op.doc.id);
        if (guarded && e.row && e.row.pos >= position) return;
        e.row = { doc: op.doc, pos: Math.max(position, e.row?.pos ?? 0) };
        e.dirty = true;
        e.loaded = true;
        return;
      }
      case 'patch': {
        const e = this.entry(op.collection, op.id);
        if (!e.row && op.create) e.row = { doc: { ...op.create, id: op.id }, pos: 0 };
        if (!e.row || (guarded && e.row.pos >= position)) return;
        e.row = { doc: applyPatch(e.row.doc, op), pos: Math.max(position, e.row.pos) };
        e.dirty = true;
        return;
      }
      case 'delete': {
        const e = this.entry(op.collection, op.id);
        e.row = undefined;
        e.dirty = true;
        e.loaded = true;
        return;
      }
      default:
        assertNever(op);
    }
  }

  private blindEntry(collection: string, id: string): Entry {
    const k = key(collection, id);
    let e = this.rows.get(k);
    if (!e) {
      e = { collection, id, row: undefined, dirty: false, loaded: false, blind: true };
      this.rows.set(k, e);
    }
    return e;
  }

  private holds(collection: string, guard: RowGuard): boolean {
    const row = this.entry(collection, guard.id).row;
    return row !== undefined && row.doc[guard.field] === guard.equals;
  }

  /** Deletes first: a batch that deletes a row and puts another with the same unique value must not collide. */
  private async flush(guarded: boolean): Promise<void> {
    const byCollection = new Map<string, Entry[]>();
    for (const e of this.rows.values()) {
      if (!e.dirty) continue;
      byCollection.set(e.collection, [...(byCollection.get(e.collection) ?? []), e]);
      e.dirty = false;
    }
    for (const [collection, entries] of byCollection) {
      const table = tableName(collection, this.generation);
      const gone = entries.filter((e) => !e.row).map((e) => encodeText(e.id));
      if (gone.length) await this.client.query(`DELETE FROM ${table} WHERE id = ANY($1::text[])`, [gone]);
      for (const blind of [false, true]) {
        const kept = entries.filter((e) => e.row && !!e.blind === blind).map((e) => [e.id, e.row!.doc, e.row!.pos]);
        if (kept.length === 0) continue;
        // Unread rows: guarded, a stored row at or after the put's position stays; replaying, the position only grows.
        const update = !blind
          ? 'SET doc = excluded.doc, pos = excluded.pos'
          : guarded
            ? `SET doc = excluded.doc, pos = excluded.pos WHERE ${table}.pos < excluded.pos`
            : `SET doc = excluded.doc, pos = GREATEST(${table}.pos, excluded.pos)`;
        await this.client.query(
          `INSERT INTO ${table} (id, doc, pos) SELECT e ->> 0, e -> 1, (e ->> 2)::bigint FROM jsonb_array_elements($1::jsonb) AS e
           ON CONFLICT (id) DO UPDATE ${update}`,
          // toJsonb encodes the ids in the array as it does the documents.
          [toJsonb(kept)],
        );
      }
    }
  }
}
