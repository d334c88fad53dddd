import type { Statement } from 'better-sqlite3';
import { assertNever } from '../../kernel/errors';
import type { ApplyOptions, PositionedOps, ProjectionShape, ProjectionSink } from '../../projections/projection';
import { SqliteDatabase } from '../../sqlite/sqlite-database';
import { SqliteProjectionState } from '../../sqlite/sqlite-projection-state';
import {
  Condition,
  decodePageKey,
  encodePageKey,
  FindQuery,
  getPath,
  Page,
  ReadDoc,
  ReadOp,
  ReadStore,
} from '../read-store.port';
import { applyPatch } from '../patch';

/** `json_extract(doc, '$."a"."b"')`, inlined so that expression indexes match the queries that use them. */
export function jsonPath(field: string): string {
  const path = '$.' + field.split('.').map((p) => `"${p.replace(/"/g, '\\"')}"`).join('.');
  return `json_extract(doc, '${path.replace(/'/g, "''")}')`;
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

/**
 * Read models as JSON documents in tables of the embedded database, one table per collection and generation
 * (`rm_<collection>_g<n>`); a registry names the generation queries read, so a rebuild swaps atomically.
 */
export class SqliteReadStore implements ReadStore, ProjectionSink<ReadOp> {
  private readonly statements = new Map<string, Statement>();
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
    let s = this.statements.get(sql);
    if (!s) {
      s = this.sqlite.db.prepare(sql);
      this.statements.set(sql, s);
    }
    return s;
  }

  async get<T extends ReadDoc>(collection: string, id: string): Promise<T | undefined> {
    const t = this.table(collection);
    if (!t) return undefined;
    const doc = this.stmt(`SELECT doc FROM ${t} WHERE id = ?`).pluck().get(id) as string | undefined;
    return doc === undefined ? undefined : (JSON.parse(doc) as T);
  }

  async find<T extends ReadDoc>(collection: string, query: FindQuery): Promise<Page<T>> {
    const t = this.table(collection);
    if (!t) return { items: [] };
    const where = conditionSql(query.where);
    const sortField = query.sort?.field ?? 'id';
    const desc = query.sort?.direction === 'desc';
    const sortCol = sortField === 'id' ? 'id' : jsonPath(sortField);
    const params = [...where.params];
    let cursor = '';
    const key = query.pageKey ? decodePageKey(query.pageKey) : undefined;
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

  async count(collection: string, where?: readonly Condition[]): Promise<number> {
    const t = this.table(collection);
    if (!t) return 0;
    const w = conditionSql(where);
    return this.stmt(`SELECT COUNT(*) FROM ${t} WHERE ${w.sql}`).pluck().get(...w.params) as number;
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
      for (const { position, ops } of batch) {
        if (position > applied) for (const op of ops) this.applyOp(op, generation, position, !options.replay);
      }
      if (!options.replay) this.state.saveSync(projection, generation, checkpoint);
    });
  }

  private applyOp(op: ReadOp, generation: number, position: number, guarded: boolean): void {
    const t = this.table(op.collection, generation)!;
    switch (op.op) {
      case 'put':
        // Position guards, as on MongoDB: a document already written by a later event is left alone.
        this.stmt(`INSERT INTO ${t} (id, doc, pos) VALUES (?, ?, ?) ON CONFLICT (id) DO UPDATE SET doc = excluded.doc, pos = MAX(pos, excluded.pos) WHERE excluded.pos > pos OR ?`).run(
          op.doc.id,
          JSON.stringify(op.doc),
          position,
          guarded ? 0 : 1,
        );
        return;
      case 'patch': {
        const current = this.stmt(`SELECT doc, pos FROM ${t} WHERE id = ?`).get(op.id) as { doc: string; pos: number } | undefined;
        if (current === undefined || (guarded && current.pos >= position)) return;
        const doc = applyPatch(JSON.parse(current.doc) as Record<string, unknown>, op);
        this.stmt(`UPDATE ${t} SET doc = ?, pos = ? WHERE id = ?`).run(JSON.stringify(doc), Math.max(position, current.pos), op.id);
        return;
      }
      case 'delete':
        this.stmt(`DELETE FROM ${t} WHERE id = ?`).run(op.id);
        return;
      case 'deleteWhere': {
        const w = conditionSql(op.where);
        this.stmt(`DELETE FROM ${t} WHERE ${w.sql}`).run(...w.params);
        return;
      }
      default:
        assertNever(op);
    }
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
    this.statements.clear();
  }
}
