import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * How many lambda sandboxes run at once (docs/lambda-tools.md, "Every sandbox counts"). A call (a lambda run by
 * an agent or a test, a validation) reserves up front `1 + height` sandboxes from the service's pool and from its
 * principal's share, where `height` is how many levels of lambdas it can start below itself (known from the
 * lambdas' tool_configurations). Lambdas it calls run inside that reservation, never from the pool, so a call
 * never waits on a sandbox another call holds while holding its own: no deadlock between calls. Inside a call a
 * lambda of height h starts only while h + 1 of the call's sandboxes are free, so the last free ones always go to
 * lambdas deeper down, which end without waiting for more: no deadlock inside a call either.
 */
export class LambdaBudgetError extends Error {}

/** One call's reservation. */
export class CallLease {
  private used = 0;
  private started = 0;
  private readonly waiting: { need: number; resolve: () => void }[] = [];
  private onIdle: (() => void) | undefined;

  constructor(
    readonly size: number,
    private readonly maxNestedRuns: number,
  ) {}

  /** A sandbox for a lambda of `height` inside this call: waits until `height + 1` are free. */
  async take(height: number, nested: boolean, signal?: AbortSignal): Promise<void> {
    if (nested && ++this.started > this.maxNestedRuns) throw new LambdaBudgetError(`this call has started ${this.maxNestedRuns} nested lambdas, the most one call may (LAMBDA_MAX_NESTED_RUNS)`);
    const need = height + 1;
    if (need > this.size) throw new LambdaBudgetError(`a nested lambda needs ${need} sandboxes at once, more than its call reserved (${this.size}): the lambdas changed while the call ran`);
    if (this.size - this.used >= need) {
      this.used++;
      return;
    }
    await waitFor(this.waiting, need, signal);
  }

  /** Resolves when no sandbox of this call runs any more (its nested lambdas included). */
  idle(): Promise<void> {
    if (this.used === 0 && !this.waiting.length) return Promise.resolve();
    return new Promise((resolve) => (this.onIdle = resolve));
  }

  give(): void {
    this.used--;
    if (this.used === 0 && !this.waiting.length) this.onIdle?.();
    for (let i = 0; i < this.waiting.length; ) {
      const w = this.waiting[i];
      if (this.size - this.used >= w.need) {
        this.waiting.splice(i, 1);
        this.used++;
        w.resolve();
      } else i++;
    }
  }
}

/** The service's pool of sandboxes and each principal's share of it: calls wait their turn, first come first served. */
export class LambdaSlots {
  private free: number;
  private readonly held = new Map<string, number>();
  private readonly queue: { principal: string; size: number; resolve: () => void; reject: (e: Error) => void }[] = [];

  constructor(
    private readonly max: number,
    private readonly perPrincipal: number,
  ) {
    this.free = max;
  }

  /** Reserves `size` sandboxes for a call of `principal`; refuses at once what could never fit. */
  async reserve(principal: string, size: number, signal?: AbortSignal): Promise<void> {
    if (size > this.max) throw new LambdaBudgetError(`this lambda needs ${size} sandboxes at once (lambdas ${size} levels deep), more than LAMBDA_MAX_SANDBOXES (${this.max})`);
    if (size > this.perPrincipal) throw new LambdaBudgetError(`this lambda needs ${size} sandboxes at once (lambdas ${size} levels deep), more than one principal may hold (LAMBDA_MAX_SANDBOXES_PER_PRINCIPAL, ${this.perPrincipal})`);
    if (!this.queue.length && this.fits(principal, size)) return this.grant(principal, size);
    await new Promise<void>((resolve, reject) => {
      const entry = { principal, size, resolve, reject };
      this.queue.push(entry);
      signal?.addEventListener(
        'abort',
        () => {
          const at = this.queue.indexOf(entry);
          if (at < 0) return;
          this.queue.splice(at, 1);
          reject(new LambdaBudgetError('stopped: the call was cancelled while it waited for a sandbox'));
          this.dispatch();
        },
        { once: true },
      );
      // Calls ahead held back only by their principal's share do not hold this one back.
      this.dispatch();
    });
  }

  release(principal: string, size: number): void {
    this.free += size;
    const left = (this.held.get(principal) ?? 0) - size;
    if (left > 0) this.held.set(principal, left);
    else this.held.delete(principal);
    this.dispatch();
  }

  private fits(principal: string, size: number): boolean {
    return this.free >= size && (this.held.get(principal) ?? 0) + size <= this.perPrincipal;
  }

  private grant(principal: string, size: number): void {
    this.free -= size;
    this.held.set(principal, (this.held.get(principal) ?? 0) + size);
  }

  /** First come first served; a call held back only by its own principal's share does not hold back others. */
  private dispatch(): void {
    for (let i = 0; i < this.queue.length && this.free > 0; ) {
      const w = this.queue[i];
      if ((this.held.get(w.principal) ?? 0) + w.size > this.perPrincipal) {
        i++;
        continue;
      }
      if (this.free < w.size) return;
      this.queue.splice(i, 1);
      this.grant(w.principal, w.size);
      w.resolve();
    }
  }
}

/** The call and height of the lambda whose composed tools are running (nested lambdas find their parent here). */
export const runningLambda = new AsyncLocalStorage<{ readonly lease: CallLease; readonly height: number; readonly ended: AbortSignal }>();

function waitFor(waiting: { need: number; resolve: () => void }[], need: number, signal?: AbortSignal): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const entry = { need, resolve };
    waiting.push(entry);
    signal?.addEventListener(
      'abort',
      () => {
        const at = waiting.indexOf(entry);
        if (at < 0) return;
        waiting.splice(at, 1);
        reject(new LambdaBudgetError('stopped: the call was cancelled while it waited for a sandbox'));
      },
      { once: true },
    );
  });
}
