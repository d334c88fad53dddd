import Database from 'better-sqlite3';
import { EventEmitter } from 'node:events';
import { dirname } from 'node:path';
import * as sqliteVec from 'sqlite-vec';
import { ensurePrivateDir, ensurePrivateFile, PermissionWarning } from '../files/private-files';

export interface SqliteDatabaseOptions {
  /** File path, or ':memory:' for tests. */
  readonly path: string;
  readonly synchronous?: 'FULL' | 'NORMAL';
  /** Told when an existing database file was readable by others (it is tightened to 0600 regardless). */
  readonly onPermissionWarning?: PermissionWarning;
}

/** The files SQLite keeps beside the database in WAL mode. */
const SIDE_FILES = ['-wal', '-shm'] as const;

/**
 * One of the embedded default's database files: `service.db` holds the read models, search index and checkpoints,
 * so a projection's writes and its checkpoint commit in one transaction (G6); `events.db` holds the log
 * (apps/infrastructure/event-store-file.ts). better-sqlite3 is synchronous and every transaction on this connection
 * runs without awaiting, so they never interleave; with `EVENT_STORE_WRITER=thread` the log's appends commit on the
 * writer thread's own connection, serialised with this one's by SQLite's write lock (IMMEDIATE).
 */
export class SqliteDatabase {
  readonly db: Database.Database;
  /** Emits 'appended' with what each commit of events made through this connection added (sqlite-event-store.ts). */
  readonly notifier = new EventEmitter();
  private closed = false;
  private readonly closing: (() => void)[] = [];
  private readonly statements = new Map<string, Database.Statement>();

  constructor(readonly options: SqliteDatabaseOptions) {
    const onDisk = options.path !== ':memory:';
    // Events hold credentials' digests and sealed secrets: the files are the owner's only (docs/security.md).
    if (onDisk) {
      ensurePrivateDir(dirname(options.path));
      ensurePrivateFile(options.path, options.onPermissionWarning);
      for (const side of SIDE_FILES) ensurePrivateFile(options.path + side, options.onPermissionWarning, false);
    }
    this.db = new Database(options.path);
    this.db.pragma('journal_mode = WAL');
    // SQLite creates these with the database file's mode; set them anyway so no umask or version can widen them.
    if (onDisk) for (const side of SIDE_FILES) ensurePrivateFile(options.path + side, undefined, false);
    this.synchronous = options.synchronous ?? 'FULL';
    this.db.pragma(`synchronous = ${this.synchronous}`);
    this.db.pragma('busy_timeout = 5000');
    this.db.pragma('foreign_keys = ON');
    sqliteVec.load(this.db);
    this.notifier.setMaxListeners(0);
  }

  private synchronous: 'FULL' | 'NORMAL';

  /**
   * Runs `fn` in an IMMEDIATE transaction (takes the write lock up front, so no upgrade deadlock).
   * `derived` transactions (projection writes with their checkpoint) commit with synchronous=NORMAL: a power
   * loss may roll back their last commits, checkpoint included, and the projection replays them from the log.
   * Appends keep the configured level, so an acknowledged event survives power loss under FULL.
   */
  transaction<T>(fn: () => T, kind: 'durable' | 'derived' = 'durable'): T {
    // Nested (a sink's batch inside the projections' shared transaction): a savepoint, at the outer one's level.
    if (this.db.inTransaction) return this.db.transaction(fn).immediate();
    const wanted = kind === 'derived' ? 'NORMAL' : (this.options.synchronous ?? 'FULL');
    if (wanted !== this.synchronous) {
      this.db.pragma(`synchronous = ${wanted}`);
      this.synchronous = wanted;
    }
    try {
      return this.db.transaction(fn).immediate();
    } finally {
      this.runAfterCommit();
    }
  }

  /**
   * Adds a column a later release introduced to a table files made before lack, once, even when several processes
   * open the same file at the same moment: the check and the ALTER run under the write lock (IMMEDIATE), so a process
   * that waited for another's ALTER sees the column and adds nothing ("duplicate column name" stopped a worker that
   * started beside another on one data directory).
   */
  addColumnIfMissing(table: string, column: string, type: string): void {
    this.db
      .transaction(() => {
        const columns = this.db.prepare(`PRAGMA table_info(${table})`).all() as { name: string }[];
        if (!columns.some((c) => c.name === column)) this.db.exec(`ALTER TABLE ${table} ADD COLUMN ${column} ${type}`);
      })
      .immediate();
  }

  /**
   * The projections' shared transaction on this connection (projections/shared-batches.ts): the read store and the
   * search index return this same object, so the runtime commits their batches of one wake-up together.
   */
  readonly derivedTransactions = { run: (work: () => void): void => this.transaction(work, 'derived') };

  /**
   * Runs `fn` once the outermost transaction under way has ended (at once when none is): what a nested batch tells
   * other connections (the vector graphs' thread) must wait until its rows are committed and visible to them.
   */
  afterCommit(fn: () => void): void {
    if (this.db.inTransaction) this.pendingAfterCommit.push(fn);
    else fn();
  }

  private readonly pendingAfterCommit: (() => void)[] = [];

  /** Every callback runs even if one throws (the first error is rethrown after): none is lost for another's fault. */
  private runAfterCommit(): void {
    let failure: { error: unknown } | undefined;
    for (const fn of this.pendingAfterCommit.splice(0)) {
      try {
        fn();
      } catch (error) {
        failure ??= { error };
      }
    }
    if (failure) throw failure.error;
  }

  /** A prepared statement, cached by its SQL text (adapters build SQL per table, so the cache is per text). */
  statement(sql: string): Database.Statement {
    let s = this.statements.get(sql);
    if (!s) {
      s = this.db.prepare(sql);
      this.statements.set(sql, s);
    }
    return s;
  }

  /** Drops cached statements (after tables were dropped: their statements would fail). */
  forgetStatements(): void {
    this.statements.clear();
  }

  /**
   * Another connection (the event store's writer thread) checkpoints the WAL: this one never does, so its commits
   * (projections', at synchronous=NORMAL) never fsync on the event loop.
   */
  handOverCheckpoints(): void {
    this.db.pragma('wal_autocheckpoint = 0');
  }

  /** Runs `fn` when the database is closed, before this connection closes (the writer thread finishes its work). */
  onClose(fn: () => void): void {
    this.closing.push(fn);
  }

  get isOpen(): boolean {
    return !this.closed;
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.closing.splice(0).forEach((fn) => fn());
    this.db.close();
  }
}
