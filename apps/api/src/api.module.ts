import { DynamicModule, Global, Inject, Module, OnApplicationShutdown } from '@nestjs/common';
import { APP_FILTER, APP_GUARD, APP_PIPE, Reflector } from '@nestjs/core';
import { CqrsModule } from '@nestjs/cqrs';
import { AuthModule, Authenticator } from '@lib/auth';
import { CorporaModule } from '@lib/corpora';
import { EncodersModule, loadEncoderConfig } from '@lib/encoders';
import { RetrievalModule } from '@lib/retrieval';
import { AgentsModule, CAPABILITY_LOOKUP, RECALL_INDEX } from '@lib/agents';
import { LlmsModule } from '@lib/llms';
import { PipelinesModule } from '@lib/pipelines';
import { SchedulesModule } from '@lib/schedules';
import { AliasesModule } from '@lib/aliases';
import { ConnectorsModule } from '@lib/connectors';
import { WebhooksModule } from '@lib/webhooks';
import { MetricsModule } from '@lib/metrics';
import {
  AddressLookup,
  Clock,
  CLOCK,
  EVENT_STORE,
  ID_GENERATOR,
  OUTBOUND_HTTP,
  PIPELINES_OUTBOUND_HTTP,
  TOOLS_OUTBOUND_HTTP,
  OutboundHttp,
  OutboundPolicy,
  OutboundPolicyConfig,
  PROJECTION_PROGRESS,
  randomIds,
  READ_STORE,
  SEARCH_INDEX,
  SERVICE_CONFIG,
  ServiceConfig,
  StreamWriter,
  systemClock,
} from '@lib/platform';
import type { Logger } from 'pino';
import type { Infrastructure } from '../../infrastructure/infrastructure';
import { CorporaController } from './corpora/corpora.controller';
import { DocumentsController } from './corpora/documents.controller';
import { QueryController } from './corpora/query.controller';
import { ChatsController } from './chats/chats.controller';
import { QueryHistoryController } from './chats/query-history.controller';
import { JobsController } from './jobs/jobs.controller';
import { UploadController } from './corpora/upload.controller';
import { SummarizeController } from './corpora/summarize.controller';
import { ApiKeysController } from './auth/api-keys.controller';
import { AppClientsController } from './auth/app-clients.controller';
import { OAuthController } from './auth/oauth.controller';
import { UsersController } from './auth/users.controller';
import { AuthFailures } from './http/auth-failures';
import { WebhookLimits } from './http/webhook-limits';
import { AuthGuard } from './http/auth.guard';
import { SingleQueryParams } from './http/query-params.pipe';
import { bodyLimits, RequestBodies } from './http/request-body';
import { routesWithoutPolicy } from './http/policy';
import { ErrorFilter } from './http/error.filter';
import { drainBounds } from './http/unread-body';
import { AuditController } from './ops/audit.controller';
import { MetricsController } from './ops/metrics.controller';
import { EventsController } from './ops/events.controller';
import { HealthController } from './ops/health.controller';
import { ConsoleController } from './console/console.controller';
import { AgentAccessController } from './agents/agent-access.controller';
import { AgentsController } from './agents/agents.controller';
import { AgentRevisionsController } from './agents/agent-revisions.controller';
import { AgentBundlesController } from './agents/agent-bundles.controller';
import { ToolConfigurationsController } from './agents/tool-configurations.controller';
import { ToolServersController } from './agents/tool-servers.controller';
import { ToolsController } from './agents/tools.controller';
import { SchedulesController } from './agents/schedules.controller';
import { ConnectorsController } from './connectors/connectors.controller';
import { WebhooksController } from './webhooks/webhooks.controller';
import { PipelinesController } from './pipelines/pipelines.controller';
import { PipelineRunsController } from './pipelines/pipeline-runs.controller';
import { AliasesController } from './agents/aliases.controller';
import { AliasCanaryController } from './agents/alias-canary.controller';
import { EndUserSessionsController } from './agents/end-user-sessions.controller';
import { EndUserMemoryController, MemoryController } from './agents/memory.controller';
import { A2aController } from './a2a/a2a.controller';
import { A2aServer } from './a2a/a2a-server';
import { GlossariesController } from './agents/glossaries.controller';
import { SessionsController } from './agents/sessions.controller';
import { ReplaysController } from './agents/replays.controller';
import { EvaluationsController } from './agents/evaluations.controller';
import { TracesController } from './agents/traces.controller';
import { InstructionsController } from './agents/instructions.controller';
import { ChatController } from './llms/chat.controller';
import { EvaluationController } from './llms/evaluation.controller';
import { LlmsController } from './llms/llms.controller';
import { EncodersController } from './encoders/encoders.controller';
import { GenerationPresetsController } from './generation/generation-presets.controller';
import { RerankersController } from './corpora/rerankers.controller';
import { HallucinationCorrectorsController } from './llms/hallucination-correctors.controller';
import { OPENAPI_CONTROLLERS, OpenApiController } from './openapi/openapi.controller';
import { INFRASTRUCTURE } from './tokens';
import { artifactStoreFor } from '../../infrastructure/postgres-artifacts';

export interface ApiModuleOptions {
  readonly config: ServiceConfig;
  readonly infra: Infrastructure;
  readonly log: Logger;
  /** HS256 key for OAuth access tokens. */
  readonly signingKey: string;
  /** A worker process serves only the health probes. */
  readonly routes?: 'all' | 'health';
  /** AES-256 key for stored credentials (LLM auth). */
  readonly secretsKey: Buffer;
  /** Time source; tests move it to cross quota windows. */
  readonly clock?: Clock;
  /** Host name resolver of the outbound client; tests give a fake one to play DNS rebinding (default: the system's). */
  readonly lookup?: AddressLookup;
}

/** The guarded clients by purpose (OUTBOUND_* settings). */
interface OutboundClients {
  readonly models: OutboundHttp;
  readonly tools: OutboundHttp;
  readonly pipelines: OutboundHttp;
}

/** Closes the adapters (and stops the projections) after the HTTP server has drained. */
class InfrastructureLifecycle implements OnApplicationShutdown {
  constructor(
    @Inject(INFRASTRUCTURE) private readonly infra: Infrastructure,
    @Inject(OUTBOUND_HTTP) private readonly outbound: OutboundHttp,
    @Inject(TOOLS_OUTBOUND_HTTP) private readonly toolsOutbound: OutboundHttp,
    @Inject(PIPELINES_OUTBOUND_HTTP) private readonly pipelinesOutbound: OutboundHttp,
  ) {}
  async onApplicationShutdown(): Promise<void> {
    await Promise.all([this.outbound.close(), this.toolsOutbound.close(), this.pipelinesOutbound.close()]);
    await this.infra.close();
  }
}

@Global()
@Module({})
export class PortsModule {
  static forRoot(options: ApiModuleOptions, outbound: OutboundClients): DynamicModule {
    const { infra, config } = options;
    return {
      module: PortsModule,
      providers: [
        { provide: INFRASTRUCTURE, useValue: infra },
        { provide: SERVICE_CONFIG, useValue: config },
        { provide: EVENT_STORE, useValue: infra.events },
        { provide: READ_STORE, useValue: infra.reads },
        { provide: SEARCH_INDEX, useValue: infra.search },
        { provide: RECALL_INDEX, useValue: infra.recall },
        { provide: PROJECTION_PROGRESS, useValue: infra.progress },
        { provide: CLOCK, useValue: options.clock ?? systemClock },
        { provide: ID_GENERATOR, useValue: randomIds },
        { provide: OUTBOUND_HTTP, useValue: outbound.models },
        { provide: TOOLS_OUTBOUND_HTTP, useValue: outbound.tools },
        { provide: PIPELINES_OUTBOUND_HTTP, useValue: outbound.pipelines },
        { provide: StreamWriter, useValue: new StreamWriter({ store: infra.events, progress: infra.progress, timeoutMs: config.readYourWritesTimeoutMs }) },
        InfrastructureLifecycle,
      ],
      exports: [INFRASTRUCTURE, StreamWriter, SERVICE_CONFIG, OUTBOUND_HTTP, TOOLS_OUTBOUND_HTTP, PIPELINES_OUTBOUND_HTTP, EVENT_STORE, READ_STORE, SEARCH_INDEX, RECALL_INDEX, PROJECTION_PROGRESS, CLOCK, ID_GENERATOR],
    };
  }
}

/** Every controller of the API; each route must name its policy (checked here, at start-up). */
export const API_CONTROLLERS = [
  HealthController,
  ConsoleController,
  EventsController,
  AuditController,
  CorporaController,
  DocumentsController,
  QueryController,
  UploadController,
  SummarizeController,
  JobsController,
  UsersController,
  ApiKeysController,
  AppClientsController,
  OAuthController,
  LlmsController,
  ChatController,
  EvaluationController,
  EncodersController,
  GenerationPresetsController,
  ChatsController,
  QueryHistoryController,
  RerankersController,
  HallucinationCorrectorsController,
  AgentsController,
  AgentRevisionsController,
  AgentBundlesController,
  AgentAccessController,
  ToolConfigurationsController,
  ToolServersController,
  ToolsController,
  SchedulesController,
  ConnectorsController,
  PipelinesController,
  PipelineRunsController,
  AliasesController,
  AliasCanaryController,
  EndUserSessionsController,
  EndUserMemoryController,
  MemoryController,
  A2aController,
  GlossariesController,
  SessionsController,
  ReplaysController,
  EvaluationsController,
  TracesController,
  MetricsController,
  InstructionsController,
  WebhooksController,
  OpenApiController,
];

/** What an agent's configurers may do now (libs/agents' CapabilityLookup port): the auth module's authenticator. */
@Module({})
export class AgentCapabilitiesModule {
  static forRoot(auth: DynamicModule): DynamicModule {
    return { module: AgentCapabilitiesModule, imports: [auth], providers: [{ provide: CAPABILITY_LOOKUP, useExisting: Authenticator }], exports: [CAPABILITY_LOOKUP] };
  }
}

@Module({})
export class ApiModule {
  static forRoot(options: ApiModuleOptions): DynamicModule {
    const unguarded = routesWithoutPolicy(API_CONTROLLERS);
    if (unguarded.length) throw new Error(`Routes without a @Policy: ${unguarded.join(', ')}`);
    // One LlmsModule instance, shared with generation (it holds the quota engine and the model clients).
    const llms = LlmsModule.forRoot({ secretsKey: options.secretsKey });
    // One AuthModule instance too: the agents' capability lookup is its authenticator.
    const auth = AuthModule.forRoot({ signingKey: options.signingKey, secretsKey: options.secretsKey });
    // Every call leaving the service goes through one guarded client, with the policy of what it is for: an entry
    // allowing a model server does not open it to agent tools or pipelines (docs/security.md, Outbound calls).
    const client = (config: OutboundPolicyConfig) => new OutboundHttp(new OutboundPolicy(config), { lookup: options.lookup });
    const outbound: OutboundClients = { models: client(options.config.outbound), tools: client(options.config.outboundTools), pipelines: client(options.config.outboundPipelines) };
    return {
      module: ApiModule,
      imports: [
        PortsModule.forRoot(options, outbound),
        CqrsModule.forRoot(),
        CorporaModule,
        auth,
        llms,
        RetrievalModule.forRoot({ llms }),
        AgentsModule.forRoot({ llms, leaseTtlMs: options.config.leaseTtlMs, leaseRenewMs: options.config.leaseRenewMs, capabilities: AgentCapabilitiesModule.forRoot(auth), artifacts: artifactStoreFor }),
        PipelinesModule.forRoot({ llms }),
        SchedulesModule,
        AliasesModule,
        ConnectorsModule.forRoot({ llms }),
        WebhooksModule.forRoot({ llms }),
        MetricsModule,
        EncodersModule.forRoot(loadEncoderConfig(options.config.env), outbound.models.fetch),
      ],
      controllers: options.routes === 'health' ? [HealthController] : API_CONTROLLERS,
      providers: [
        { provide: APP_FILTER, useValue: new ErrorFilter(options.log, drainBounds(options.config.requestBodyTimeoutMs)) },
        { provide: APP_PIPE, useClass: SingleQueryParams },
        A2aServer,
        { provide: OPENAPI_CONTROLLERS, useValue: API_CONTROLLERS },
        { provide: AuthFailures, useValue: new AuthFailures(options.infra.rateLimits('auth_failures', options.config.authFailuresPerMinute, 60)) },
        { provide: RequestBodies, useValue: new RequestBodies(bodyLimits(options.config)) },
        { provide: WebhookLimits, useFactory: (failures: AuthFailures) => new WebhookLimits(options.infra.rateLimits('connector_webhook', options.config.rateLimitPerConnectorPerMinute, 60), failures), inject: [AuthFailures] },
        {
          provide: APP_GUARD,
          useFactory: (reflector: Reflector, auth: Authenticator, failures: AuthFailures, bodies: RequestBodies) => new AuthGuard(reflector, auth, failures, bodies, options.config, options.infra.rateLimits),
          inject: [Reflector, Authenticator, AuthFailures, RequestBodies],
        },
      ],
    };
  }
}
