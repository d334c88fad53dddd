import type { DeadLetter, ProjectionStateStore } from '../projections/projection';
import { SqliteDatabase } from './sqlite-database';

const SCHEMA = `
CREATE TABLE IF NOT EXISTS projection_state (
  name TEXT PRIMARY KEY, generation INTEGER NOT NULL, version INTEGER NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS projection_checkpoints (
  name TEXT NOT NULL, generation INTEGER NOT NULL, position INTEGER NOT NULL, PRIMARY KEY (name, generation)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS projection_dead_letters (
  projection TEXT NOT NULL, position INTEGER NOT NULL, letter TEXT NOT NULL, PRIMARY KEY (projection, position)
) WITHOUT ROWID;
`;

/** Projection bookkeeping in the embedded database; SQLite sinks write checkpoints inside their transactions. */
export class SqliteProjectionState implements ProjectionStateStore {
  private readonly saveStmt;
  private readonly loadStmt;
  /** Read by every worker on every cycle (to follow a rebuild made by another process): prepared once. */
  private readonly activeStmt;

  constructor(private readonly sqlite: SqliteDatabase) {
    sqlite.db.exec(SCHEMA);
    this.saveStmt = sqlite.db.prepare(
      `INSERT INTO projection_checkpoints (name, generation, position) VALUES (?, ?, ?)
       ON CONFLICT (name, generation) DO UPDATE SET position = MAX(position, excluded.position)`,
    );
    this.loadStmt = sqlite.db.prepare('SELECT position FROM projection_checkpoints WHERE name = ? AND generation = ?').pluck();
    this.activeStmt = sqlite.db.prepare('SELECT generation, version FROM projection_state WHERE name = ?');
  }

  /** For use inside a caller's transaction. */
  saveSync(projection: string, generation: number, position: number): void {
    this.saveStmt.run(projection, generation, position);
  }

  loadSync(projection: string, generation: number): number {
    return (this.loadStmt.get(projection, generation) as number | undefined) ?? 0;
  }

  async load(projection: string, generation: number): Promise<number> {
    return this.loadSync(projection, generation);
  }

  async save(projection: string, generation: number, position: number): Promise<void> {
    this.saveSync(projection, generation, position);
  }

  async active(projection: string): Promise<{ generation: number; version: number } | undefined> {
    return this.activeStmt.get(projection) as
      | { generation: number; version: number }
      | undefined;
  }

  async setActive(projection: string, generation: number, version: number): Promise<void> {
    this.sqlite.transaction(() => {
      this.sqlite.db
        .prepare(
          `INSERT INTO projection_state (name, generation, version) VALUES (?, ?, ?)
           ON CONFLICT (name) DO UPDATE SET generation = excluded.generation, version = excluded.version`,
        )
        .run(projection, generation, version);
      this.sqlite.db.prepare('DELETE FROM projection_checkpoints WHERE name = ? AND generation <> ?').run(projection, generation);
    });
  }

  async park(letter: DeadLetter): Promise<void> {
    this.sqlite.db
      .prepare('INSERT OR REPLACE INTO projection_dead_letters (projection, position, letter) VALUES (?, ?, ?)')
      .run(letter.projection, letter.position, JSON.stringify(letter));
  }

  async deadLetters(projection?: string): Promise<DeadLetter[]> {
    const rows = (
      projection
        ? this.sqlite.db.prepare('SELECT letter FROM projection_dead_letters WHERE projection = ? ORDER BY position').all(projection)
        : this.sqlite.db.prepare('SELECT letter FROM projection_dead_letters ORDER BY projection, position').all()
    ) as { letter: string }[];
    return rows.map((r) => JSON.parse(r.letter) as DeadLetter);
  }

  async unpark(projection: string, position: number): Promise<void> {
    this.sqlite.db.prepare('DELETE FROM projection_dead_letters WHERE projection = ? AND position = ?').run(projection, position);
  }
}
