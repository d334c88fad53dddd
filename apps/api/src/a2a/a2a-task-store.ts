import type { ListTasksRequest, ListTasksResponse, Part, Task, TaskStatus } from '@a2a-js/sdk';
import type { ServerCallContext, TaskStore } from '@a2a-js/sdk/server';

/** How much of a finished task is kept in memory, and what one list answer holds (docs/a2a.md). */
export interface A2aTaskBounds {
  /** Tasks kept per caller and agent (their state, for lists and for what the log cannot tell); the oldest go first. */
  readonly perCaller: number;
  /** Tasks kept per agent, all callers together. */
  readonly perAgent: number;
  /** Characters of a status message's text kept once a task is no longer running. */
  readonly statusChars: number;
}

export const DEFAULT_A2A_TASK_BOUNDS: A2aTaskBounds = { perCaller: 100, perAgent: 1000, statusChars: 2000 };

/** Who a call is: the caller's principal (`user:<id>`, `api_key:<id>`, `app_client:<id>`, …), set by the server. */
export const ownerOf = (context: ServerCallContext | undefined): string => context?.user?.userName || '';

interface Held {
  readonly owner: string;
  /** The whole task while it runs (submitted, working); once it stops, only its id, context, state and a cut status. */
  task: Task;
  live: boolean;
  bytes: number;
}

const LIVE_STATES = new Set<number>([1, 2]);

/**
 * The A2A tasks of one agent, scoped to the caller who made each: another caller's task is unknown (the SDK
 * answers 404 as for a task that never was). A running task is held whole, as the SDK needs it; once it stops
 * (completed, failed, canceled, waiting for input) only its state and a cut status message stay in memory, and
 * `tasks/{id}` rebuilds the rest from the session's events (`fromLog`), which also answers for tasks this process
 * no longer holds or never ran. Lists come from memory and carry no history nor artifacts.
 */
export class ScopedTaskStore implements TaskStore {
  private readonly held = new Map<string, Held>();

  constructor(
    private readonly fromLog: (taskId: string, owner: string) => Promise<Task | undefined>,
    private readonly bounds: A2aTaskBounds = DEFAULT_A2A_TASK_BOUNDS,
  ) {}

  async save(task: Task, context: ServerCallContext): Promise<void> {
    const owner = ownerOf(context);
    const before = this.held.get(task.id);
    if (before && before.owner !== owner) return;
    const live = LIVE_STATES.has(task.status?.state as number);
    const kept = live ? structuredClone(task) : this.stopped(task);
    this.held.delete(task.id);
    this.held.set(task.id, { owner, task: kept, live, bytes: bytesOf(kept) });
    this.evict(owner);
  }

  async load(taskId: string, context: ServerCallContext): Promise<Task | undefined> {
    const owner = ownerOf(context);
    const held = this.held.get(taskId);
    if (held && held.owner !== owner) return undefined;
    if (held?.live) return structuredClone(held.task);
    const logged = await this.fromLog(taskId, owner);
    // The log has the content; this process may know a later state (a task canceled while it waited for input).
    if (!held) return logged;
    return logged ? { ...logged, status: structuredClone(held.task.status) } : structuredClone(held.task);
  }

  async list(params: ListTasksRequest, context: ServerCallContext): Promise<ListTasksResponse> {
    const owner = ownerOf(context);
    const after = params.statusTimestampAfter ? Date.parse(params.statusTimestampAfter) : undefined;
    // A stopped task's status is already cut; a running one's is cut for the list.
    const tasks = [...this.held.values()]
      .filter((h) => h.owner === owner)
      .map((h) => (h.live ? { ...h.task, status: cutStatus(h.task.status, this.bounds.statusChars) } : h.task) as Task)
      .filter((t) => (!params.contextId || t.contextId === params.contextId) && (!params.status || t.status?.state === params.status) && (after === undefined || Date.parse(t.status?.timestamp ?? '') > after))
      .sort((a, b) => (b.status?.timestamp ?? '').localeCompare(a.status?.timestamp ?? '') || b.id.localeCompare(a.id));
    const cursor = params.pageToken ? decodeCursor(params.pageToken) : undefined;
    const from = cursor ? tasks.findIndex((t) => t.id === cursor) + 1 : 0;
    const pageSize = Math.min(100, Math.max(1, params.pageSize || 50));
    const page = from === 0 && cursor ? [] : tasks.slice(from, from + pageSize);
    const more = from + page.length < tasks.length && page.length > 0;
    return {
      tasks: page.map((t) => structuredClone(listed(t)) as Task),
      nextPageToken: more ? Buffer.from(page[page.length - 1].id).toString('base64url') : '',
      pageSize,
      totalSize: tasks.length,
    } as ListTasksResponse;
  }

  /** What is held: every task, the running ones, and the bytes of their text (tests read it). */
  stats(): { tasks: number; live: number; bytes: number } {
    let live = 0;
    let bytes = 0;
    for (const h of this.held.values()) {
      if (h.live) live++;
      bytes += h.bytes;
    }
    return { tasks: this.held.size, live, bytes };
  }

  private stopped(task: Task): Task {
    return { ...listed(task), status: cutStatus(task.status, this.bounds.statusChars) } as Task;
  }

  /** The oldest stopped tasks go first, the caller's own past its bound, then anyone's past the agent's. */
  private evict(owner: string): void {
    const stopped = (o?: string) => [...this.held.entries()].filter(([, h]) => !h.live && (o === undefined || h.owner === o));
    const mine = stopped(owner);
    const ownCount = [...this.held.values()].filter((h) => h.owner === owner).length;
    for (let i = 0, over = ownCount - this.bounds.perCaller; i < mine.length && over > 0; i++, over--) this.held.delete(mine[i][0]);
    const all = stopped();
    for (let i = 0, over = this.held.size - this.bounds.perAgent; i < all.length && over > 0; i++, over--) this.held.delete(all[i][0]);
  }
}

/** A task as a list shows it: no history, no artifacts (`tasks/{id}` has them). */
const listed = (t: Task): Partial<Task> => ({ id: t.id, contextId: t.contextId, status: t.status, artifacts: [], history: [], metadata: t.metadata });

function cutStatus(status: TaskStatus | undefined, chars: number): TaskStatus | undefined {
  if (!status?.message) return status ? structuredClone(status) : status;
  const parts = status.message.parts.map((p) => cutPart(p, chars));
  return { ...status, message: { ...status.message, parts } };
}

function cutPart(p: Part, chars: number): Part {
  const content = p.content as { $case?: string; value?: unknown } | undefined;
  if (content?.$case !== 'text' || typeof content.value !== 'string') return { ...p, content: { $case: 'text', value: '' } } as unknown as Part;
  if (content.value.length <= chars) return structuredClone(p);
  return { ...p, content: { $case: 'text', value: `${content.value.slice(0, chars)}… [cut: ${content.value.length} characters; tasks/{id} and the session's events have the whole text]` } } as unknown as Part;
}

/** The text a task holds, in characters (its messages' and artifacts' text parts), plus a little for the rest. */
function bytesOf(t: Task): number {
  let n = 256;
  const parts = (ps: readonly Part[] | undefined) => {
    for (const p of ps ?? []) {
      const c = p.content as { $case?: string; value?: unknown } | undefined;
      n += typeof c?.value === 'string' ? c.value.length : c?.value instanceof Uint8Array ? c.value.length : 64;
    }
  };
  for (const m of t.history ?? []) parts(m.parts);
  parts(t.status?.message?.parts);
  for (const a of t.artifacts ?? []) parts(a.parts);
  return n;
}

function decodeCursor(token: string): string | undefined {
  try {
    return Buffer.from(token, 'base64url').toString('utf8') || undefined;
  } catch {
    return undefined;
  }
}
