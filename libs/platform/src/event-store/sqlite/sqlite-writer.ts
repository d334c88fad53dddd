import type { Worker } from 'node:worker_threads';
import type { GroupOutcome, PendingAppend } from './sqlite-appender';
import type { WriterReply, WriterRequest, WriterThreadOptions } from './sqlite-writer-thread';
import { siblingWorker } from '../../kernel/sibling-worker';

/**
 * The main thread's side of the writer thread. One group is in flight at a time: appends made while it commits
 * wait in `queue` and go together as the next group (group commit grows with load, one fsync per group).
 */
export class SqliteWriter {
  private readonly worker: Worker;
  private readonly queue: { item: PendingAppend; settle: (r: GroupOutcome, index: number) => void }[] = [];
  private inFlight: { id: number; settles: ((r: GroupOutcome, index: number) => void)[] } | undefined;
  private readonly sent = new Map<number, { items: PendingAppend[]; settles: ((r: GroupOutcome, index: number) => void)[] }>();
  private nextId = 1;
  private broken: string | undefined;
  private closing: Promise<void> | undefined;

  /**
   * `onCommitted` hears each group and its outcome before any of its appends is settled. With `commitInline` (the
   * `auto` writer), a group of one append found with nothing in flight is committed by it, on the caller's
   * connection, instead of by the thread.
   */
  constructor(
    options: WriterThreadOptions,
    private readonly onCommitted: (items: readonly PendingAppend[], result: GroupOutcome) => void,
    private readonly commitInline?: (items: readonly PendingAppend[]) => GroupOutcome,
  ) {
    this.worker = siblingWorker(__dirname, 'sqlite-writer-thread', {
      workerData: options,
    });
    // Idle, the thread keeps no process alive; while a group is out it does (a script awaiting an append).
    this.worker.unref();
    this.worker.on('message', (reply: WriterReply) => this.onReply(reply));
    this.worker.on('error', (e) => this.fail(`the event store's writer thread failed: ${e.message}`));
    this.worker.on('exit', (code) => this.fail(`the event store's writer thread exited (code ${code})`));
  }

  /** Commits `item` in the next group; resolves with the group's outcome and the item's index in it. */
  submit(item: PendingAppend): Promise<{ result: GroupOutcome; index: number }> {
    return new Promise((resolve, reject) => {
      if (this.broken) return reject(new Error(this.broken));
      if (this.closing) return reject(new Error('the event store is closed'));
      this.queue.push({ item, settle: (result, index) => resolve({ result, index }) });
      // Appends made in the same turn of the loop go together even when the thread is idle.
      if (this.queue.length === 1 && !this.inFlight) setImmediate(() => this.send());
    });
  }

  private send(): void {
    if (this.inFlight || this.queue.length === 0 || this.broken) return;
    const group = this.queue.splice(0);
    const items = group.map((g) => g.item);
    if (this.commitInline && items.length === 1) {
      // The thread has nothing in flight, so its connection holds no write lock: this commit cannot wait on it.
      const result = this.commitInline(items);
      this.onCommitted(items, result);
      group[0].settle(result, 0);
      return;
    }
    const id = this.nextId++;
    this.inFlight = { id, settles: group.map((g) => g.settle) };
    this.sent.set(id, { items, settles: this.inFlight.settles });
    this.worker.ref();
    this.worker.postMessage({ id, items } satisfies WriterRequest);
  }

  private onReply(reply: WriterReply): void {
    if ('id' in reply) {
      const { items = [], settles = [] } = this.sent.get(reply.id) ?? {};
      this.sent.delete(reply.id);
      if (this.inFlight?.id === reply.id) this.inFlight = undefined;
      this.onCommitted(items, reply.result);
      settles.forEach((settle, i) => settle(reply.result, i));
      if (this.sent.size === 0) this.worker.unref();
      this.send();
    } else if ('startFailed' in reply) this.fail(`the event store's writer thread could not open the database: ${reply.startFailed}`);
  }

  /** The thread is gone: whatever it had not answered may or may not be stored, and is reported failed. */
  private fail(reason: string): void {
    if (this.closing && !this.broken && this.sent.size === 0 && this.queue.length === 0) return;
    this.broken ??= reason;
    const failed: GroupOutcome = { failed: { message: reason } };
    for (const { settles } of this.sent.values()) settles.forEach((settle, i) => settle(failed, i));
    this.sent.clear();
    this.inFlight = undefined;
    this.queue.splice(0).forEach((q) => q.settle(failed, 0));
  }

  /**
   * Sends what is queued, then the last message: the thread commits every group sent before it and closes its
   * connection. Resolves once it has, so nothing acknowledged or submitted is lost at shutdown.
   */
  close(): Promise<void> {
    this.closing ??= new Promise<void>((resolve) => {
      if (this.broken) return resolve();
      const group = this.queue.splice(0);
      if (group.length > 0) {
        const id = this.nextId++;
        const items = group.map((g) => g.item);
        this.sent.set(id, { items, settles: group.map((g) => g.settle) });
        this.worker.postMessage({ id, items } satisfies WriterRequest);
      }
      this.worker.ref();
      this.worker.once('exit', () => resolve());
      this.worker.postMessage({ close: true } satisfies WriterRequest);
    });
    return this.closing;
  }
}
