import { DynamicModule, Module } from '@nestjs/common';
import { GuardrailChecks } from './application/guardrails/guardrail-checks';
import { guardrailReferenceCheck } from './application/guardrails/guardrail-reference-check';
import { CqrsModule } from '@nestjs/cqrs';
import { CLOCK, Clock, DurableTimers, EVENT_STORE, EventStore, EventStoreLeases, Leases, ProcessLiveness, READ_STORE, ReadStore, SERVICE_CONFIG, ServiceConfig } from '@lib/platform';
import { CORPORA, CorpusRow } from '@lib/corpora/read-models';
import { AGENT_TOOLS, ArtifactBytes, ConditionSyntax, lambdaToolCheck, mcpToolCheck, SharedConfigurationRights, Tool, toolReferenceCheck, ToolRegistryHolder, ToolsModule, ToolUsers } from '@lib/tools';
import { GetAgentHandler, ListAgentsHandler } from './application/agent-queries/agent-queries';
import { AGENT_REFERENCE_CHECKS, AgentWriter, ReferenceCheck } from './application/agent-writer';
import { AgentRevisions } from './application/revisions/agent-revisions';
import { RestoreAgentRevisionHandler } from './application/revisions/restore-revision';
import { Replays } from './application/replay/replays';
import { Evaluations } from './application/evaluations/evaluations';
import { ReplaySessionEvaluator } from './application/evaluations/replay-session-evaluator';
import { SessionEvaluator } from './application/evaluations/session-evaluator.port';
import { CreateAgentHandler, DeleteAgentHandler, UpdateAgentHandler } from './application/agents/agent-commands';
import { AgentExporter } from './application/bundles/agent-export';
import { AgentImporter } from './application/bundles/agent-import';
import { GetInstructionHandler, ListInstructionsHandler, TestInstructionHandler } from './application/instruction-queries/instruction-queries';
import { instructionReferenceCheck } from './application/instruction-references';
import { InstructionTexts } from './application/instruction-texts';
import { InstructionWriter } from './application/instruction-writer';
import { CreateInstructionHandler, DeleteInstructionHandler, DeleteInstructionVersionHandler, UpdateInstructionHandler } from './application/instructions/instruction-commands';
import { ArtifactStore, FileArtifactStore } from './application/sessions/artifact-store';
import { SessionStore } from './application/sessions/session-store';
import { TraceQueries } from './application/traces/trace-queries';
import { Sessions } from './application/sessions/sessions';
import { SessionEnrichment } from './application/sessions/enrichment';
import { AgentQuotas } from './application/turn/agent-quotas';
import { AGENT_CORPUS_ACCESS, AGENT_LEASES, AGENT_LIVENESS, AGENT_SECRET_VALUES, AgentCorpusAccess, AgentSecretValues, SessionInputs } from './application/turn/session-inputs';
import { AgentIdentities, AgentSecrets } from './application/access/agent-access';
import { ConfigurerRights } from './application/access/configurer-rights';
import { AGENT_TOOL_PROVIDERS, TOOL_PROVIDERS, toolRegistry } from './application/tools/tool-catalogue';
import { AgentToolUsers } from './application/tools/agent-tool-users';
import { AGENT_RUNS } from './application/runs/agent-runs.port';
import { SessionAgentRuns } from './application/runs/session-agent-runs';
import { AGENT_USE } from './application/runs/agent-use.port';
import { CapabilityAgentUse } from './application/runs/capability-agent-use';
import { RecallScopes } from './application/recall/recall-scope';
import { AGENT_DIRECTORY } from './application/runs/agent-directory.port';
import { CONDITION_COMPILER, ConditionCompiler } from './application/runs/condition-compiler.port';
import { compileCondition } from './application/conditions';
import { AGENT_SECRET_READER } from './application/runs/agent-secret-reader.port';
import { StoredAgentDirectory } from './application/runs/stored-agent-directory';
import { TURN_SCORING } from './application/runs/turn-scoring.port';
import { TurnScorers } from './application/scoring/turn-scorers';
import { WAKEUP_SCHEDULER } from './application/agent-timers';
import { Glossaries, glossaryReminderCheck } from './application/glossaries/glossaries';
import { TurnRunner } from './application/turn/turn-runner';
import { RunningTurns } from './application/turn/running-turns';
import { LiveTurns } from './application/turn/live-turns';
import { SessionFeed } from './application/sessions/session-feed';
import { PromptBuilder } from './application/turn/prompt-builder';
import { ToolRound } from './application/turn/tool-round';
import { AgentMemory } from './application/memory/agent-memory';
import { MemoryTools } from './application/memory/memory-tool';
import { ApprovalArguments } from './application/turn/approval-arguments';

export interface AgentsModuleOptions {
  /** The module that provides ChatCompletions and SecretBox (one instance per process: quotas, model clients). */
  readonly llms: DynamicModule;
  /** Session leases: how long a turn's runner holds its session without renewing, and how often it renews. */
  readonly leaseTtlMs: number;
  readonly leaseRenewMs: number;
  /**
   * A module exporting CAPABILITY_LOOKUP (what a configurer may do now), composed in apps/ over the auth module's
   * authenticator. Without it an agent's tools get no rights (fail closed).
   */
  readonly capabilities?: DynamicModule;
  /**
   * Where artifacts' bytes go, composed in apps/ (PostgreSQL when the processes are on several hosts:
   * apps/infrastructure/postgres-artifacts.ts); the files under DATA_DIR when absent.
   */
  readonly artifacts?: (config: ServiceConfig) => ArtifactStore;
}

/** The condition's compile error (agent.invalid_condition's words), for libs/tools' ConditionSyntax port. */
function conditionProblem(source: string, field: string): string | undefined {
  try {
    compileCondition(source, field);
    return undefined;
  } catch (e) {
    return (e as Error).message;
  }
}

/** The agent half: agents, instructions, sessions and their turns, the agent-level tools. Ports come from the platform module; models from the llms module; tools from libs/tools. */
@Module({})
export class AgentsModule {
  static forRoot(options: AgentsModuleOptions): DynamicModule {
    const referenceChecks = (reads: ReadStore, service: ServiceConfig): ReferenceCheck[] => [instructionReferenceCheck(reads), toolReferenceCheck(reads), mcpToolCheck(reads), lambdaToolCheck(reads), glossaryReminderCheck(reads), guardrailReferenceCheck(reads, service)];
    return {
      module: AgentsModule,
      // Global: the worker wing's sweep of crashed turns uses the session inputs of this module.
      global: true,
      imports: [CqrsModule, options.llms, ToolsModule.forRoot({ llms: options.llms }), ...(options.capabilities ? [options.capabilities] : [])],
      providers: [
        { provide: AGENT_REFERENCE_CHECKS, useFactory: referenceChecks, inject: [READ_STORE, SERVICE_CONFIG] },
        {
          provide: AGENT_LEASES,
          inject: [EVENT_STORE, CLOCK],
          useFactory: (store: EventStore, clock: Clock) => new EventStoreLeases(store, clock, { ttlMs: options.leaseTtlMs, renewMs: options.leaseRenewMs }),
        },
        { provide: AGENT_LIVENESS, inject: [AGENT_LEASES], useFactory: (leases: Leases) => new ProcessLiveness(leases) },
        AgentSecrets,
        AgentExporter,
        AgentImporter,
        AgentIdentities,
        ConfigurerRights,
        {
          // An agent's tools read what its identity may read (docs/agents.md, Identity).
          provide: AGENT_CORPUS_ACCESS,
          inject: [READ_STORE, AgentIdentities],
          useFactory:
            (reads: ReadStore, identities: AgentIdentities): AgentCorpusAccess =>
            async (agentKey, corpusKey) =>
              (await reads.get<CorpusRow>(CORPORA, corpusKey)) !== undefined && (await identities.canReadCorpus(agentKey, corpusKey)),
        },
        { provide: AGENT_SECRET_VALUES, inject: [AgentSecrets], useFactory: (secrets: AgentSecrets): AgentSecretValues => (agentKey) => secrets.resolve(agentKey) },
        AgentWriter,
        AgentRevisions,
        RestoreAgentRevisionHandler,
        Replays,
        Evaluations,
        ReplaySessionEvaluator,
        { provide: SessionEvaluator, useExisting: ReplaySessionEvaluator },
        CreateAgentHandler,
        UpdateAgentHandler,
        DeleteAgentHandler,
        GetAgentHandler,
        ListAgentsHandler,
        InstructionWriter,
        InstructionTexts,
        CreateInstructionHandler,
        UpdateInstructionHandler,
        DeleteInstructionHandler,
        DeleteInstructionVersionHandler,
        GetInstructionHandler,
        ListInstructionsHandler,
        TestInstructionHandler,
        SessionStore,
        {
          // Processes on several hosts (POSTGRES_URL) have a DATA_DIR each: an artifact uploaded through one must be
          // readable by a turn on another, so its bytes go to PostgreSQL. One machine keeps the files.
          provide: ArtifactStore,
          inject: [SERVICE_CONFIG],
          useFactory: options.artifacts ?? ((config: ServiceConfig) => new FileArtifactStore(config)),
        },
        // The ports libs/tools owns for what only the agents context knows.
        { provide: ArtifactBytes, useExisting: ArtifactStore },
        { provide: SharedConfigurationRights, useExisting: ConfigurerRights },
        { provide: ToolUsers, useClass: AgentToolUsers },
        { provide: ConditionSyntax, useValue: { problem: conditionProblem } satisfies ConditionSyntax },
        SessionEnrichment,
        Sessions,
        TraceQueries,
        {
          provide: WAKEUP_SCHEDULER,
          inject: [EVENT_STORE, CLOCK, AGENT_LEASES],
          useFactory: (store: EventStore, clock: Clock, leases: Leases) => new DurableTimers(store, clock, leases, { pollMs: 60_000 }),
        },
        Glossaries,
        ...AGENT_TOOL_PROVIDERS,
        // Every tool type's entry (libs/tools' and the agent-level ones) names its Tool (tool-catalogue.ts): the
        // registry and the catalogue come from them, bound into the holder as it is built (ToolServers and the lambda
        // tool read it there: ToolRegistryHolder).
        {
          provide: AGENT_TOOLS,
          inject: [ToolRegistryHolder, ...TOOL_PROVIDERS],
          useFactory: (holder: ToolRegistryHolder, ...tools: Tool[]) => {
            const registry = toolRegistry(tools);
            holder.bind(registry);
            return registry;
          },
        },
        AgentQuotas,
        PromptBuilder,
        ToolRound,
        GuardrailChecks,
        AgentMemory,
        MemoryTools,
        TurnRunner,
        ApprovalArguments,
        LiveTurns,
        RunningTurns,
        SessionInputs,
        SessionFeed,
        { provide: AGENT_RUNS, inject: [Sessions, SessionInputs], useFactory: (sessions: Sessions, inputs: SessionInputs) => new SessionAgentRuns(sessions, inputs) },
        { provide: AGENT_USE, useClass: CapabilityAgentUse },
        { provide: AGENT_DIRECTORY, useClass: StoredAgentDirectory },
        { provide: AGENT_SECRET_READER, useExisting: AgentSecrets },
        { provide: CONDITION_COMPILER, useValue: { compile: compileCondition } satisfies ConditionCompiler },
        RecallScopes,
        TurnScorers,
        { provide: TURN_SCORING, useExisting: TurnScorers },
      ],
      exports: [AGENT_RUNS, TURN_SCORING, AGENT_USE, AGENT_DIRECTORY, AGENT_SECRET_READER, CONDITION_COMPILER, WAKEUP_SCHEDULER, AgentWriter, AgentRevisions, Replays, Evaluations, SessionEvaluator, InstructionTexts, Sessions, SessionInputs, RunningTurns, SessionFeed, AgentSecrets, AgentIdentities, ConfigurerRights, ToolsModule, AGENT_TOOLS, ArtifactBytes, SharedConfigurationRights, ToolUsers, ConditionSyntax, Glossaries, TraceQueries, AgentExporter, AgentImporter, AgentMemory],
    };
  }
}
