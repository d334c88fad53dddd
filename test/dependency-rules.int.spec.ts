import { execFile } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';

const ROOT = join(__dirname, '..');
const run = promisify(execFile);

/**
 * The dependency rules hold through every entry point (issue 13): a scratch file that reaches an adapter, a use
 * case or a framework through a barrel fails `npm run lint` with the rule's name, as a direct import would.
 */
async function lintWith(path: string, source: string): Promise<string> {
  const file = join(ROOT, path);
  writeFileSync(file, source);
  try {
    await run(join(ROOT, 'node_modules/.bin/depcruise'), [path, '--config', '.dependency-cruiser.cjs', '--output-type', 'err'], { cwd: ROOT });
    return '';
  } catch (e) {
    return String((e as { stdout?: string }).stdout ?? e);
  } finally {
    rmSync(file, { force: true });
  }
}

describe('dependency rules, by reachability', () => {
  it.each([
    ['domain → the platform main entry (stream writer, HTTP client)', 'libs/corpora/src/domain/lint-probe.ts', "import { StreamWriter } from '@lib/platform';\nexport const probe = StreamWriter;\n", 'domain-reaches-only-the-kernel'],
    ['domain → the SQLite adapters entry', 'libs/auth/src/domain/lint-probe.ts', "import { SqliteEventStore } from '@lib/platform/sqlite';\nexport const probe = SqliteEventStore;\n", 'domain-no-frameworks'],
    ['domain → its own context barrel (use cases, Nest)', 'libs/llms/src/domain/lint-probe.ts', "import { LLMS } from '@lib/llms';\nexport const probe = LLMS;\n", 'domain-reaches-only-the-kernel'],
    ['a projection → a context barrel (use cases, SDKs)', 'projections/corpora/lint-probe.ts', "import { corpusStream } from '@lib/corpora';\nexport const probe = corpusStream;\n", 'projections-reach-only-events-and-ports'],
    ['a use case → @nestjs/core (a ModuleRef look-up)', 'libs/agents/src/application/lint-probe.ts', "import { ModuleRef } from '@nestjs/core';\nexport const probe = ModuleRef;\n", 'libs-never-reach-nest-core'],
    ['a use case → the SQLite adapters entry', 'libs/corpora/src/application/lint-probe.ts', "import { SqliteReadStore } from '@lib/platform/sqlite';\nexport const probe = SqliteReadStore;\n", 'only-apps-reach-adapters'],
    ['a pipelines use case → the agents barrel (its use cases)', 'libs/pipelines/src/application/lint-probe.ts', "import { Sessions } from '@lib/agents';\nexport const probe = Sessions;\n", 'contexts-reach-agents-through-the-run-port'],
    ['a schedules use case → the agents barrel (its use cases)', 'libs/schedules/src/application/lint-probe.ts', "import { Sessions } from '@lib/agents';\nexport const probe = Sessions;\n", 'contexts-reach-agents-through-the-run-port'],
    ['a schedules use case → the aliases context', 'libs/schedules/src/application/lint-probe.ts', "import { Aliases } from '@lib/aliases';\nexport const probe = Aliases;\n", 'contexts-never-reach-each-other'],
    ['a pipelines use case → the schedules context', 'libs/pipelines/src/application/lint-probe.ts', "import { Schedules } from '@lib/schedules';\nexport const probe = Schedules;\n", 'contexts-never-reach-each-other'],
    ['an aliases use case → the agents barrel (its use cases)', 'libs/aliases/src/application/lint-probe.ts', "import { Sessions } from '@lib/agents';\nexport const probe = Sessions;\n", 'contexts-reach-agents-through-the-run-port'],
    ['a tool → the agents barrel', 'libs/tools/src/application/lint-probe.ts', "import { Sessions } from '@lib/agents';\nexport const probe = Sessions;\n", 'tools-never-reach-agents'],
    ['a tool → the run-an-agent entry', 'libs/tools/src/application/lint-probe.ts', "import { AGENT_RUNS } from '@lib/agents/runs';\nexport const probe = AGENT_RUNS;\n", 'tools-never-reach-agents'],
    ["the agents' domain → the tools barrel (use cases, Nest)", 'libs/agents/src/domain/lint-probe.ts', "import { ToolCaller } from '@lib/tools';\nexport const probe = ToolCaller;\n", 'domain-reaches-only-the-kernel'],
    ['connectors → the agents barrel (its use cases)', 'libs/connectors/src/application/lint-probe.ts', "import { AgentWriter } from '@lib/agents';\nexport const probe = AgentWriter;\n", 'contexts-reach-agents-through-the-run-port'],
    ['an adapter → a use case of its library', 'libs/connectors/src/adapters/lint-probe.ts', "import { Connectors } from '../application/connectors/connectors';\nexport const probe = Connectors;\n", 'adapters-never-reach-application'],
    ['an adapter → its own library barrel', 'libs/connectors/src/adapters/lint-probe.ts', "import { ConnectorWebhooks } from '../index';\nexport const probe = ConnectorWebhooks;\n", 'adapters-never-reach-application'],
    ['an adapter of another library → a use case of its library', 'libs/llms/src/adapters/lint-probe.ts', "import { ChatCompletions } from '../application/chat/chat-completions';\nexport const probe = ChatCompletions;\n", 'adapters-never-reach-application'],
    ['a use case → an adapter of its library', 'libs/connectors/src/application/lint-probe.ts', "import { SlackPlatform } from '../adapters/slack/slack';\nexport const probe = SlackPlatform;\n", 'application-reaches-adapters-through-ports'],
    ['webhooks → the agents events entry (they read the log by type string)', 'libs/webhooks/src/application/lint-probe.ts', "import type { SessionEvent } from '@lib/agents/events';\nexport type Probe = SessionEvent;\n", 'webhooks-reach-no-other-context'],
    ['webhooks → the pipelines context', 'libs/webhooks/src/domain/lint-probe.ts', "import { PIPELINES } from '@lib/pipelines/read-models';\nexport const probe = PIPELINES;\n", 'webhooks-reach-no-other-context'],
  ])('refuses %s', async (_what, path, source, rule) => {
    expect(await lintWith(path, source)).toContain(`error ${rule}: ${path}`);
  }, 60_000);

  it('accepts the same domain file through the kernel entry', async () => {
    expect(await lintWith('libs/corpora/src/domain/lint-probe.ts', "import { invalid } from '@lib/platform/kernel';\nexport const probe = invalid;\n")).toBe('');
  }, 60_000);

  it('accepts a pipelines use case reaching agents through the run-an-agent entry', async () => {
    expect(await lintWith('libs/pipelines/src/application/lint-probe.ts', "import { AGENT_RUNS } from '@lib/agents/runs';\nexport const probe = AGENT_RUNS;\n")).toBe('');
  }, 60_000);

  it('accepts a schedules use case reaching agents through the run-an-agent entry', async () => {
    expect(await lintWith('libs/schedules/src/application/lint-probe.ts', "import { AGENT_RUNS } from '@lib/agents/runs';\nexport const probe = AGENT_RUNS;\n")).toBe('');
  }, 60_000);

  it('accepts an aliases use case reaching agents through the run-an-agent entry and read models', async () => {
    expect(await lintWith('libs/aliases/src/application/lint-probe.ts', "import { CONDITION_COMPILER } from '@lib/agents/runs';\nimport { SESSIONS } from '@lib/agents/read-models';\nexport const probe = [CONDITION_COMPILER, SESSIONS];\n")).toBe('');
  }, 60_000);

  it("accepts the agents' domain reaching the tools' domain through its pure entry", async () => {
    expect(await lintWith('libs/agents/src/domain/lint-probe.ts', "import { toolProblems } from '@lib/tools/domain';\nexport const probe = toolProblems;\n")).toBe('');
  }, 60_000);

  it.each([
    ['connectors → agents through the run-an-agent entry', 'libs/connectors/src/application/lint-probe.ts', "import { AGENT_RUNS } from '@lib/agents/runs';\nexport const probe = AGENT_RUNS;\n"],
    ['an adapter → the port it implements', 'libs/connectors/src/adapters/lint-probe.ts', "import { CONNECTOR_PLATFORMS } from '../application/connectors/connector-platform.port';\nexport const probe = CONNECTOR_PLATFORMS;\n"],
    ['webhooks → the SecretBox of libs/llms', 'libs/webhooks/src/application/lint-probe.ts', "import { SecretBox } from '@lib/llms';\nexport const probe = SecretBox;\n"],
    ['a use case → another library\'s entry', 'libs/connectors/src/application/lint-probe.ts', "import { OutboundHttp } from '@lib/platform';\nexport const probe = OutboundHttp;\n"],
  ])('accepts %s', async (_what, path, source) => {
    expect(await lintWith(path, source)).toBe('');
  }, 60_000);
});
