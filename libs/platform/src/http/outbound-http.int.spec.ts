import { createServer, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { AddressLookup, OutboundHttp } from './outbound-http';
import { OutboundPolicy, outboundRefusal } from './outbound-policy';

/** The guarded client against real local servers: the check is made on the address each connection uses. */
describe('OutboundHttp', () => {
  const servers: Server[] = [];
  const clients: OutboundHttp[] = [];
  let hits: string[];

  const serve = async (handler: (path: string, res: import('node:http').ServerResponse) => void): Promise<number> => {
    const server = createServer((req, res) => {
      hits.push(`${(server.address() as AddressInfo).port}${req.url}`);
      handler(req.url ?? '/', res);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    servers.push(server);
    return (server.address() as AddressInfo).port;
  };
  const client = (config: Partial<OutboundPolicy['config']>, lookup?: AddressLookup) => {
    const http = new OutboundHttp(new OutboundPolicy({ allowPrivate: false, allowedHosts: [], deniedHosts: [], ...config }), { lookup });
    clients.push(http);
    return http;
  };
  const refusal = (p: Promise<unknown>) => p.then(() => undefined, (e: unknown) => outboundRefusal(e));

  beforeEach(() => (hits = []));
  afterAll(async () => {
    for (const c of clients) await c.close();
    for (const s of servers) await new Promise((resolve) => s.close(resolve));
  });

  it('refuses a loopback literal and a name resolving to loopback, and sends nothing', async () => {
    const port = await serve((_p, res) => res.end('ok'));
    const http = client({});
    expect((await refusal(http.fetch(`http://127.0.0.1:${port}/a`)))?.reason).toBe('loopback address');
    expect((await refusal(http.fetch(`http://localhost:${port}/b`)))?.message).toMatch(new RegExp(`localhost:${port} \\(127\\.0\\.0\\.1\\) is not allowed`));
    expect(hits).toEqual([]);
  });

  it('reaches an allowed address', async () => {
    const port = await serve((_p, res) => res.end('ok'));
    const res = await client({ allowedHosts: [`127.0.0.1:${port}`] }).fetch(`http://localhost:${port}/c`);
    expect(await res.text()).toBe('ok');
    expect((await client({ allowPrivate: true }).fetch(`http://127.0.0.1:${port}/d`)).status).toBe(200);
  });

  it('re-checks every redirect: an allowed server cannot send the client to a refused one', async () => {
    const inside = await serve((_p, res) => res.end('secret'));
    const outside = await serve((_p, res) => res.writeHead(302, { location: `http://127.0.0.1:${inside}/metadata` }).end());
    const http = client({ allowedHosts: [`127.0.0.1:${outside}`] });
    expect((await refusal(http.fetch(`http://127.0.0.1:${outside}/start`)))?.target).toBe(`127.0.0.1:${inside}`);
    expect(hits).toEqual([`${outside}/start`]);
  });

  it('request (the hot paths\' undici call) is guarded as fetch is: refused targets, redirects re-checked, allowed ones reached', async () => {
    const inside = await serve((_p, res) => res.end('secret'));
    const outside = await serve((_p, res) => res.writeHead(307, { location: `http://127.0.0.1:${inside}/metadata` }).end());
    const guarded = client({ allowedHosts: [`127.0.0.1:${outside}`] });
    expect((await refusal(guarded.request(`http://127.0.0.1:${inside}/direct`, { method: 'POST', body: '{}' })))?.reason).toBe('loopback address');
    expect((await refusal(guarded.request(`http://127.0.0.1:${outside}/start`, { method: 'POST', body: '{}' })))?.target).toBe(`127.0.0.1:${inside}`);
    expect(hits).toEqual([`${outside}/start`]);
    const open = client({ allowPrivate: true });
    const res = await open.request(`http://127.0.0.1:${outside}/again`, { method: 'POST', body: '{}' });
    expect({ status: res.statusCode, body: await res.body.text() }).toEqual({ status: 200, body: 'secret' });
  });

  it('checks the address of each connection, so a DNS answer that changes after a check (rebinding) is refused', async () => {
    const port = await serve((_p, res) => res.end('ok'));
    let answers = 0;
    // First answer allowed (an allow-listed address), then the name rebinds to a refused one.
    const lookup = async () => [{ address: answers++ === 0 ? '127.0.0.1' : '127.0.0.2', family: 4 }];
    const http = client({ allowedHosts: ['127.0.0.1'] }, lookup);
    expect((await http.fetch(`http://rebind.test:${port}/first`, { headers: { connection: 'close' } })).status).toBe(200);
    expect((await refusal(http.fetch(`http://rebind.test:${port}/second`)))?.target).toBe(`rebind.test:${port} (127.0.0.2)`);
    expect(hits).toEqual([`${port}/first`]);
  });
});
