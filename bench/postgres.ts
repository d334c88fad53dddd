import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { EventStore } from '@lib/platform';
import { PostgresEventStore } from '@lib/platform/engines';
import { SqliteDatabase, SqliteEventStore } from '@lib/platform/sqlite';
import { measureAgents } from './agents';
import { appendRates } from './append';
import { percentile, report, round } from './common';
import { ingestOnce } from './ingest';
import { benchPostgres, BenchPostgres } from './postgres-server';
import { measureProjectionLag } from './projection-lag';
import { loadSciFact } from './scifact';

const ENGINES = ['embedded', 'postgresql'] as const;
type Engine = (typeof ENGINES)[number];

/** What one engine run hands its measurement: the service settings and, on PostgreSQL, its fresh database's URL. */
interface Log {
  readonly env: Record<string, string>;
  readonly postgresUrl?: string;
  /** A temporary directory for the embedded files (the log on the embedded engine, the read side on both). */
  readonly dir: string;
}

const OPTIONS = {
  rounds: 2,
  singles: 2000,
  batched: 20_000,
  appenders: 50,
  'lag-rate': 1000,
  'lag-seconds': 10,
  turns: 300,
  'concurrent-seconds': 10,
  documents: 1000,
} as const;
type Options = { -readonly [K in keyof typeof OPTIONS]: number } & { encoder: string };

function parse(args: string[]): Options {
  const options: Options = { ...OPTIONS, encoder: 'none' };
  for (const arg of args) {
    const [name, value] = arg.split('=');
    if (name === 'encoder') options.encoder = value;
    else if (name in OPTIONS && Number.isFinite(Number(value))) options[name as keyof typeof OPTIONS] = Number(value);
    else throw new Error(`postgres bench: unknown or malformed argument "${arg}" (name=value, names: ${[...Object.keys(OPTIONS), 'encoder'].join(', ')})`);
  }
  return options;
}

/**
 * Issue 47's figures on both event logs in one run: the embedded default (SQLite, synchronous=FULL) and PostgreSQL
 * (fsync on; each process keeps its embedded read models, projected from the log). Every measurement gets a fresh log
 * (a new temporary directory, or a new database), the order of the two engines alternates from one figure and one
 * round to the next, and the table shows each round's figures and their ratio. The measurements are the other benches' own
 * (append.ts, projection-lag.ts, agents.ts, ingest.ts), given the engine.
 */
export async function postgresBench(args: string[]): Promise<void> {
  const o = parse(args);
  const docs = loadSciFact('test').corpus.slice(0, o.documents);
  const loadBefore = loadavg();
  const pg = await benchPostgres();
  const samples: Record<string, Record<Engine, number[]>> = {};
  const add = (figure: string, engine: Engine, value: number): void => {
    (samples[figure] ??= { embedded: [], postgresql: [] })[engine].push(value);
  };
  try {
    const figures: ((engine: Engine, log: Log) => Promise<void>)[] = [
      async (engine, log) => {
        const { store, close } = await openLog(engine, log);
        try {
          const r = await appendRates(store, { singles: o.singles, batched: o.batched, appenders: o.appenders });
          add('appends/s, single, sequential', engine, r.single);
          add(`appends/s, single, ${o.appenders} concurrent appenders`, engine, r.concurrent);
          add('events/s, batched (100 per append)', engine, r.batched);
        } finally {
          await close();
        }
      },
      async (engine, log) => {
        const { store, close } = await openLog(engine, log);
        const readSide = new SqliteDatabase({ path: join(log.dir, 'service.db'), synchronous: 'FULL' });
        try {
          const lag = await measureProjectionLag(store, readSide, o['lag-rate'], o['lag-seconds']);
          add(`projection lag p50 ms (${o['lag-rate']} ev/s target)`, engine, percentile(lag.lags, 50));
          add(`projection lag p99 ms (${o['lag-rate']} ev/s target)`, engine, percentile(lag.lags, 99));
          add('projection lag: achieved ev/s', engine, lag.achieved);
        } finally {
          await close();
          readSide.close();
        }
      },
      async (engine, log) => {
        const f = await measureAgents({ turns: o.turns, concurrentSeconds: o['concurrent-seconds'], idleSessions: 0, env: log.env });
        add('agent turn p50 ms (scripted model)', engine, percentile(f.turnMs, 50));
        add('agent turn p99 ms (scripted model)', engine, percentile(f.turnMs, 99));
        add('agent turn overhead p50 ms (beyond the model call)', engine, percentile(f.turnMs.map((t, i) => t - f.directMs[i]), 50));
        add('50 concurrent sessions: turns/s', engine, f.concurrent.turnsPerS);
        add('50 concurrent sessions: events appended/s', engine, f.concurrent.eventsPerS);
      },
      // One figure per mode: each ingest needs a log of its own (the corpus key is taken in the first).
      ...(['searchable', 'indexed'] as const).map((waitFor) => async (engine: Engine, log: Log) => {
        const f = await ingestOnce(docs, o.encoder, waitFor, log.env);
        add(`ingest chunks/s until searchable (wait_for=${waitFor})`, engine, f.chunks / (f.searchableMs / 1000));
        if (waitFor === 'searchable') add(`ingest: chunks made of ${f.documents} SciFact documents`, engine, f.chunks);
      }),
    ];
    for (let r = 0; r < o.rounds; r++) {
      for (const [i, figure] of figures.entries()) {
        const order = (r + i) % 2 === 0 ? ENGINES : ([...ENGINES].reverse() as Engine[]);
        for (const engine of order) await onFreshLog(engine, pg, `f${i}`, (log) => figure(engine, log));
      }
    }
  } finally {
    await pg.close();
  }
  const loadAfter = loadavg();
  // Each round's figures side by side (two engines measured back to back), not a median: on a shared machine rounds
  // differ by several times, and the ratio within a round is what compares the engines.
  const rows = Object.entries(samples).map(([figure, v]) => {
    const digits = Math.abs(v.embedded[0]) >= 100 ? 0 : 2;
    const each = (xs: number[]) => xs.map((x) => round(x, digits)).join(' / ');
    return { figure, embedded: each(v.embedded), postgresql: each(v.postgresql), 'postgresql/embedded': v.embedded.map((e, i) => round(v.postgresql[i] / e)).join(' / ') };
  });
  report('postgres', rows, {
    rounds: o.rounds,
    options: o,
    embedded: 'SQLite, synchronous=FULL, the log in its own file (events.db), read models in service.db',
    postgresql: { server: pg.where, ...pg.settings, readSide: 'embedded SQLite read models (synchronous=FULL) projected in process from the log' },
    load: { before: loadBefore.map((l) => round(l)), after: loadAfter.map((l) => round(l)) },
    samples: Object.fromEntries(Object.entries(samples).map(([f, v]) => [f, { embedded: v.embedded.map((x) => round(x)), postgresql: v.postgresql.map((x) => round(x)) }])),
  });
}

/** A fresh log for one engine run: a new directory and, for PostgreSQL, a new database (dropped afterwards). */
async function onFreshLog(engine: Engine, pg: BenchPostgres, label: string, fn: (log: Log) => Promise<void>): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), `bench-pgcmp-${engine}-`));
  const db = engine === 'postgresql' ? await pg.database(label) : undefined;
  try {
    await fn({ dir, env: db ? { POSTGRES_URL: db.url } : {}, postgresUrl: db?.url });
  } finally {
    await db?.drop();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The event store alone, as the service opens it: SQLite's events.db (inline writer, FULL), or PostgreSQL's pool. */
async function openLog(engine: Engine, log: Log): Promise<{ store: EventStore; close(): Promise<void> }> {
  if (engine === 'postgresql') {
    const store = await PostgresEventStore.connect(log.postgresUrl!);
    return { store, close: () => store.close() };
  }
  const sqlite = new SqliteDatabase({ path: join(log.dir, 'events.db'), synchronous: 'FULL' });
  const store = new SqliteEventStore(sqlite);
  return {
    store,
    close: async () => {
      await store.close();
      sqlite.close();
    },
  };
}
