import type { Task } from '@a2a-js/sdk';
import type { ServerCallContext } from '@a2a-js/sdk/server';
import { ScopedTaskStore } from './a2a-task-store';

const as = (userName: string) => ({ user: { isAuthenticated: true, userName } }) as unknown as ServerCallContext;
const text = (value: string) => ({ content: { $case: 'text', value }, mediaType: 'text/plain' });
const task = (id: string, state: number, at: number, message = 'hi') =>
  ({ id, contextId: `ctx-${id}`, status: { state, timestamp: new Date(Date.UTC(2026, 0, 1, 0, 0, at)).toISOString(), message: { messageId: `${id}-r`, role: 2, parts: [text(message)] } }, artifacts: [{ artifactId: 'a', parts: [text(message)] }], history: [{ messageId: `${id}-m`, role: 1, parts: [text(message)] }], metadata: {} }) as unknown as Task;

describe('ScopedTaskStore', () => {
  const fromLog = jest.fn(async (id: string, owner: string) => (owner === 'user:a' && id.startsWith('a') ? task(id, 3, 0, 'from the log') : undefined));

  it("gives a caller only its own tasks, from memory and from the log, and never overwrites another's", async () => {
    const store = new ScopedTaskStore(fromLog);
    await store.save(task('a1', 2, 1), as('user:a'));
    expect((await store.load('a1', as('user:a')))?.history).toHaveLength(1);
    expect(await store.load('a1', as('user:b'))).toBeUndefined();
    await store.save(task('a1', 3, 2, 'hijacked'), as('user:b'));
    expect(JSON.stringify(await store.load('a1', as('user:a')))).not.toContain('hijacked');
    expect((await store.list({ pageSize: 50 } as never, as('user:b'))).tasks).toEqual([]);
    expect(await store.load('a9', as('user:b'))).toBeUndefined();
    expect((await store.load('a9', as('user:a')))?.status?.state).toBe(3);
  });

  it('keeps a stopped task as its state and a cut status, takes the rest from the log, and the later state from memory', async () => {
    const store = new ScopedTaskStore(fromLog, { perCaller: 10, perAgent: 100, statusChars: 5 });
    await store.save(task('a2', 5, 3, 'x'.repeat(10_000)), as('user:a'));
    expect(store.stats()).toEqual({ tasks: 1, live: 0, bytes: expect.any(Number) });
    expect(store.stats().bytes).toBeLessThan(1000);
    const loaded = await store.load('a2', as('user:a'));
    expect(loaded?.status?.state).toBe(5);
    expect(JSON.stringify(loaded?.artifacts)).toContain('from the log');
    const listed = (await store.list({ pageSize: 50 } as never, as('user:a'))).tasks[0];
    expect(listed.history).toEqual([]);
    expect(listed.artifacts).toEqual([]);
    expect(JSON.stringify(listed.status)).toContain('xxxxx… [cut: 10000 characters');
  });

  it('evicts the oldest stopped tasks past the bounds, never a running one, and pages a list newest first', async () => {
    const store = new ScopedTaskStore(fromLog, { perCaller: 3, perAgent: 5, statusChars: 100 });
    await store.save(task('run', 2, 0), as('user:a'));
    for (let i = 1; i <= 4; i++) await store.save(task(`a${i}`, 3, i), as('user:a'));
    const first = await store.list({ pageSize: 2 } as never, as('user:a'));
    expect(first.tasks.map((t) => t.id)).toEqual(['a4', 'a3']);
    expect(first.totalSize).toBe(3);
    const second = await store.list({ pageSize: 2, pageToken: first.nextPageToken } as never, as('user:a'));
    expect(second.tasks.map((t) => t.id)).toEqual(['run']);
    expect(second.nextPageToken).toBe('');
    for (let i = 1; i <= 4; i++) await store.save(task(`b${i}`, 3, 10 + i), as('user:b'));
    expect(store.stats().tasks).toBe(5);
    expect(store.stats().live).toBe(1);
  });
});
