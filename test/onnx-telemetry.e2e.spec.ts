import { existsSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { writeTinyEncoder } from '@lib/testing';
import { scratchDir } from './support/scratch-dir';
import { spawnService, ServiceProcess } from './support/service-process';

/**
 * onnxruntime-node's Linux library starts Microsoft's telemetry when it loads (docs/encoders.md): it persists a
 * device id and an event cache under `$HOME/.cache/Microsoft/DeveloperTools/.onnxruntime/`, writes
 * `/tmp/mat-debug-<pid>.log` once a model is loaded, and looks up the vendor's event collector. The service turns it
 * off unless the operator sets `ORT_DISABLE_TELEMETRY` itself. Separate processes: the library reads the process's
 * own environment, which a jest file's `process.env` is not, and a process loads the library once. Each process gets
 * its own HOME, so what it leaves there is its own.
 *
 * Whether the vendor's code starts at all depends on the machine (one CI machine showed no trace file with the
 * telemetry turned on), so the control run says what it saw instead of failing; the default is always checked.
 */
describe("the ONNX runtime's vendor telemetry", () => {
  const processes: ServiceProcess[] = [];
  afterAll(async () => {
    for (const p of processes) p.child.kill('SIGKILL');
    await Promise.all(processes.map((p) => p.exited));
  });

  /** Starts the service with a model loaded and returns what of the vendor's telemetry it left behind. */
  const traces = async (env: Record<string, string>): Promise<string[]> => {
    const home = scratchDir('onnx-telemetry-home-');
    const model = writeTinyEncoder({ dir: join(scratchDir('onnx-telemetry-'), 'tiny'), words: ['otter', 'kelp'], dimensions: 2, vector: (w) => (w === 'otter' ? [1, 0] : [0, 1]) });
    // A configured model is loaded and run once before the service listens (docs/encoders.md, "start").
    const service = await spawnService({ DATA_DIR: scratchDir('onnx-telemetry-data-'), ENCODER_MODEL_DIR: model, ONNX_ENCODER_NAME: 'tiny', HOME: home, ...env });
    processes.push(service);
    const trace = join('/tmp', `mat-debug-${service.child.pid}.log`);
    const vendorDir = join(home, '.cache', 'Microsoft');
    const left = [...(existsSync(trace) ? [trace] : []), ...(existsSync(vendorDir) ? readdirSync(vendorDir, { recursive: true }).map((f) => join(vendorDir, String(f))) : [])];
    rmSync(trace, { force: true });
    return left;
  };

  it('is off by default: a process that loaded a model leaves no trace file and nothing of the vendor under HOME', async () => {
    // The control: asked to run (ORT_DISABLE_TELEMETRY=0 is passed through, quiet-onnx-runtime.unit.spec.ts), the
    // vendor's code leaves traces this check can see, where it starts at all on this machine.
    const control = await traces({ ORT_DISABLE_TELEMETRY: '0' });
    if (control.length === 0) console.warn('the ONNX runtime started no telemetry on this machine even when asked to: the check below could not have seen it here');
    delete process.env.ORT_DISABLE_TELEMETRY;
    expect(await traces({})).toEqual([]);
  });
});
