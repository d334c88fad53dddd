import { ENCODER_REGISTRY, EncoderRegistry, loadEncoderConfig } from '@lib/encoders';
import { LambdaRunner } from '@lib/tools';
import { ConfigError, loadConfig } from '@lib/platform';
import { createLogger } from './api/src/logger';
import { startApp } from './app';
import type { Role } from './infrastructure/infrastructure';
import { telemetrySettings } from './infrastructure/telemetry';

function roleFromArgs(argv: string[]): Role {
  const arg = argv.find((a) => a.startsWith('--role='))?.slice('--role='.length) ?? 'all';
  if (arg !== 'all' && arg !== 'api' && arg !== 'worker') throw new ConfigError([`--role must be all, api or worker, got "${arg}"`]);
  return arg;
}

/**
 * Loads the default in-process encoder in the background once the service listens, so the first document or
 * query does not wait for it (~4.5 s the first time on a machine, ~0.3 s from its cache). Only here, in the
 * service's entry point: test apps and benches load it when they first need it.
 */
function warmDefaultEncoder(encoders: EncoderRegistry, log: ReturnType<typeof createLogger>): void {
  // An in-process default (shipped or an ONNX model) loads in this process; an endpoint has nothing to load.
  const builtIn = encoders.list().find((e) => e.default && (e.type === 'built-in' || e.type === 'onnx'));
  if (!builtIn) return;
  const started = Date.now();
  encoders
    .resolve(builtIn.name)
    .encode(['warm up'], 'document')
    .then(
      () => log.info({ encoder: builtIn.name, ms: Date.now() - started }, 'default encoder loaded'),
      (e: unknown) => log.warn({ err: e, encoder: builtIn.name }, 'default encoder failed to load; it will be retried on first use'),
    );
}

async function main(): Promise<void> {
  let config;
  let role: Role;
  try {
    config = loadConfig();
    // Checked here too, so a bad encoder variable is reported like any other before anything starts.
    loadEncoderConfig(config.env);
    telemetrySettings(config.env);
    role = roleFromArgs(process.argv.slice(2));
  } catch (e) {
    process.stderr.write(`${e instanceof Error ? e.message : String(e)}\n`);
    process.exit(2);
  }
  const log = createLogger(config.logLevel);
  try {
    const { app, url } = await startApp(config, role, log);
    // The console needs the key printed above (or in DATA_DIR/admin-api-key): say where it is once, like the key.
    if (role !== 'worker') process.stdout.write(`Console: ${url}/console\n`);
    warmDefaultEncoder(app.get<symbol, EncoderRegistry>(ENCODER_REGISTRY, { strict: false }), log);
    // A new install's lambda start snapshot, made once in the background (docs/lambda-tools.md); here only, as the
    // encoder: test apps and benches start many services on fresh data directories.
    void app.get(LambdaRunner, { strict: false }).prepareSnapshot();
    let stopping = false;
    const shutdown = (signal: string) => {
      if (stopping) return;
      stopping = true;
      log.info({ signal }, 'shutting down: draining requests, then closing stores');
      // app.close() stops accepting connections, waits for in-flight requests, then closes the adapters.
      app.close().then(
        () => {
          log.info('service stopped');
          process.exit(0);
        },
        (e: unknown) => {
          log.error({ err: e }, 'shutdown failed');
          process.exit(1);
        },
      );
    };
    process.on('SIGTERM', () => shutdown('SIGTERM'));
    process.on('SIGINT', () => shutdown('SIGINT'));
  } catch (e) {
    log.fatal({ err: e }, 'service failed to start');
    process.exit(1);
  }
}

void main();
