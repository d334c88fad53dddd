import { Clock, CommandContext, DomainError, EventStore, RecordedEvent, toNewEvents, uuidV5 } from '@lib/platform';
import { exceededQuota, NO_USAGE, Quota, TOKEN_WINDOWS, TokenUsage, windowOf } from '../../domain/quota';

/** Where a kind of subject (a model; later an agent) keeps its usage events, and how to read one. */
export interface UsageLedgerSpec {
  /** The stream holding the subject's usage for the UTC month of `at`. */
  stream(subject: string, at: Date): string;
  /** The usage an event records, or undefined for other events. */
  usageOf(event: RecordedEvent): { usage: TokenUsage; at: Date } | undefined;
}

interface Ledger {
  readonly month: string;
  readonly stream: string;
  revision: number;
  /** `minute:<id>`, `day:<id>`, `month:<id>` → tokens counted in that window. */
  readonly buckets: Map<string, TokenUsage>;
  /** Ids of events this process appended and counted, not yet seen by a read of the stream. */
  readonly own: Set<string>;
  refreshedAt: number;
  refreshing?: Promise<void>;
}

/**
 * Takes a call's usage append from a caller that stores its own result next: the caller starts the append in the
 * same turn of the event loop as its own, so both commit together (the embedded store's group commit: one fsync
 * instead of two) and the usage is durable when the caller's result is (docs/agents.md, What a turn commits).
 */
export interface UsageCarrier {
  carry(append: () => Promise<void>): void;
}

/** How often (real time, ms) a ledger re-reads its stream to count other processes' calls. */
const REFRESH_MS = 1000;

/**
 * Quota enforcement for any subject, counted from usage events (so counts survive restarts). Each process
 * loads a subject's month on first use, counts its own calls at once, and re-reads the stream every second
 * for calls made by other processes (docs/llms.md). Requests per second are counted in memory per process.
 */
export class QuotaEngine {
  private readonly ledgers = new Map<string, Ledger>();
  private readonly seconds = new Map<string, { id: string; count: number }>();
  /** Usage appends in flight, so shutdown can wait for them. */
  private readonly pending = new Set<Promise<unknown>>();

  constructor(
    private readonly store: EventStore,
    private readonly clock: Clock,
    private readonly spec: UsageLedgerSpec,
    private readonly onError: (e: unknown) => void,
  ) {}

  /** Admits one call for `subject` under `quota`, or throws 429 naming the quota and when it resets. */
  async admit(subject: string, label: string, quota: Quota | null): Promise<void> {
    if (!quota || Object.keys(quota).length === 0) return;
    const now = this.clock.now();
    const ledger = await this.ledger(subject, now);
    const second = windowOf('second', now).id;
    const rps = this.seconds.get(subject);
    const thisSecond = rps?.id === second ? rps.count : 0;
    const usage = (w: (typeof TOKEN_WINDOWS)[number]) => ledger.buckets.get(`${w}:${windowOf(w, now).id}`) ?? NO_USAGE;
    const exceeded = exceededQuota(quota, usage, thisSecond, now);
    if (exceeded) {
      const retry = Math.max(1, Math.ceil((exceeded.resetsAt.getTime() - now.getTime()) / 1000));
      throw new DomainError(
        'rate_limited',
        'llm.quota_exceeded',
        `Quota ${exceeded.quota} of ${label} is used up (${exceeded.used} of ${exceeded.limit}); it resets at ${exceeded.resetsAt.toISOString()}`,
        { retryAfterSeconds: retry },
      );
    }
    this.seconds.set(subject, { id: second, count: thisSecond + 1 });
  }

  /**
   * Counts a finished call at once (so concurrent admissions see it) and appends its usage event; resolves once
   * the event is durable, so a caller that waits before ending its response loses no usage record on a crash.
   * Concurrent calls share one commit: the embedded store groups the appends made in one turn of the event loop.
   * A failed append is reported to `onError` and does not reject: the call itself succeeded upstream. With a
   * `carrier`, the call is counted at once and the append is handed to it (resolves at once).
   */
  async record(subject: string, usage: TokenUsage, event: (at: Date) => { type: string; data: unknown }, ctx: CommandContext, carrier?: UsageCarrier, callId?: string): Promise<void> {
    const at = this.clock.now();
    const ledger = this.ledgers.get(subject);
    const stream = this.spec.stream(subject, at);
    // One usage event per call: its id derives from the request and the call, so an append retried for the same
    // call stores it once, and the several calls one request makes (an agent turn's model calls) are each stored.
    // Derived from the request alone, every call after a request's first was dropped as a duplicate (issue 44).
    const [derived] = toNewEvents([event(at)], ctx, stream, 1);
    const stored = callId ? { ...derived, id: uuidV5(`${ctx.commandId}|${stream}|call|${callId}`) } : derived;
    if (ledger && ledger.stream === stream && !ledger.own.has(stored.id)) {
      count(ledger.buckets, usage, at);
      ledger.own.add(stored.id);
    }
    const write = async (): Promise<void> => {
      const append = this.store.append(stream, [stored], { expectedRevision: 'any' }).catch(this.onError);
      this.pending.add(append);
      try {
        await append;
      } finally {
        this.pending.delete(append);
      }
    };
    if (carrier) carrier.carry(write);
    else await write();
  }

  /** Waits for every usage append in flight (shutdown). */
  async flush(): Promise<void> {
    await Promise.all([...this.pending]);
  }

  private async ledger(subject: string, now: Date): Promise<Ledger> {
    const month = windowOf('month', now).id;
    let ledger = this.ledgers.get(subject);
    if (!ledger || ledger.month !== month) {
      ledger = { month, stream: this.spec.stream(subject, now), revision: -1, buckets: new Map(), own: new Set(), refreshedAt: 0 };
      this.ledgers.set(subject, ledger);
      await this.refresh(ledger);
    } else if (Date.now() - ledger.refreshedAt > REFRESH_MS && !ledger.refreshing) {
      ledger.refreshing = this.refresh(ledger).catch(this.onError);
    }
    return ledger;
  }

  private async refresh(ledger: Ledger): Promise<void> {
    try {
      const events = await this.store.readStream(ledger.stream, { fromRevision: ledger.revision + 1 });
      for (const e of events) {
        ledger.revision = e.revision;
        if (ledger.own.delete(e.id)) continue;
        const recorded = this.spec.usageOf(e);
        if (recorded) count(ledger.buckets, recorded.usage, recorded.at);
      }
      ledger.refreshedAt = Date.now();
      prune(ledger.buckets, this.clock.now());
    } finally {
      ledger.refreshing = undefined;
    }
  }
}

function count(buckets: Map<string, TokenUsage>, usage: TokenUsage, at: Date): void {
  for (const w of TOKEN_WINDOWS) {
    const key = `${w}:${windowOf(w, at).id}`;
    const was = buckets.get(key) ?? NO_USAGE;
    buckets.set(key, { input: was.input + usage.input, output: was.output + usage.output });
  }
}

/** Drops windows that have ended, so a ledger holds at most the current minute, day and month. */
function prune(buckets: Map<string, TokenUsage>, now: Date): void {
  const current = new Set(TOKEN_WINDOWS.map((w) => `${w}:${windowOf(w, now).id}`));
  for (const key of buckets.keys()) if (!current.has(key)) buckets.delete(key);
}
