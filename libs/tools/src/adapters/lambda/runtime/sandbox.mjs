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
// --- Other processes, and this one's priority and credentials: out of reach ---------------------------------
// The OS boundary (os-boundary.ts: an unprivileged user in a PID namespace of its own) is what stops a lambda
// that reaches JavaScript from signalling or renicing anything; these locks are a second layer, and the only one
// where the operator opted out (LAMBDA_SANDBOX_ISOLATION=javascript).
const denied = (what) =>
  function () {
    throw new Error(`${what}: not allowed in the lambda sandbox`);
  };
for (const k of ['kill', '_kill', 'setuid', 'setgid', 'seteuid', 'setegid', 'setgroups', 'initgroups', '_debugProcess', '_debugEnd', 'dlopen']) {
  if (k in process) lock(process, k, denied(`process.${k}`));
}
const os = require('node:os');
lock(os, 'setPriority', denied('os.setPriority'));
syncBuiltinESMExports();
// Pyodide asks process.binding for the fs flags of its (unmounted) host file system; nothing else is given.
process.binding = (name) => {
  if (name === 'constants') return { fs: fsConstants };
  throw new Error('process.binding: not in the lambda sandbox');
};

// --- Framing over the two pipes ----------------------------------------------------------------------------
let pending = Buffer.alloc(0);
const chunk = Buffer.alloc(1 << 16);
function readMore() {
  for (;;) {
    try {
      const n = readSync(IN, chunk, 0, chunk.length, null);
      if (n === 0) process.exit(0); // The parent is gone.
      return chunk.subarray(0, n);
    } catch (e) {
      if (e.code !== 'EAGAIN') throw e;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 2);
    }
  }
}
function readLine() {
  const parts = [];
  let nl = pending.indexOf(10);
  while (nl < 0) {
    parts.push(pending);
    pending = Buffer.from(readMore());
    nl = pending.indexOf(10);
  }
  parts.push(pending.subarray(0, nl));
  pending = pending.subarray(nl + 1);
  return Buffer.concat(parts).toString('utf8');
}
/** Exactly `size` raw bytes (the start snapshot follows its header line unencoded). */
function readBytes(size) {
  const out = Buffer.allocUnsafe(size);
  let got = Math.min(size, pending.length);
  pending.copy(out, 0, 0, got);
  pending = pending.subarray(got);
  while (got < size) {
    const more = readMore();
    const take = Math.min(size - got, more.length);
    more.copy(out, got, 0, take);
    got += take;
    if (take < more.length) pending = Buffer.from(more.subarray(take));
  }
  return out;
}
function writeLine(text) {
  writeRaw(Buffer.from(`${text}\n`, 'utf8'));
}
function writeRaw(bytes) {
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
// Mode `snapshot` (a process that never sees caller code): load Pyodide, import what the runtime uses, and send
// the memory snapshot to the parent. Mode `run`: start from the snapshot the parent sends first (a fraction of a
// full load), or load in full when it sends none.
const [mode] = process.argv.slice(4);
const { loadPyodide } = await import(pathToFileURL(pyodidePath).href);
const output = { stdout: (s) => process.stdout.write(`${s}\n`), stderr: (s) => process.stderr.write(`${s}\n`) };
const WARM_IMPORTS = 'import ast, base64, inspect, json, os, re, sys, time, traceback, types, typing';
if (mode === 'snapshot') {
  const pyodide = await loadPyodide({ jsglobals: {}, _makeSnapshot: true, ...output });
  pyodide.runPython(WARM_IMPORTS);
  const snapshot = pyodide.makeMemorySnapshot();
  writeLine(JSON.stringify({ type: 'snapshot', size: snapshot.length }));
  writeRaw(Buffer.from(snapshot.buffer, snapshot.byteOffset, snapshot.length));
  process.exit(0);
}
const start = JSON.parse(readLine());
const pyodide = start.snapshot_bytes
  ? await loadPyodide({ jsglobals: {}, _loadSnapshot: readBytes(start.snapshot_bytes), ...output })
  : await loadPyodide({ jsglobals: {}, ...output });
pyodide.registerJsModule('_lambda_host', { send: (line) => writeLine(line), recv: () => readLine() });
pyodide.runPython(readFileSync(runtimePath, 'utf8'), { filename: 'lambda_runtime.py' });
// Caller code gets no module that leads to JavaScript by import (the runtime took what it needs); what Python's
// introspection can still reach is fenced by the OS boundary and the permission model.
for (const name of ['js', 'pyodide_js', '_lambda_host']) pyodide.unregisterJsModule(name);
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
