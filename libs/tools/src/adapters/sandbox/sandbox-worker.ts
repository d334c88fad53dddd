/**
 * A worker thread that runs callers' programs the main thread must not: jq (WebAssembly, Turing-complete) and
 * regular expressions over artifacts (backtracking can take exponential time). The pool terminates it when a
 * task passes its deadline.
 */
import { parentPort } from 'node:worker_threads';
// jq-web is the jq C sources compiled with Emscripten: an in-memory file system, no host environment.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const jqReady: Promise<{ json(input: unknown, program: string): unknown }> = require('jq-web');

export type SandboxTask =
  | { readonly id: number; readonly kind: 'jq'; readonly program: string; readonly input: unknown }
  | { readonly id: number; readonly kind: 'grep'; readonly pattern: string; readonly flags: string; readonly invert: boolean; readonly maxMatches: number; readonly text: string };

export type SandboxReply = { readonly id: number; readonly value: unknown } | { readonly id: number; readonly error: string } | { readonly ready: true };

/** Characters of a matching line shown around the match. */
const SNIPPET = 400;

function grep(task: Extract<SandboxTask, { kind: 'grep' }>) {
  const re = new RegExp(task.pattern, task.flags);
  const matches: { line: number; text: string }[] = [];
  let count = 0;
  const lines = task.text.split('\n');
  for (let i = 0; i < lines.length && count < task.maxMatches; i++) {
    const line = lines[i];
    const hit = re.exec(line);
    if ((hit !== null) !== task.invert) {
      count++;
      // A long line (a JSON document on one line) is shown around its match, not whole.
      const at = hit?.index ?? 0;
      const text = line.length <= SNIPPET ? line : `${at > SNIPPET / 2 ? '…' : ''}${line.slice(Math.max(0, at - SNIPPET / 2), at + SNIPPET / 2)}${at + SNIPPET / 2 < line.length ? '…' : ''}`;
      matches.push({ line: i + 1, text });
    }
  }
  return { matches, count, lines: lines.length };
}

void jqReady.then((jq) => {
  parentPort!.on('message', (task: SandboxTask) => {
    try {
      const value = task.kind === 'jq' ? jq.json(task.input, task.program) : grep(task);
      parentPort!.postMessage({ id: task.id, value } satisfies SandboxReply);
    } catch (e) {
      // jq's message starts with its exit code: keep what a person can act on.
      const raw = (e as Error).message;
      // jq-web reads no output as a crash of its own; say what happened.
      const message = /reading 'trim'/.test(raw) ? 'the program produced no output' : raw.replace(/^Non-zero exit code: \d+\n/, '').replace(/\n+$/, '');
      parentPort!.postMessage({ id: task.id, error: message } satisfies SandboxReply);
    }
  });
  parentPort!.postMessage({ ready: true } satisfies SandboxReply);
});
