// The peer of `npm run bench -- agents-vs-langgraph`: a LangGraph.js ReAct agent (createReactAgent) whose state is
// checkpointed by a SqliteSaver on a file, one thread per conversation, served over HTTP in a process of its own.
// Plain JavaScript with its own node_modules (bench/peers/package.json), so the service's build never sees it.
//
//   POST /threads/{thread_id}/runs  {"content": "…"}  →  200 {"answer": "…", "messages": n, "tool_messages": n}
//
// Environment: PEER_DB (the checkpoint file), PEER_SYNCHRONOUS (FULL, or "installed" for the pragmas the saver sets
// itself), MODEL_BASE_URL (an OpenAI-compatible …/v1), PEER_MODEL. Prints one JSON line once it listens:
// {"listening": port, "pragmas": {...}, "versions": {...}}.
import { createServer } from 'node:http';
import { readFileSync } from 'node:fs';
import Database from 'better-sqlite3';
import { tool } from '@langchain/core/tools';
import { ChatOpenAI } from '@langchain/openai';
import { SqliteSaver } from '@langchain/langgraph-checkpoint-sqlite';
import { createReactAgent } from '@langchain/langgraph/prebuilt';
import { z } from 'zod';

const { PEER_DB, PEER_SYNCHRONOUS = 'installed', MODEL_BASE_URL, PEER_MODEL = 'upstream-model' } = process.env;
if (!PEER_DB || !MODEL_BASE_URL) throw new Error('PEER_DB and MODEL_BASE_URL are required');

const db = new Database(PEER_DB);
// Before the saver's setup (which switches the file to WAL): synchronous is a setting of the connection.
if (PEER_SYNCHRONOUS.toUpperCase() === 'FULL') db.pragma('synchronous = FULL');
else if (PEER_SYNCHRONOUS !== 'installed') throw new Error(`PEER_SYNCHRONOUS must be FULL or installed, got ${PEER_SYNCHRONOUS}`);
const checkpointer = new SqliteSaver(db);
checkpointer.setup();
const synchronousNames = ['OFF', 'NORMAL', 'FULL', 'EXTRA'];
const pragmas = { journal_mode: db.pragma('journal_mode', { simple: true }), synchronous: synchronousNames[db.pragma('synchronous', { simple: true })] };

// The same trivial tool as the service's side of the bench (a scratch pad read of an empty pad): no I/O, a constant.
const notes = tool(async ({ pad = 'default' }) => JSON.stringify({ pad, content: '', size_bytes: 0 }), {
  name: 'notes',
  description: 'Keeps notes across the conversation in named pads: read, write, append, replace (old → new), clear.',
  schema: z.object({ operation: z.enum(['read', 'write', 'append', 'replace', 'clear']), pad: z.string().optional(), content: z.string().optional() }),
});

const llm = new ChatOpenAI({ model: PEER_MODEL, apiKey: 'sk-bench', maxRetries: 0, configuration: { baseURL: MODEL_BASE_URL } });
const agent = createReactAgent({ llm, tools: [notes], checkpointer, prompt: 'Answer briefly.' });

async function run(threadId, content) {
  const state = await agent.invoke({ messages: [{ role: 'user', content }] }, { configurable: { thread_id: threadId } });
  const last = state.messages[state.messages.length - 1];
  return { answer: typeof last.content === 'string' ? last.content : JSON.stringify(last.content), messages: state.messages.length, tool_messages: state.messages.filter((m) => m.getType() === 'tool').length };
}

const send = (res, status, body) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));

const server = createServer((req, res) => {
  const match = req.method === 'POST' && /^\/threads\/([A-Za-z0-9_-]{1,100})\/runs$/.exec(req.url ?? '');
  if (!match) return send(res, 404, { error: 'POST /threads/{thread_id}/runs' });
  const parts = [];
  req.on('data', (c) => parts.push(c));
  req.on('end', () => {
    let content;
    try {
      content = JSON.parse(Buffer.concat(parts).toString('utf8')).content;
    } catch {
      return send(res, 400, { error: 'body must be JSON' });
    }
    if (typeof content !== 'string' || !content) return send(res, 400, { error: 'content must be a non-empty string' });
    run(match[1], content).then(
      (out) => send(res, 200, out),
      (e) => send(res, 500, { error: e instanceof Error ? e.message : String(e) }),
    );
  });
});

// Read from the files: some of these packages do not export their package.json.
const versionOf = (name) => JSON.parse(readFileSync(new URL(`./node_modules/${name}/package.json`, import.meta.url), 'utf8')).version;
const versions = Object.fromEntries(['@langchain/langgraph', '@langchain/langgraph-checkpoint-sqlite', '@langchain/core', '@langchain/openai', 'openai', 'better-sqlite3'].map((p) => [p, versionOf(p)]));
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => process.stdout.write(`${JSON.stringify({ listening: server.address().port, pragmas, versions })}\n`));
const stop = () => server.close(() => (db.close(), process.exit(0)));
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
