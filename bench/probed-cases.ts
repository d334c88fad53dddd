import { pollHealth } from '../libs/testing/src/raw-http';
import { now, report, round } from './common';
import { startBenchService } from './service';

/** A hostile request: built before the probe starts (so building is not measured), then sent. */
export interface ProbedCase {
  readonly name: string;
  readonly prepare: () => Promise<(url: string) => Promise<{ status: number | string; note: string }>>;
}

/**
 * Runs each case against a fresh service while a client on another thread polls `GET /health` (issue 22): the
 * slowest answer is how long everyone else waited; the peak RSS is the process's (the service runs in it).
 */
export async function runProbedCases(scenario: string, cases: readonly ProbedCase[]): Promise<void> {
  const service = await startBenchService(scenario);
  const { url } = service.started;
  const rows: Record<string, unknown>[] = [];
  try {
    await service.call('POST', '/v2/corpora', { key: 'h', name: 'h' });
    for (const c of cases) {
      const send = await c.prepare();
      const probe = pollHealth(url);
      const t = now();
      const { status, note } = await send(url);
      const took = now() - t;
      const { slowestMs, peakRss, failed } = await probe.stop();
      rows.push({
        case: c.name,
        status,
        'request s': round(took / 1000, 2),
        'slowest /health ms': round(slowestMs, 0),
        'peak RSS MB': round(peakRss / 2 ** 20, 0),
        ...(failed ? { 'health failed': failed } : {}),
        note,
      });
    }
  } finally {
    await service.close();
  }
  report(scenario, rows);
}
