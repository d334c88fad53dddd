import { Pool } from 'undici';
import { startTestApp, TEST_KEY } from './support/test-app';

/**
 * Closing the service (SIGTERM, or `app.close()`) stops serving first (apps/api/src/http/stop-serving-first.ts):
 * Nest alone runs the modules' destroy hooks before closing the HTTP server, which meanwhile keeps answering a
 * keep-alive client, and Node's server close never ends while that client keeps its connections busy.
 */
describe('closing the service', () => {
  it('stops taking requests at once, answers only those in flight, and closes while keep-alive clients keep sending', async () => {
    const app = await startTestApp();
    expect((await app.call('POST', '/v2/corpora', { key: 'c', name: 'c' })).status).toBe(201);
    // The default encoder loaded first: a load cut by the close would keep the process busy a moment after the test.
    expect((await app.call('POST', '/v2/corpora/c/documents', { id: 'first', type: 'core', document_parts: [{ text: 'tidal energy' }] })).status).toBe(201);
    const pool = new Pool(app.url, { connections: 4 });
    let closing = false;
    let stop = false;
    const afterClose: (number | string)[] = [];
    let before = 0;
    let n = 0;
    const client = async () => {
      while (!stop) {
        let outcome: number | string;
        try {
          const res = await pool.request({ path: '/v2/corpora/c/documents', method: 'POST', headers: { 'x-api-key': TEST_KEY, 'content-type': 'application/json' }, body: JSON.stringify({ id: `d${n++}`, type: 'core', document_parts: [{ text: 'tidal energy' }] }) });
          await res.body.text();
          outcome = res.statusCode;
        } catch (e) {
          outcome = (e as { code?: string }).code ?? 'error';
          await new Promise((r) => setTimeout(r, 5));
        }
        if (closing) afterClose.push(outcome);
        else before++;
      }
    };
    const clients = Promise.all(Array.from({ length: 4 }, client));
    while (before < 40) await new Promise((r) => setTimeout(r, 10));

    closing = true;
    const closed = app.close().then(() => 'closed');
    const outcome = await Promise.race([closed, new Promise((r) => setTimeout(() => r('still open after 15 s'), 15_000))]);
    await new Promise((r) => setTimeout(r, 100)); // the clients meet the closed port
    stop = true;
    await clients;
    await pool.close();
    await closed;

    expect(outcome).toBe('closed');
    // Only the requests in flight when the close began are answered (at most one or two a connection), none with a
    // 5xx; every later one is refused at the connection.
    const answered = afterClose.filter((o) => typeof o === 'number');
    expect(answered.length).toBeLessThanOrEqual(8);
    expect(answered.filter((s) => (s as number) >= 500)).toEqual([]);
    expect(afterClose.length).toBeGreaterThan(answered.length);
  });
});
