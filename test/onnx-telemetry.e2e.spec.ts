import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { writeTinyEncoder } from '@lib/testing';
import { scratchDir } from './support/scratch-dir';
import { spawnService, ServiceProcess } from './support/service-process';

/**
 * onnxruntime-node's Linux library starts Microsoft's telemetry when it loads: a `/tmp/mat-debug-<pid>.log` file, and
 * DNS lookups of the vendor's event collector (seen with strace, docs/encoders.md). The service turns it off unless
 * the operator sets `ORT_DISABLE_TELEMETRY` itself. Separate processes: the library reads the process's own
 * environment, which a jest file's `process.env` is not, and a process loads the library once.
 */
describe("the ONNX runtime's vendor telemetry", () => {
  const processes: ServiceProcess[] = [];
  afterAll(async () => {
    for (const p of processes) p.child.kill('SIGKILL');
    await Promise.all(processes.map((p) => p.exited));
  });

  const start = async (env: Record<string, string>) => {
    const model = writeTinyEncoder({ dir: join(scratchDir('onnx-telemetry-'), 'tiny'), words: ['otter', 'kelp'], dimensions: 2, vector: (w) => (w === 'otter' ? [1, 0] : [0, 1]) });
    // A configured model is loaded and run once before the service listens (docs/encoders.md, "start").
    const service = await spawnService({ DATA_DIR: scratchDir('onnx-telemetry-data-'), ENCODER_MODEL_DIR: model, ONNX_ENCODER_NAME: 'tiny', ...env });
    processes.push(service);
    return join('/tmp', `mat-debug-${service.child.pid}.log`);
  };

  it('is off by default: a process that loaded a model leaves no trace file', async () => {
    delete process.env.ORT_DISABLE_TELEMETRY;
    const trace = await start({});
    expect(existsSync(trace)).toBe(false);
  });

  it("is the operator's to turn on: ORT_DISABLE_TELEMETRY=0 is passed through", async () => {
    const trace = await start({ ORT_DISABLE_TELEMETRY: '0' });
    try {
      expect(existsSync(trace)).toBe(true);
    } finally {
      rmSync(trace, { force: true });
    }
  });
});
