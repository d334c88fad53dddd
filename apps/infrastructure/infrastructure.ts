import { join } from 'node:path';
import { CheckpointStore, EventStore, PolledProjectionProgress, TracedEventStore, ProjectionProgress, ProjectionRegistration, ProjectionRuntime, ProjectionSink, ProjectionStateStore, ReadOp, ReadStore, SearchIndex, SearchOp, ServiceConfig } from '@lib/platform';
import { SqliteCheckpointer, SqliteDatabase, SqliteEventStore, SqliteProjectionState, SqliteReadStore, SqliteSearchIndex } from '@lib/platform/sqlite';
import { ALL_PROJECTIONS, sinkOf } from '@projections';
import type { Logger } from 'pino';
import { eventStoreFile } from './event-store-file';
import { memoryRateLimits, mongoRateLimits, postgresRateLimits, RateLimits, sqliteRateLimits } from './rate-limits';
import { startTelemetry, telemetrySettings } from './telemetry';

export type Role = 'all' | 'api' | 'worker';

/** How long one projection batch may hold the event loop on the embedded sinks (docs/benchmarks.md, /health under ingest). */
const PROJECTION_BATCH_BUDGET_MS = 8;

/** The adapters behind each port, chosen by configuration (embedded SQLite unless a server URL is set). */
export interface Infrastructure {
  readonly events: EventStore;
  readonly reads: ReadStore & ProjectionSink<ReadOp>;
  readonly search: SearchIndex & ProjectionSink<SearchOp>;
  /** The recall index (session messages, docs/agents.md "Recall"): a search sink of its own, so its generations are its own. */
  readonly recall: SearchIndex & ProjectionSink<SearchOp>;
  readonly state: ProjectionStateStore;
  /** Present when this process runs the projections. */
  readonly runtime?: ProjectionRuntime;
  readonly progress: ProjectionProgress;
  readonly adapters: { events: string; reads: string; search: string };
  /** The edge's rate limiters, counting in a store every process shares (PostgreSQL, else MongoDB when configured, else SQLite). */
  readonly rateLimits: RateLimits;
  close(): Promise<void>;
}

/**
 * The rate limits' PostgreSQL pool and limiters (docs/security.md). A pool of its own, small, until the event store's
 * pool is shared with it; a connection that cannot be made in 5 s fails the count, which then counts in memory.
 */
async function postgresRateLimitsFor(url: string, log: Logger): Promise<{ limits: RateLimits; close: () => Promise<void> }> {
  const { Pool } = await import('pg');
  const pool = new Pool({ connectionString: url, max: 4, connectionTimeoutMillis: 5_000 });
  // An idle connection that the server ends (a restart) is an 'error' event: unheard, it would end the process.
  pool.on('error', (e) => log.warn({ err: { message: e.message, code: (e as { code?: string }).code } }, 'rate limits: a PostgreSQL connection failed'));
  try {
    const shared = await postgresRateLimits(pool);
    return { limits: shared.limits, close: () => (shared.close(), pool.end()) };
  } catch (e) {
    await pool.end();
    throw e;
  }
}

export async function createInfrastructure(config: ServiceConfig, role: Role, log: Logger): Promise<Infrastructure> {
  const tracing = telemetrySettings(config.env);
  const closers: (() => Promise<void> | void)[] = [];
  let sqlite: SqliteDatabase | undefined;
  const embedded = (): SqliteDatabase => {
    if (!sqlite) {
      sqlite = new SqliteDatabase({
        path: join(config.dataDir, 'service.db'),
        synchronous: config.sqliteSynchronous,
        onPermissionWarning: (message, details) => log.warn(details, message),
      });
      const db = sqlite;
      closers.push(() => db.close());
    }
    return sqlite;
  };

  let events: EventStore;
  let logInServiceDb = false;
  if (config.eventStoreUrl) {
    const { EventStoreDbEventStore } = await import('@lib/platform/engines');
    events = EventStoreDbEventStore.connect(config.eventStoreUrl);
  } else if (config.postgresUrl) {
    const { PostgresEventStore } = await import('@lib/platform/engines');
    events = await PostgresEventStore.connect(config.postgresUrl, { poolSize: config.postgresPoolSize, log: (level, message, fields) => log[level](fields ?? {}, message) });
  } else {
    const file = eventStoreFile(config.dataDir);
    let eventLog: SqliteDatabase;
    logInServiceDb = file.legacy;
    if (file.legacy) {
      log.warn({ path: file.path }, 'the event log stays in service.db (a data dir made before events.db): its commits share the projections\' write lock; docs/deployment.md says how to move it');
      eventLog = embedded();
    } else {
      eventLog = new SqliteDatabase({ path: file.path, synchronous: config.sqliteSynchronous, onPermissionWarning: (message, details) => log.warn(details, message) });
      closers.push(() => eventLog.close());
    }
    events = new SqliteEventStore(eventLog, { writer: config.eventStoreWriter });
  }
  closers.unshift(() => events.close());

  let state: ProjectionStateStore;
  let reads: Infrastructure['reads'];
  let rateLimits: RateLimits;
  // Shared counts matter where several processes serve the API: API replicas (`--role=api`), or any deployment on
  // MongoDB. The one-process default counts in memory unless told otherwise (docs/security.md).
  // With PostgreSQL, the processes may be on different hosts with a data dir each: they count in PostgreSQL.
  const sharedLimits = config.rateLimitStore === 'shared' || (config.rateLimitStore === 'auto' && (role === 'api' || !!config.mongoUrl || !!config.postgresUrl));
  const postgresLimits = sharedLimits && config.postgresUrl ? await postgresRateLimitsFor(config.postgresUrl, log) : undefined;
  if (postgresLimits) closers.push(postgresLimits.close);
  if (config.mongoUrl) {
    const { connectMongo } = await import('./mongo');
    const mongo = await connectMongo(config);
    closers.push(() => mongo.close());
    state = mongo.state;
    reads = mongo.reads;
    rateLimits = postgresLimits?.limits ?? (sharedLimits ? mongoRateLimits(mongo.client, config.mongoDatabase) : memoryRateLimits);
  } else {
    if (postgresLimits) rateLimits = postgresLimits.limits;
    else if (sharedLimits) {
      const shared = sqliteRateLimits(config.dataDir);
      closers.push(() => shared.close());
      rateLimits = shared.limits;
    } else rateLimits = memoryRateLimits;
    const sqliteState = new SqliteProjectionState(embedded());
    state = sqliteState;
    reads = new SqliteReadStore(embedded(), sqliteState);
  }

  let search: Infrastructure['search'];
  let recall: Infrastructure['recall'];
  if (config.typesenseUrl) {
    const { connectTypesense } = await import('./typesense');
    search = connectTypesense(config, state as CheckpointStore);
    recall = connectTypesense(config, state as CheckpointStore, 'recall');
  } else {
    const lexical = {
      minRows: config.lexicalIndexMinRows || Infinity,
      threadMinPostings: config.lexicalThreadMinPostings || Infinity,
      maxBytes: config.lexicalIndexMaxMb ? config.lexicalIndexMaxMb * 2 ** 20 : Infinity,
    };
    // Its own file: the embedded search index keeps its tables (and active generation) under fixed names.
    const recallDb = new SqliteDatabase({ path: join(config.dataDir, 'recall.db'), synchronous: config.sqliteSynchronous, onPermissionWarning: (message, details) => log.warn(details, message) });
    const sqliteRecall = new SqliteSearchIndex(recallDb, new SqliteProjectionState(recallDb), { dir: join(config.dataDir, 'ann-recall'), minVectors: Infinity }, lexical);
    closers.unshift(() => sqliteRecall.close());
    closers.push(() => recallDb.close());
    // As service.db's: the projection's commits never checkpoint (fsync) on the loop; after the close, the thread's end.
    const recallCheckpointer = new SqliteCheckpointer(recallDb);
    closers.push(() => recallCheckpointer.exited);
    recall = sqliteRecall;
    // The vector graphs are a cache beside the database file (docs/search.md): saved on close, rebuilt if lost.
    const sqliteSearch = new SqliteSearchIndex(
      embedded(),
      new SqliteProjectionState(embedded()),
      { dir: join(config.dataDir, 'ann'), minVectors: config.vectorIndexMinVectors || Infinity, maxBytes: config.vectorIndexMaxMb ? config.vectorIndexMaxMb * 2 ** 20 : Infinity },
      lexical,
      // Past a bound the corpus still answers, slower: an operator should see why (docs/deployment.md, "Memory").
      ({ index, to, rows }) =>
        to === 'fts5'
          ? log.warn({ index, parts: rows, boundMb: config.lexicalIndexMaxMb }, 'lexical postings over LEXICAL_INDEX_MAX_MB: this index ranks by FTS5 (slower) until a quarter of its parts are deleted or the service restarts')
          : log.warn({ index, vectors: rows, boundMb: config.vectorIndexMaxMb }, 'vector graphs over VECTOR_INDEX_MAX_MB: this index answers vector queries by the exact scan (slower) until a quarter of its vectors are deleted or the service restarts'),
    );
    closers.unshift(() => sqliteSearch.close());
    search = sqliteSearch;
  }

  // service.db's checkpoints never run inside a projection commit on the loop, whichever way the log commits (a log
  // still in service.db on its writer thread has them there already). The log's own file checkpoints where it
  // commits: inline, in the commit that crosses SQLite's threshold (a checkpointer beside inline commits was tried:
  // appends of up to 66-104 ms against 15 without, docs/benchmarks/2026-11-29-session-21.md); on the writer thread, there.
  if (sqlite && !(logInServiceDb && config.eventStoreWriter !== 'inline')) {
    const checkpointer = new SqliteCheckpointer(sqlite);
    // After service.db's own close (which tells the thread to close): closed means no connection left to the file.
    closers.push(() => checkpointer.exited);
  }

  const registrations: ProjectionRegistration[] = ALL_PROJECTIONS.map((projection) => ({
    projection,
    sink: sinkOf(projection, { reads, search, recall }),
  }));
  let runtime: ProjectionRuntime | undefined;
  let progress: ProjectionProgress;
  // With the log on PostgreSQL and the read models embedded, each process (API or worker, each with its own
  // DATA_DIR) keeps its own projections of the shared log: an API process runs them too (docs/deployment.md,
  // "Several hosts (PostgreSQL)"). Otherwise an API process reads what the workers project into the shared stores.
  const ownProjections = !!config.postgresUrl && !config.mongoUrl && !config.typesenseUrl;
  if (role !== 'api' || ownProjections) {
    runtime = new ProjectionRuntime(events, state, registrations, {
      // The embedded sinks write on the event loop: a backlog is worked off in writes of a few milliseconds each,
      // so a request arriving meanwhile (a health probe) waits for one of them, not for a thousand events.
      ...(sqlite ? { batchBudgetMs: PROJECTION_BATCH_BUDGET_MS } : {}),
      log: (level, message, fields) => log[level](fields ?? {}, message),
    });
    progress = runtime;
  } else {
    const sinks = new Map(registrations.map((r) => [r.projection.name, r.sink]));
    progress = new PolledProjectionProgress(state, (p, g) => sinks.get(p)!.checkpoint(p, g));
  }

  // Last, when nothing can fail any more; its shutdown runs after the stores closed, so it exports their last spans.
  const telemetry = tracing ? startTelemetry(tracing, log) : undefined;
  return {
    // The appends of requests, turns and deliveries as spans, their trace carried in the events' metadata.
    events: telemetry ? new TracedEventStore(events) : events,
    reads,
    search,
    recall,
    state,
    runtime,
    progress,
    rateLimits,
    adapters: {
      events: config.eventStoreUrl ? `eventstoredb ${serverOf(config.eventStoreUrl)}` : config.postgresUrl ? `postgresql ${serverOf(config.postgresUrl)}` : `sqlite ${join(config.dataDir, 'events.db')}`,
      reads: config.mongoUrl ? `mongodb ${serverOf(config.mongoUrl)}` : `sqlite ${join(config.dataDir, 'service.db')}${ownProjections ? ' (this process\'s own projections of the shared log)' : ''}`,
      search: config.typesenseUrl ? `typesense ${serverOf(config.typesenseUrl)}` : `sqlite ${join(config.dataDir, 'service.db')}`,
    },
    async close() {
      try {
        await runtime?.stop();
        for (const close of closers) await close();
      } finally {
        await telemetry?.shutdown();
      }
    },
  };
}

/** An engine's address for the start log: host, port and database, never the user or password. */
function serverOf(url: string): string {
  try {
    const u = new URL(url);
    return `${u.host}${u.pathname && u.pathname !== '/' ? u.pathname : ''}`;
  } catch {
    return '(unparsable URL)';
  }
}
