import { execFileSync, spawnSync } from 'node:child_process';
import { request } from 'node:http';
import { join } from 'node:path';
import { HostProcess, Network, netnsUnavailable, sweepLeftovers } from './support/netns';
import { sleep, until } from './support/wait';
// eslint-disable-next-line @typescript-eslint/no-require-imports
const pgCluster = require('./support/postgres-cluster');

/**
 * The multi-host harness itself (issue 47), with plain node HTTP servers for hosts: the test process reaches each host
 * over the bridge, hosts reach each other and the PostgreSQL host, a cut host is silent (no refusal) until mended, a
 * killed host's process dies, and teardown leaves no namespace, link or process behind; a dead run's leftovers are swept.
 */

const root = join(__dirname, '..');
// A host: answers with its own address, a query on PostgreSQL, or what another host answered.
const HOST_SERVER = `
const http = require('node:http');
const { Client } = require('pg');
http.createServer(async (req, res) => {
  const url = new URL(req.url, 'http://x');
  try {
    if (url.pathname === '/pg') {
      const client = new Client({ connectionString: process.env.PG_URL, connectionTimeoutMillis: 2000 });
      await client.connect();
      const { rows } = await client.query('select host(inet_client_addr()) as addr');
      await client.end();
      return res.end(JSON.stringify({ host: process.env.SELF, pgSaw: rows[0].addr }));
    }
    if (url.pathname === '/peer') {
      const peer = await (await fetch(url.searchParams.get('url'), { signal: AbortSignal.timeout(2000) })).json();
      return res.end(JSON.stringify({ host: process.env.SELF, peer }));
    }
    res.end(JSON.stringify({ host: process.env.SELF }));
  } catch (e) {
    res.statusCode = 503;
    res.end(JSON.stringify({ host: process.env.SELF, error: e.message }));
  }
}).listen(8080, process.env.SELF, () => console.log('listening'));
`;

const reason = netnsUnavailable() ?? (pgCluster.postgresBin() ? undefined : 'PostgreSQL is not installed');
if (reason) process.stderr.write(`skipped: network namespace harness: ${reason}\n`);
const describeIf = reason ? describe.skip : describe;

/** A GET whose socket is destroyed at the deadline (fetch's abort leaves a hanging connect open for 10 s). */
const get = (url: string, timeoutMs = 3_000) =>
  new Promise<{ status: number; body: any }>((resolve, reject) => {
    const req = request(url, { timeout: timeoutMs }, (res) => {
      let text = '';
      res.on('data', (c) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode!, body: JSON.parse(text) }));
    });
    req.on('timeout', () => req.destroy(new Error(`timeout after ${timeoutMs} ms`)));
    req.on('error', reject);
    req.end();
  });

describeIf('network namespace harness', () => {
  let network: Network;
  let cluster: any;
  let pgUrl: string;
  const servers: Record<string, HostProcess> = {};

  beforeAll(async () => {
    network = Network.create(['pg', 'a', 'b']);
    cluster = pgCluster.initCluster({ listen: network.host('pg').ip, prefix: 'ars-netns-pg-' });
    pgUrl = pgCluster.startCluster(cluster, 5432, ['ip', 'netns', 'exec', network.host('pg').ns]);
    for (const name of ['a', 'b']) {
      servers[name] = network.run(name, process.execPath, ['-e', HOST_SERVER], { SELF: network.host(name).ip, PG_URL: pgUrl }, root);
      await until(`${name} listening`, () => (servers[name].output.includes('listening') ? true : undefined), 10_000, 20);
    }
  }, 60_000);

  afterAll(async () => {
    if (cluster) pgCluster.removeCluster(cluster);
    await network?.teardown();
  });

  it('the test reaches every host over the bridge, hosts reach each other and PostgreSQL from their own address', async () => {
    const { a, b } = { a: network.host('a'), b: network.host('b') };
    expect((await get(`http://${a.ip}:8080/`)).body).toEqual({ host: a.ip });
    expect((await get(`http://${a.ip}:8080/peer?url=http://${b.ip}:8080/`)).body).toEqual({ host: a.ip, peer: { host: b.ip } });
    expect((await get(`http://${b.ip}:8080/pg`)).body).toEqual({ host: b.ip, pgSaw: b.ip });
    // The PostgreSQL URL names the host's address, and its password is the cluster's.
    expect(new URL(pgUrl).hostname).toBe(network.host('pg').ip);
    // Not on the root namespace's loopback: each host has its own.
    expect(execFileSync('ip', ['netns', 'exec', a.ns, 'ip', '-4', '-o', 'addr', 'show', 'lo']).toString()).toContain('127.0.0.1');
  });

  it('a cut host is silent (its requests hang, none is refused) and answers again once mended; the others go on', async () => {
    const { a, b } = { a: network.host('a'), b: network.host('b') };
    network.cut('a');
    try {
      const started = Date.now();
      await expect(get(`http://${a.ip}:8080/`, 1_500)).rejects.toThrow(/timeout/);
      expect(Date.now() - started).toBeGreaterThanOrEqual(1_400);
      // b cannot reach a either, and still reaches PostgreSQL.
      expect((await get(`http://${b.ip}:8080/peer?url=http://${a.ip}:8080/`, 5_000)).status).toBe(503);
      expect((await get(`http://${b.ip}:8080/pg`)).body.pgSaw).toBe(b.ip);
    } finally {
      network.mend('a');
    }
    await until('a answering again', async () => ((await get(`http://${a.ip}:8080/pg`, 1_000).catch(() => undefined))?.body.pgSaw === a.ip ? true : undefined), 15_000, 200);
  });

  it('kill signals the processes started on one host only', async () => {
    const killed = network.kill('b', 'SIGKILL');
    expect(killed).toHaveLength(1);
    expect(await killed[0].exited).toBe('SIGKILL');
    await expect(get(`http://${network.host('b').ip}:8080/`, 1_000)).rejects.toThrow();
    expect((await get(`http://${network.host('a').ip}:8080/`)).body.host).toBe(network.host('a').ip);
  });

  it('teardown kills every process in the namespaces and removes the namespaces, veths and bridge; a dead run’s leftovers are swept', async () => {
    const other = Network.create(['x', 'y']);
    const inside = other.run('x', 'sleep', ['300']);
    await sleep(100);
    // A grandchild the harness did not start itself is killed too.
    const orphan = other.run('y', 'sh', ['-c', 'sleep 300 & echo $!; wait']);
    const orphanPid = Number(await until('the orphan pid', () => orphan.output[0]));
    await other.teardown();
    expect(await inside.exited).toBe('SIGKILL');
    await until('the orphan to die', () => (spawnSync('kill', ['-0', String(orphanPid)]).status !== 0 ? true : undefined), 5_000, 50);
    const netns = execFileSync('ip', ['netns', 'list']).toString();
    const links = execFileSync('ip', ['-o', 'link', 'show']).toString();
    for (const h of other.hosts) {
      expect(netns).not.toContain(h.ns);
      expect(links).not.toContain(h.port);
    }
    expect(links).not.toContain(other.bridge);

    // Leftovers of a run whose process is dead: a namespace and a bridge carrying its pid.
    const dead = spawnSync(process.execPath, ['-e', 'console.log(process.pid)']).stdout.toString().trim();
    execFileSync('ip', ['netns', 'add', `arsnet-${dead}-zzzzz-h`]);
    execFileSync('ip', ['link', 'add', 'arsbzzzzz', 'type', 'bridge']);
    execFileSync('ip', ['link', 'set', 'dev', 'arsbzzzzz', 'alias', `arsnet pid=${dead}`]);
    expect(sweepLeftovers().sort()).toEqual(['arsbzzzzz', `arsnet-${dead}-zzzzz-h`]);
    expect(execFileSync('ip', ['netns', 'list']).toString()).not.toContain(`arsnet-${dead}-`);
    // This run's own are left alone.
    expect(execFileSync('ip', ['netns', 'list']).toString()).toContain(network.host('a').ns);
  });
});
