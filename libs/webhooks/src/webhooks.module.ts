import { DynamicModule, Module } from '@nestjs/common';
import { SERVICE_CONFIG, ServiceConfig } from '@lib/platform';
import { StandardWebhooksSender } from './adapters/standard-webhooks/standard-webhooks-sender';
import { WebhookSender } from './application/delivery/webhook-sender.port';
import { Webhooks } from './application/webhooks/webhooks';

export interface WebhooksModuleOptions {
  /** The module that provides `SecretBox` (signing secrets are sealed with it): the app's one `LlmsModule.forRoot(…)`. */
  readonly llms: DynamicModule;
}

/**
 * Webhooks (docs/webhooks.md): their settings and sealed signing secrets, and the sender over the webhooks'
 * outbound policy. The worker wing adds `WebhookDispatcher` and `WebhookDeliverer` where it composes its runners.
 */
@Module({})
export class WebhooksModule {
  static forRoot(options: WebhooksModuleOptions): DynamicModule {
    return {
      module: WebhooksModule,
      // Global: the worker wing's dispatcher and deliverer, composed in its own module, use these.
      global: true,
      imports: [options.llms],
      providers: [Webhooks, { provide: WebhookSender, useFactory: (config: ServiceConfig) => new StandardWebhooksSender(config), inject: [SERVICE_CONFIG] }],
      exports: [Webhooks, WebhookSender],
    };
  }
}
