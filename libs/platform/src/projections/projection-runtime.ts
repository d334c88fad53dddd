import type { EventStore } from '../event-store/event-store.port';
import type { Projection, ProjectionSink, ProjectionStateStore } from './projection';
import { ProjectionWorker, WorkerOptions } from './projection-worker';
import { SharedBatches } from './shared-batches';

export interface ProjectionRegistration {
  readonly projection: Projection;
  readonly sink: ProjectionSink<unknown>;
}

export interface ProjectionLag {
  readonly projection: string;
  readonly generation: number;
  readonly checkpoint: number;
  readonly head: number;
  /** Positions between the checkpoint and the head of the log. */
  readonly behind: number;
  readonly running: boolean;
  readonly lastError?: string;
}

/** What write endpoints wait on: the projections a response and the next read depend on. */
export interface ProjectionProgress {
  /** Resolves true once every named projection has processed `position`, false after `timeoutMs`. */
  waitFor(position: number, projections: readonly string[], timeoutMs: number): Promise<boolean>;
}

export const PROJECTION_PROGRESS = Symbol('ProjectionProgress');

/** Runs every registered projection in this process. */
export class ProjectionRuntime implements ProjectionProgress {
  private readonly workers = new Map<string, ProjectionWorker>();
  private runs: Promise<void>[] = [];

  constructor(
    private readonly events: EventStore,
    private readonly state: ProjectionStateStore,
    registrations: readonly ProjectionRegistration[],
    options: Partial<WorkerOptions> = {},
  ) {
    const opts: WorkerOptions = {
      batchSize: options.batchSize ?? 1000,
      batchBudgetMs: options.batchBudgetMs,
      retryDelaysMs: options.retryDelaysMs ?? [50, 200, 800],
      log: options.log ?? (() => undefined),
      shared: options.shared ?? new SharedBatches(),
    };
    for (const r of registrations) this.workers.set(r.projection.name, new ProjectionWorker(r.projection, r.sink, events, state, opts));
  }

  names(): string[] {
    return [...this.workers.keys()];
  }

  /** Prepares every projection (rebuilding those whose version changed) without starting them. */
  async init(): Promise<void> {
    for (const w of this.workers.values()) await w.init();
  }

  async start(): Promise<void> {
    await this.init();
    this.runs = [...this.workers.values()].map((w) => w.run());
  }

  async stop(): Promise<void> {
    this.workers.forEach((w) => w.stop());
    await Promise.all(this.runs);
    this.runs = [];
  }

  waitFor(position: number, projections: readonly string[], timeoutMs: number): Promise<boolean> {
    const pending = projections.map((n) => this.worker(n)).filter((w) => w.processed < position);
    if (pending.length === 0) return Promise.resolve(true);
    return new Promise((resolve) => {
      const unsubscribe: (() => void)[] = [];
      const finish = (ok: boolean) => {
        clearTimeout(timer);
        unsubscribe.forEach((u) => u());
        resolve(ok);
      };
      const check = () => {
        if (pending.every((w) => w.processed >= position)) finish(true);
      };
      const timer = setTimeout(() => finish(false), timeoutMs);
      pending.forEach((w) => unsubscribe.push(w.onProgress(check)));
    });
  }

  async lag(): Promise<ProjectionLag[]> {
    const head = await this.events.headPosition();
    return [...this.workers.values()].map((w) => ({
      projection: w.name,
      generation: w.generation,
      checkpoint: w.processed,
      head,
      behind: Math.max(0, head - w.processed),
      running: w.isRunning,
      lastError: w.lastError,
    }));
  }

  async rebuild(name: string): Promise<void> {
    await this.worker(name).rebuild();
  }

  deadLetters(projection?: string) {
    if (projection) this.worker(projection);
    return this.state.deadLetters(projection);
  }

  async replay(projection: string, position: number): Promise<void> {
    await this.worker(projection).replay(position);
  }

  private worker(name: string): ProjectionWorker {
    const w = this.workers.get(name);
    if (!w) throw new Error(`Unknown projection "${name}"; known: ${this.names().join(', ')}`);
    return w;
  }
}

/**
 * Progress seen from a process that does not run the projections (an API replica): polls the checkpoints
 * the workers persist.
 */
export class PolledProjectionProgress implements ProjectionProgress {
  constructor(
    private readonly state: ProjectionStateStore,
    private readonly checkpoints: (projection: string, generation: number) => Promise<number>,
    private readonly intervalMs = 10,
  ) {}

  async waitFor(position: number, projections: readonly string[], timeoutMs: number): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const done = await Promise.all(
        projections.map(async (p) => {
          const active = await this.state.active(p);
          return active !== undefined && (await this.checkpoints(p, active.generation)) >= position;
        }),
      );
      if (done.every(Boolean)) return true;
      if (Date.now() >= deadline) return false;
      await new Promise((r) => setTimeout(r, this.intervalMs));
    }
  }
}
