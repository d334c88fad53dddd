import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';

export const percentile = (values: number[], p: number): number => {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
};
export const median = (values: number[]): number => percentile(values, 50);
export const round = (n: number, digits = 2): number => Math.round(n * 10 ** digits) / 10 ** digits;

export function machine() {
  return { nproc: cpus().length, node: process.version, platform: `${process.platform}-${process.arch}`, at: new Date().toISOString() };
}

/** Prints a table and writes the figures to bench/results/<scenario>.json (ignored by git). */
export function report(scenario: string, rows: Record<string, unknown>[], extra: Record<string, unknown> = {}): void {
  const m = machine();
  process.stdout.write(`\n${scenario} — nproc ${m.nproc}, node ${m.node}\n`);
  console.table(rows);
  for (const [k, v] of Object.entries(extra)) process.stdout.write(`${k}: ${typeof v === 'string' ? v : JSON.stringify(v)}\n`);
  const dir = join(process.cwd(), 'bench', 'results');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, `${scenario}.json`), JSON.stringify({ scenario, machine: m, rows, ...extra }, null, 2));
}

/**
 * The service settings a bench takes from its own environment, for side-by-side runs of one build: the writer mode
 * (`EVENT_STORE_WRITER=thread npm run bench -- …`), the Prometheus exposition (`METRICS_PORT=0`: its cost when on), the
 * heap's growth, the ranking thread's threshold.
 */
export const serviceEnv = (): Record<string, string> => {
  const env: Record<string, string> = {};
  for (const name of ['EVENT_STORE_WRITER', 'METRICS_PORT', 'HEAP_GROWING_PERCENT', 'LEXICAL_THREAD_MIN_POSTINGS', 'LEXICAL_INDEX_MAX_MB', 'LEXICAL_INDEX_MIN_ROWS', 'VECTOR_INDEX_MIN_VECTORS']) if (process.env[name]) env[name] = process.env[name]!;
  return env;
};

export const now = (): number => Number(process.hrtime.bigint()) / 1e6;

/** A JSON request to a bench's service with its key: the status and the parsed body (undefined when empty). */
export async function jsonCall(url: string, key: string, method: string, path: string, body?: unknown): Promise<{ status: number; json: any }> {
  const res = await fetch(`${url}${path}`, { method, headers: { 'content-type': 'application/json', 'x-api-key': key }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
  const text = await res.text();
  return { status: res.status, json: text ? JSON.parse(text) : undefined };
}
