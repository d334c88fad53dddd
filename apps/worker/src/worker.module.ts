import { DynamicModule, Inject, Module, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { CqrsModule } from '@nestjs/cqrs';
import { ApprovalExpiryHandler, EvaluationRunner, RecallEmbedder, TurnSweeper, WakeupHandler } from '@lib/agents';
import { CanaryScorer } from '@lib/aliases';
import { ConnectorReplier } from '@lib/connectors';
import { PipelineRunner } from '@lib/pipelines';
import { ScheduleRunner } from '@lib/schedules';
import { WebhookDeliverer, WebhookDispatcher } from '@lib/webhooks';
import { CorporaModule, JobRunner } from '@lib/corpora';
import { CLOCK, Clock, DURABLE_TIMERS, DurableTimers, EVENT_STORE, EventStore, EventStoreLeases, LEASES, Leases, ServiceConfig } from '@lib/platform';
import type { Logger } from 'pino';

/** Starts the timers once every module has registered its handlers (`onModuleInit`), stops them first on shutdown. */
class TimersLifecycle implements OnApplicationBootstrap, OnApplicationShutdown {
  constructor(@Inject(DURABLE_TIMERS) private readonly timers: DurableTimers) {}
  onApplicationBootstrap(): Promise<void> {
    return this.timers.start();
  }
  onApplicationShutdown(): Promise<void> {
    return this.timers.stop();
  }
}

export interface WorkerModuleOptions {
  readonly config: ServiceConfig;
  readonly log: Logger;
}

/**
 * The worker wing (docs/workers.md): background reactions that claim their work through leases in the event
 * store, and durable timers. The projection runtime is started by the composition root with the adapters.
 * Needs the ports (PortsModule) and the command bus of the process it is composed into.
 */
@Module({})
export class WorkerModule {
  static forRoot({ config, log }: WorkerModuleOptions): DynamicModule {
    const logTo = (level: 'info' | 'warn' | 'error', message: string, fields?: Record<string, unknown>) => log[level](fields ?? {}, message);
    return {
      module: WorkerModule,
      // The corpora module (one instance, the API's) for the extraction pool the pipeline runner uses.
      imports: [CqrsModule, CorporaModule],
      providers: [
        {
          provide: LEASES,
          inject: [EVENT_STORE, CLOCK],
          useFactory: (events: EventStore, clock: Clock): Leases => new EventStoreLeases(events, clock, { ttlMs: config.leaseTtlMs, renewMs: config.leaseRenewMs, log: logTo }),
        },
        {
          provide: DURABLE_TIMERS,
          inject: [EVENT_STORE, CLOCK, LEASES],
          useFactory: (events: EventStore, clock: Clock, leases: Leases) => new DurableTimers(events, clock, leases, { pollMs: config.workerPollMs, log: logTo }),
        },
        TimersLifecycle,
        JobRunner,
        TurnSweeper,
        EvaluationRunner,
        WakeupHandler,
        ApprovalExpiryHandler,
        ScheduleRunner,
        ConnectorReplier,
        PipelineRunner,
        CanaryScorer,
        RecallEmbedder,
        WebhookDispatcher,
        WebhookDeliverer,
      ],
      exports: [LEASES, DURABLE_TIMERS],
    };
  }
}
