import { connect, Socket } from 'node:net';
import type { ServerResponse } from 'node:http';
import { startTestApp, TestApp } from './support/test-app';
import { sleep, until } from './support/wait';

/**
 * A client that reads a long event feed slowly (or not at all) holds back the server's reading of the log:
 * before, the server wrote the whole log from the position asked into the socket's buffer in memory. And a page of
 * the log holds a bounded number of bytes, not only of events.
 */
describe('the event log to its readers, bounded in memory', () => {
  let app: TestApp;
  const EVENTS = 1_500;
  const payload = 'x'.repeat(16 * 1024); // ~24 MB of events in all: past what the kernel's socket buffers hold

  beforeAll(async () => {
    app = await startTestApp();
    for (let i = 0; i < EVENTS; i += 100) {
      await app.started.infra.events.append(`probe-${i}`, Array.from({ length: 100 }, (_, j) => ({ id: `00000000-0000-4000-8000-${String(i + j).padStart(12, '0')}`, type: 'ProbeWritten', data: { n: i + j, payload }, metadata: { actor: { type: 'system', id: 'test' }, correlationId: 'sse-test', schemaVersion: 1 } })));
    }
  });
  afterAll(async () => {
    await app?.close();
  });

  it('keeps what it buffers for a paused client small, then delivers every event in order once it reads', async () => {
    const responses: ServerResponse[] = [];
    const server = app.started.app.getHttpServer();
    const capture = (req: { url?: string }, res: ServerResponse) => req.url?.startsWith('/v2/events/stream') && responses.push(res);
    server.prependListener('request', capture);
    const { port } = new URL(app.url);
    const socket: Socket = connect(Number(port), '127.0.0.1');
    try {
      await new Promise((r) => socket.once('connect', r));
      socket.write(`GET /v2/events/stream?type=ProbeWritten HTTP/1.1\r\nhost: 127.0.0.1\r\nx-api-key: ${app.key}\r\n\r\n`);
      socket.pause(); // reads nothing: the kernel's buffers fill, then the server's
      const res = await until('the stream response', () => responses[0]);
      await sleep(1_500);
      // Without pacing the server had read the whole log into this buffer (~20 MB past the kernel's share).
      expect(res.writableLength).toBeLessThan(1024 * 1024);
      server.off('request', capture);

      let text = '';
      socket.setEncoding('utf8');
      socket.on('data', (chunk: string) => (text += chunk));
      socket.resume();
      await until('every event', () => (text.includes(`"n":${EVENTS - 1},`) ? true : undefined), 30_000);
      const ns = [...text.matchAll(/"n":(\d+),/g)].map((m) => Number(m[1]));
      expect(ns).toEqual(Array.from({ length: EVENTS }, (_, i) => i));
    } finally {
      server.off('request', capture);
      socket.destroy();
    }
  }, 60_000);

  it('ends a page of the log or the audit trail early when its events are large, with where the next starts, losing none', async () => {
    const pad = 'y'.repeat(6 * 2 ** 20);
    for (let i = 0; i < 4; i++) {
      await app.started.infra.events.append(`large-${i}`, [{ id: `00000000-0000-4000-9000-${String(i).padStart(12, '0')}`, type: 'LargeWritten', data: { i, pad }, metadata: { actor: { type: 'system', id: 'test' }, correlationId: 'large', schemaVersion: 1 } }]);
    }
    const first = await app.call('GET', '/v2/events?type=LargeWritten&limit=1000');
    expect(first.body.events.map((e: any) => e.data.i)).toEqual([0, 1, 2]); // 18 MB: past the 16 MB a page holds
    const next = await app.call('GET', `/v2/events?type=LargeWritten&limit=1000&after=${first.body.metadata.after}`);
    expect(next.body.events.map((e: any) => e.data.i)).toEqual([3]);
    expect(next.body.metadata).toEqual({});

    const audit = await app.call('GET', '/v2/audit?category=large&limit=1000');
    expect(audit.body.entries.map((e: any) => e.data.i)).toEqual([0, 1, 2]);
    const rest = await app.call('GET', `/v2/audit?category=large&limit=1000&after=${audit.body.metadata.after}`);
    expect(rest.body.entries.map((e: any) => e.data.i)).toEqual([3]);
    expect(rest.body.metadata).toEqual({});
  }, 60_000);
});
