// Over 300 lines: one adapter whose query side and batched, position-guarded write side share the row encoding.
import type { Statement } from 'better-sqlite3';
import { assertNever } from '../../kernel/errors';
import { filterToSql, jsonPathLiteral } from '../../sqlite/sqlite-filter';
import type { ApplyOptions, PositionedOps, ProjectionShape, ProjectionSink, SharedTransaction } from '../../projections/projection';
import { SqliteDatabase } from '../../sqlite/sqlite-database';
import { SqliteProjectionState } from '../../sqlite/sqlite-projection-state';
import {
  Condition,
  cursorOfPageKey,
  encodePageKey,
  FindQuery,
  getPath,
  MetadataFilter,
  Page,
  ReadDoc,
  ReadOp,
  ReadStore,
  RowGuard,
} from '../read-store.port';
import { applyPatch } from '../patch';

/**
 * `json_extract(doc, '$."a"."b"')`, inlined so that expression indexes match the queries that use them. Labels
 * are JSON strings (`"a\\b"`), which SQLite reads with their escapes; for names without `\` or control
 * characters that is the text earlier versions wrote, so existing indexes still match.
 */
export function jsonPath(field: string): string {
  return `json_extract(doc, ${jsonPathLiteral(field.split('.'))})`;
}

const sqlValue = (v: unknown): unknown => (typeof v === 'boolean' ? (v ? 1 : 0) : v);
const OPS: Record<Exclude<Condition['op'], 'in'>, string> = { eq: '=', ne: '<>', lt: '<', lte: '<=', gt: '>', gte: '>=' };

export function conditionSql(conditions: readonly Condition[] | undefined, column: (field: string) => string = jsonPath): { sql: string; params: unknown[] } {
  const parts: string[] = [];
  const params: unknown[] = [];
  for (const c of conditions ?? []) {
    const col = c.field === 'id' ? 'id' : column(c.field);
    if (c.op === 'in') {
      parts.push(`${col} IN (SELECT value FROM json_each(?))`);
      params.push(JSON.stringify((c.value as unknown[]).map(sqlValue)));
    } else if (c.value === null) {
      parts.push(c.op === 'ne' ? `${col} IS NOT NULL` : `${col} IS NULL`);
    } else {
      parts.push(`${col} ${OPS[c.op]} ?`);
      params.push(sqlValue(c.value));
    }
  }
  return { sql: parts.length ? parts.join(' AND ') : '1', params };
}

/** Conditions and a metadata filter, AND-ed; the filter reads the metadata object at `docField` of the `doc` column. */
export function whereSql(where: readonly Condition[] | undefined, metadata: MetadataFilter | undefined): { sql: string; params: unknown[] } {
  const w = conditionSql(where);
  if (!metadata) return w;
  const params = [...w.params];
  const filter = filterToSql(metadata.filter, params, { doc: { column: 'doc', path: metadata.docField.split('.') } });
  return { sql: `${w.sql} AND ${filter}`, params };
}

/**
 * Read models as JSON documents in tables of the embedded database, one table per collection and generation
 * (`rm_<collection>_g<n>`); a registry names the generation queries read, so a rebuild swaps atomically.
 */
export class SqliteReadStore implements ReadStore, ProjectionSink<ReadOp> {
  private readonly activeGeneration: Statement;

  constructor(
    private readonly sqlite: SqliteDatabase,
    private readonly state: SqliteProjectionState,
  ) {
    sqlite.db.exec('CREATE TABLE IF NOT EXISTS rm_collections (name TEXT PRIMARY KEY, generation INTEGER NOT NULL) WITHOUT ROWID');
    this.activeGeneration = sqlite.db.prepare('SELECT generation FROM rm_collections WHERE name = ?').pluck();
  }

  private table(collection: string, generation?: number): string | undefined {
    const g = generation ?? (this.activeGeneration.get(collection) as number | undefined);
    return g === undefined ? undefined : `"rm_${collection}_g${g}"`;
  }

  private stmt(sql: string): Statement {
    return this.sqlite.statement(sql);
  }

  async get<T extends ReadDoc>(collection: string, id: string): Promise<T | undefined> {
    const t = this.table(collection);
    if (!t) return undefined;
    const doc = this.stmt(`SELECT doc FROM ${t} WHERE id = ?`).pluck().get(id) as string | undefined;
    return doc === undefined ? undefined : (JSON.parse(doc) as T);
  }

  async find<T extends ReadDoc>(collection: string, query: FindQuery): Promise<Page<T>> {
    // Translated first: a filter the store cannot run fails even where the collection is still empty.
    const where = whereSql(query.where, query.metadata);
    const t = this.table(collection);
    if (!t) return { items: [] };
    const sortField = query.sort?.field ?? 'id';
    const desc = query.sort?.direction === 'desc';
    const sortCol = sortField === 'id' ? 'id' : jsonPath(sortField);
    const params = [...where.params];
    let cursor = '';
    const key = cursorOfPageKey(query.pageKey);
    if (key) {
      const cmp = desc ? '<' : '>';
      if (sortField === 'id') {
        cursor = ` AND id ${cmp} ?`;
        params.push(key.id);
      } else if (key.sortValue === null || key.sortValue === undefined) {
        // NULLs sort first ascending and last descending; "> NULL" is never true, so NULL needs its own case.
        cursor = desc ? ` AND (${sortCol} IS NULL AND id < ?)` : ` AND (${sortCol} IS NOT NULL OR id > ?)`;
        params.push(key.id);
      } else {
        cursor = desc
          ? ` AND (${sortCol} < ? OR ${sortCol} IS NULL OR (${sortCol} = ? AND id < ?))`
          : ` AND (${sortCol} > ? OR (${sortCol} = ? AND id > ?))`;
        params.push(sqlValue(key.sortValue), sqlValue(key.sortValue), key.id);
      }
    }
    const dir = desc ? 'DESC' : 'ASC';
    const order = sortField === 'id' ? `id ${dir}` : `${sortCol} ${dir}, id ${dir}`;
    const rows = this.stmt(`SELECT doc FROM ${t} WHERE ${where.sql}${cursor} ORDER BY ${order} LIMIT ?`)
      .pluck()
      .all(...params, query.limit + 1) as string[];
    const items = rows.slice(0, query.limit).map((r) => JSON.parse(r) as T);
    const last = items[items.length - 1];
    return rows.length > query.limit && last
      ? { items, nextPageKey: encodePageKey(sortField === 'id' ? last.id : getPath(last, sortField), last.id) }
      : { items };
  }

  async count(collection: string, where?: readonly Condition[], metadata?: MetadataFilter): Promise<number> {
    const w = whereSql(where, metadata);
    const t = this.table(collection);
    if (!t) return 0;
    return this.stmt(`SELECT COUNT(*) FROM ${t} WHERE ${w.sql}`).pluck().get(...w.params) as number;
  }

  async sum<F extends string>(collection: string, fields: readonly F[], where?: readonly Condition[]): Promise<Record<F, number>> {
    const t = this.table(collection);
    const zero = Object.fromEntries(fields.map((f) => [f, 0])) as Record<F, number>;
    if (!t || fields.length === 0) return zero;
    const w = conditionSql(where);
    const sums = fields.map((f) => {
      const path = jsonPathLiteral(f.split('.'));
      return `COALESCE(SUM(CASE WHEN json_type(doc, ${path}) IN ('integer', 'real') THEN json_extract(doc, ${path}) END), 0)`;
    });
    const row = this.stmt(`SELECT ${sums.join(', ')} FROM ${t} WHERE ${w.sql}`).raw().get(...w.params) as number[];
    return Object.fromEntries(fields.map((f, i) => [f, row[i]])) as Record<F, number>;
  }

  async ping(): Promise<void> {
    this.sqlite.db.prepare('SELECT 1').get();
  }

  async prepare(projection: ProjectionShape, generation: number): Promise<void> {
    this.sqlite.transaction(() => {
      for (const spec of projection.collections ?? []) {
        const t = this.table(spec.name, generation)!;
        this.sqlite.db.exec(`CREATE TABLE IF NOT EXISTS ${t} (id TEXT PRIMARY KEY, doc TEXT NOT NULL, pos INTEGER NOT NULL) WITHOUT ROWID`);
        (spec.indexes ?? []).forEach((ix, i) => {
          const cols = ix.fields.map((f) => (f === 'id' ? 'id' : jsonPath(f))).join(', ');
          const name = `"rm_${spec.name}_g${generation}_i${i}"`;
          this.sqlite.db.exec(`CREATE ${ix.unique ? 'UNIQUE ' : ''}INDEX IF NOT EXISTS ${name} ON ${t} (${cols})`);
        });
        // A collection read before its projection ever ran reads as empty, not as missing.
        this.sqlite.db.prepare('INSERT OR IGNORE INTO rm_collections (name, generation) VALUES (?, ?)').run(spec.name, generation);
      }
    });
  }

  async applyBatch(projection: string, generation: number, batch: readonly PositionedOps<ReadOp>[], checkpoint: number, options: ApplyOptions = {}): Promise<void> {
    this.sqlite.transaction(() => {
      // A replay of events at or before the checkpoint (a retried batch) applies nothing twice.
      const applied = options.replay ? -1 : this.state.loadSync(projection, generation);
      const pending = new PendingWrites(this, generation);
      for (const { position, ops } of batch) {
        if (position > applied) for (const op of ops) pending.apply(op, position, !options.replay);
      }
      pending.flush();
      if (!options.replay) this.state.saveSync(projection, generation, checkpoint);
    }, 'derived');
  }

  get sharedTransaction(): SharedTransaction {
    return this.sqlite.derivedTransactions;
  }

  /** Current row of a document, for the batch cache. */
  readRow(collection: string, generation: number, id: string): StoredRow | undefined {
    const row = this.stmt(`SELECT doc, pos FROM ${this.table(collection, generation)} WHERE id = ?`).get(id) as { doc: string; pos: number } | undefined;
    return row && { doc: JSON.parse(row.doc) as Record<string, unknown>, pos: row.pos };
  }

  readPosition(collection: string, generation: number, id: string): number | undefined {
    return this.stmt(`SELECT pos FROM ${this.table(collection, generation)} WHERE id = ?`).pluck().get(id) as number | undefined;
  }

  writeRow(collection: string, generation: number, id: string, row: StoredRow | undefined): void {
    const t = this.table(collection, generation);
    if (row) {
      this.stmt(`INSERT INTO ${t} (id, doc, pos) VALUES (?, ?, ?) ON CONFLICT (id) DO UPDATE SET doc = excluded.doc, pos = excluded.pos`).run(id, JSON.stringify(row.doc), row.pos);
    } else this.stmt(`DELETE FROM ${t} WHERE id = ?`).run(id);
  }

  deleteWhere(collection: string, generation: number, where: readonly Condition[]): void {
    const w = conditionSql(where);
    this.stmt(`DELETE FROM ${this.table(collection, generation)} WHERE ${w.sql}`).run(...w.params);
  }

  async checkpoint(projection: string, generation: number): Promise<number> {
    return this.state.loadSync(projection, generation);
  }

  async activate(projection: ProjectionShape, generation: number): Promise<void> {
    this.sqlite.transaction(() => {
      for (const spec of projection.collections ?? []) {
        const old = this.activeGeneration.get(spec.name) as number | undefined;
        this.sqlite.db
          .prepare('INSERT INTO rm_collections (name, generation) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET generation = excluded.generation')
          .run(spec.name, generation);
        if (old !== undefined && old !== generation) this.sqlite.db.exec(`DROP TABLE IF EXISTS ${this.table(spec.name, old)}`);
      }
    });
    this.sqlite.forgetStatements();
  }
}

interface StoredRow {
  doc: Record<string, unknown>;
  pos: number;
}

/**
 * The writes of one batch, held per document so that a document touched by many events of a batch (a
 * corpus's counters) is read and written once. Position guards as on MongoDB: a document already written by
 * a later event is left alone, which keeps a replay after a crash harmless.
 */
class PendingWrites {
  /** `loaded` is false while only the stored position is known (a put needs no more). */
  private readonly rows = new Map<string, { collection: string; id: string; row: StoredRow | undefined; dirty: boolean; loaded: boolean }>();

  constructor(
    private readonly store: SqliteReadStore,
    private readonly generation: number,
  ) {}

  private entry(collection: string, id: string) {
    const key = `${collection}\u0000${id}`;
    let e = this.rows.get(key);
    if (!e || !e.loaded) {
      e = { collection, id, row: this.store.readRow(collection, this.generation, id), dirty: false, loaded: true };
      this.rows.set(key, e);
    }
    return e;
  }

  /** A put replaces the whole document: only the stored position is needed for its guard. */
  private putEntry(collection: string, id: string) {
    const key = `${collection}\u0000${id}`;
    let e = this.rows.get(key);
    if (!e) {
      const pos = this.store.readPosition(collection, this.generation, id);
      e = { collection, id, row: pos === undefined ? undefined : { doc: {}, pos }, dirty: false, loaded: pos === undefined };
      this.rows.set(key, e);
    }
    return e;
  }

  apply(op: ReadOp, position: number, guarded: boolean): void {
    if (op.onlyIf && !this.holds(op.collection, op.onlyIf)) return;
    switch (op.op) {
      case 'put': {
        const e = this.putEntry(op.collection, op.doc.id);
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
        return;
      }
      case 'deleteWhere':
        this.flush();
        this.rows.clear();
        this.store.deleteWhere(op.collection, this.generation, op.where);
        return;
      default:
        assertNever(op);
    }
  }

  private holds(collection: string, guard: RowGuard): boolean {
    const row = this.entry(collection, guard.id).row;
    return row !== undefined && row.doc[guard.field] === guard.equals;
  }

  flush(): void {
    for (const e of this.rows.values()) {
      if (e.dirty) this.store.writeRow(e.collection, this.generation, e.id, e.row);
      e.dirty = false;
    }
  }
}
