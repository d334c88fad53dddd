// The lambda sandbox process (docs/lambda-tools.md). Plain JavaScript: it runs as its own Node process, started by
// lambda-sandbox.ts with the permission model on (reads only of this directory and Pyodide's, no writes, no child
// processes, no worker threads, no native addons) and an empty environment. Here it also closes the network
// before any caller code exists, loads Pyodide, tells the parent it is ready, runs one job, and exits.
//
// Protocol: newline-delimited JSON. The parent writes to fd 3, this process writes to fd 4. Reads are blocking
// (`readSync`), so Python's `tool.<name>()` waits for the parent's answer without an event loop.
import { closeSync, constants as fsConstants, readFileSync, readSync, writeSync } from 'node:fs';
import { createRequire, syncBuiltinESMExports } from 'node:module';
import { pathToFileURL } from 'node:url';

const require = createRequire(import.meta.url);
const [pyodidePath, runtimePath] = process.argv.slice(2);
const IN = 3;
const OUT = 4;

// --- The network, closed (Node's permission model does not cover it in Node 20) -----------------------------
const refused = (what) =>
  function () {
    throw new Error(`${what}: the lambda sandbox has no network`);
  };
function lock(target, key, value) {
  try {
    Object.defineProperty(target, key, { value, writable: false, configurable: false, enumerable: true });
  } catch {
    // Already locked.
  }
}
const net = require('node:net');
lock(net.Socket.prototype, 'connect', refused('connect'));
lock(net.Server.prototype, 'listen', refused('listen'));
for (const k of ['connect', 'createConnection', 'createServer']) lock(net, k, refused(k));
const dgram = require('node:dgram');
lock(dgram.Socket.prototype, 'bind', refused('bind'));
lock(dgram.Socket.prototype, 'send', refused('send'));
lock(dgram.Socket.prototype, 'connect', refused('connect'));
lock(dgram, 'createSocket', refused('createSocket'));
const dns = require('node:dns');
for (const api of [dns, dns.promises]) {
  for (const k of Object.keys(api)) if (typeof api[k] === 'function' && k !== 'Resolver') lock(api, k, refused(`dns.${k}`));
  for (const k of Object.getOwnPropertyNames(api.Resolver.prototype)) if (k !== 'constructor') lock(api.Resolver.prototype, k, refused(`dns.${k}`));
}
for (const m of ['node:tls', 'node:http', 'node:https', 'node:http2']) {
  const mod = require(m);
  for (const k of ['connect', 'request', 'get', 'createServer', 'createSecureServer']) if (typeof mod[k] === 'function') lock(mod, k, refused(`${m}.${k}`));
}
const inspector = require('node:inspector');
lock(inspector, 'open', refused('inspector.open'));
syncBuiltinESMExports();
for (const k of ['fetch', 'WebSocket', 'EventSource', 'XMLHttpRequest', 'Request', 'Response', 'Headers']) {
  try {
    delete globalThis[k];
  } catch {
    lock(globalThis, k, undefined);
  }
}
// Pyodide asks process.binding for the fs flags of its (unmounted) host file system; nothing else is given.
process.binding = (name) => {
  if (name === 'constants') return { fs: fsConstants };
  throw new Error('process.binding: not in the lambda sandbox');
};

// --- Framing over the two pipes ----------------------------------------------------------------------------
let pending = Buffer.alloc(0);
function readLine() {
  const chunk = Buffer.alloc(1 << 16);
  for (;;) {
    const nl = pending.indexOf(10);
    if (nl >= 0) {
      const line = pending.subarray(0, nl).toString('utf8');
      pending = pending.subarray(nl + 1);
      return line;
    }
    let n;
    try {
      n = readSync(IN, chunk, 0, chunk.length, null);
    } catch (e) {
      if (e.code === 'EAGAIN') {
        Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 2);
        continue;
      }
      throw e;
    }
    if (n === 0) process.exit(0); // The parent is gone.
    pending = Buffer.concat([pending, chunk.subarray(0, n)]);
  }
}
function writeLine(text) {
  const bytes = Buffer.from(`${text}\n`, 'utf8');
  let off = 0;
  while (off < bytes.length) {
    try {
      off += writeSync(OUT, bytes, off);
    } catch (e) {
      if (e.code !== 'EAGAIN') throw e;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 2);
    }
  }
}

// --- Python ------------------------------------------------------------------------------------------------
const { loadPyodide } = await import(pathToFileURL(pyodidePath).href);
const pyodide = await loadPyodide({ jsglobals: {}, stdout: (s) => process.stdout.write(`${s}\n`), stderr: (s) => process.stderr.write(`${s}\n`) });
pyodide.registerJsModule('_lambda_host', { send: (line) => writeLine(line), recv: () => readLine() });
pyodide.runPython(readFileSync(runtimePath, 'utf8'), { filename: 'lambda_runtime.py' });
const main = pyodide.globals.get('_lambda_main');
writeLine(JSON.stringify({ type: 'ready' }));
const job = readLine();
main(job);
try {
  closeSync(OUT);
} catch {
  // Closed already.
}
process.exit(0);
