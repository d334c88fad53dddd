import { DynamicModule, Inject, Logger, Module, OnModuleDestroy } from '@nestjs/common';
import { CqrsModule } from '@nestjs/cqrs';
import { Clock, CLOCK, EVENT_STORE, EventStore } from '@lib/platform';
import { ChatCompletions } from './application/chat/chat-completions';
import { ModelResolver } from './application/chat/model-resolver';
import { CreateLlmHandler } from './application/create-llm/create-llm';
import { DeleteLlmHandler } from './application/delete-llm/delete-llm';
import { DiscoverLlm } from './application/discover/discover-llm';
import { FactualConsistency } from './application/evaluation/factual-consistency';
import { HallucinationCorrection } from './application/evaluation/hallucination-correction';
import { GetLlmHandler, ListLlmsHandler } from './application/llm-queries/llm-queries';
import { LlmWriter } from './application/llm-writer';
import { LlmProviders } from './application/provider/llm-providers';
import { OpenAiProvider } from './adapters/openai/openai-provider';
import { LLM_QUOTAS, llmUsageLedger } from './application/quotas/llm-quotas';
import { QuotaEngine } from './application/quotas/quota-engine';
import { SecretBox } from './application/secrets/secret-box';
import { UpdateLlmHandler } from './application/update-llm/update-llm';
import { RegisteredEncoders } from './application/encoders/registered-encoders';
import { CreateEncoderHandler } from './application/create-encoder/create-encoder';

export interface LlmsModuleOptions {
  /** 32-byte AES key for stored credentials (SECRETS_KEY, or the key file under DATA_DIR). */
  readonly secretsKey: Buffer;
}

/** Appends of usage events still in flight are finished before the event store closes. */
class QuotaFlush implements OnModuleDestroy {
  constructor(@Inject(LLM_QUOTAS) private readonly quotas: QuotaEngine) {}
  async onModuleDestroy(): Promise<void> {
    await this.quotas.flush();
  }
}

/** Language models: registry, chat completions, quotas, discovery, factual consistency. Ports come from the platform module. */
@Module({})
export class LlmsModule {
  static forRoot(options: LlmsModuleOptions): DynamicModule {
    const log = new Logger('llms');
    return {
      module: LlmsModule,
      imports: [CqrsModule],
      providers: [
        { provide: SecretBox, useValue: new SecretBox(options.secretsKey) },
        {
          provide: LLM_QUOTAS,
          useFactory: (store: EventStore, clock: Clock) => new QuotaEngine(store, clock, llmUsageLedger, (e) => log.error(`usage could not be recorded: ${(e as Error).message}`)),
          inject: [EVENT_STORE, CLOCK],
        },
        QuotaFlush,
        LlmWriter,
        OpenAiProvider,
        LlmProviders,
        ModelResolver,
        CreateLlmHandler,
        UpdateLlmHandler,
        DeleteLlmHandler,
        GetLlmHandler,
        ListLlmsHandler,
        ChatCompletions,
        DiscoverLlm,
        FactualConsistency,
        HallucinationCorrection,
        RegisteredEncoders,
        CreateEncoderHandler,
      ],
      exports: [ChatCompletions, DiscoverLlm, FactualConsistency, HallucinationCorrection, SecretBox],
    };
  }
}
