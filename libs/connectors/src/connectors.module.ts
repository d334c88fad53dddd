import { DynamicModule, Module } from '@nestjs/common';
import { ConnectorPlatforms } from './adapters/connector-platforms';
import { CONNECTOR_PLATFORMS } from './application/connectors/connector-platform.port';
import { ConnectorReplier } from './application/connectors/connector-replier';
import { ConnectorWebhooks } from './application/connectors/connector-webhooks';
import { Connectors } from './application/connectors/connectors';

export interface ConnectorsModuleOptions {
  /** The module that provides `SecretBox` (credentials are sealed with it): the app's one `LlmsModule.forRoot(…)`. */
  readonly llms: DynamicModule;
}

/**
 * Agent connectors (docs/connectors.md): their settings and sealed credentials, the inbound webhooks and one
 * adapter per platform. The agents they answer with are reached through `@lib/agents/runs` (the global
 * AgentsModule provides those ports). The worker wing adds `ConnectorReplier` where it composes its runners.
 */
@Module({})
export class ConnectorsModule {
  static forRoot(options: ConnectorsModuleOptions): DynamicModule {
    return {
      module: ConnectorsModule,
      // Global: the worker wing's ConnectorReplier, composed in its own module, uses these.
      global: true,
      imports: [options.llms],
      providers: [Connectors, { provide: CONNECTOR_PLATFORMS, useClass: ConnectorPlatforms }, ConnectorWebhooks],
      exports: [Connectors, CONNECTOR_PLATFORMS, ConnectorWebhooks],
    };
  }
}
