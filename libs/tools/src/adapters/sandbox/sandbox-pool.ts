import type { Worker } from 'node:worker_threads';
import { Injectable, OnModuleDestroy } from '@nestjs/common';
import type { SandboxReply, SandboxTask } from './sandbox-worker';
import { siblingWorker } from '@lib/platform';
import { Sandbox, SANDBOX_DEADLINE_MS, SandboxError } from '../../application/sandbox.port';

export { SANDBOX_DEADLINE_MS, SandboxError } from '../../application/sandbox.port';

const WORKERS = 2;
const HEAP_MB = 256;

/** A task without its id (the pool numbers them): distributed over the union. */
type TaskBody = SandboxTask extends infer T ? (T extends SandboxTask ? Omit<T, 'id'> : never) : never;

type Job = { task: TaskBody; deadlineMs: number; resolve: (v: unknown) => void; reject: (e: Error) => void };

/**
 * Worker threads for callers' jq programs and regular expressions (docs/tools.md): each task has a deadline,
 * and a worker past it (or past its heap limit) is terminated and replaced, so a hostile program costs its
 * caller a tool error and the service nothing. Two workers; tasks queue beyond that.
 */
@Injectable()
export class SandboxPool implements Sandbox, OnModuleDestroy {
  private readonly idle: Worker[] = [];
  private readonly busy = new Map<Worker, { id: number; job: Job; timer: NodeJS.Timeout }>();
  private readonly starting = new Set<Worker>();
  private readonly queue: Job[] = [];
  private nextId = 1;

  /** Runs jq `program` over `input`; resolves with its outputs' first value as jq-web gives it. */
  jq(program: string, input: unknown, deadlineMs = SANDBOX_DEADLINE_MS): Promise<unknown> {
    return this.run({ kind: 'jq', program, input }, deadlineMs);
  }

  grep(text: string, pattern: string, options: { flags: string; invert: boolean; maxMatches: number }, deadlineMs = SANDBOX_DEADLINE_MS): Promise<{ matches: { line: number; text: string }[]; count: number; lines: number }> {
    return this.run({ kind: 'grep', pattern, text, ...options }, deadlineMs) as Promise<{ matches: { line: number; text: string }[]; count: number; lines: number }>;
  }

  private run(task: TaskBody, deadlineMs: number): Promise<unknown> {
    return new Promise((resolve, reject) => {
      this.queue.push({ task, deadlineMs, resolve, reject });
      this.dispatch();
    });
  }

  private dispatch(): void {
    while (this.queue.length) {
      const worker = this.idle.pop();
      if (!worker) {
        if (this.busy.size + this.starting.size < WORKERS) this.spawn();
        return;
      }
      const job = this.queue.shift()!;
      const id = this.nextId++;
      const timer = setTimeout(() => this.retire(worker, new SandboxError(`stopped after ${job.deadlineMs} ms (a program that does not end?)`)), job.deadlineMs);
      this.busy.set(worker, { id, job, timer });
      worker.postMessage({ ...job.task, id });
    }
  }

  private spawn(): void {
    const worker = siblingWorker(__dirname, 'sandbox-worker', {
      resourceLimits: { maxOldGenerationSizeMb: HEAP_MB },
      aliases: true,
    });
    worker.unref();
    this.starting.add(worker);
    worker.on('message', (reply: SandboxReply) => this.settle(worker, reply));
    worker.on('error', (e) => this.retire(worker, new SandboxError(`the program stopped: ${e.message}`)));
    worker.on('exit', () => this.retire(worker, new SandboxError('the program stopped')));
  }

  private settle(worker: Worker, reply: SandboxReply): void {
    if ('ready' in reply) {
      this.starting.delete(worker);
      this.idle.push(worker);
      return this.dispatch();
    }
    const current = this.busy.get(worker);
    if (!current || current.id !== reply.id) return;
    clearTimeout(current.timer);
    this.busy.delete(worker);
    if ('error' in reply) current.job.reject(new SandboxError(reply.error));
    else current.job.resolve(reply.value);
    this.idle.push(worker);
    this.dispatch();
  }

  private retire(worker: Worker, error: SandboxError): void {
    const current = this.busy.get(worker);
    const wasKnown = current !== undefined || this.starting.has(worker) || this.idle.includes(worker);
    if (!wasKnown) return;
    if (current) {
      clearTimeout(current.timer);
      current.job.reject(error);
    }
    this.busy.delete(worker);
    this.starting.delete(worker);
    const at = this.idle.indexOf(worker);
    if (at >= 0) this.idle.splice(at, 1);
    void worker.terminate();
    this.dispatch();
  }

  async onModuleDestroy(): Promise<void> {
    for (const job of this.queue.splice(0)) job.reject(new SandboxError('the service is stopping'));
    await Promise.all([...this.idle, ...this.busy.keys(), ...this.starting].map((w) => w.terminate()));
    this.idle.length = 0;
    this.busy.clear();
    this.starting.clear();
  }
}
