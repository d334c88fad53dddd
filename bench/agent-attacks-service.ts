import { startBenchService } from './service';

/**
 * The service of the agent-attacks bench, in a process of its own (bench/agent-attacks.ts forks it): a lambda that
 * signals its parent reaches this process, not the bench's, whose pinger and watchdog keep running. Tells its URL
 * over IPC; closes on any message.
 */
async function main(): Promise<void> {
  const env = JSON.parse(process.argv[2] ?? '{}') as Record<string, string>;
  const service = await startBenchService('agent-attacks', env);
  process.send!({ url: service.started.url });
  process.once('message', () => {
    void service.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  });
}

main().catch((e) => {
  process.stderr.write(`${e instanceof Error ? e.stack : String(e)}\n`);
  process.exit(1);
});
