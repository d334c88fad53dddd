import { Module } from '@nestjs/common';
import { CLOCK, Clock, DurableTimers, EVENT_STORE, EventStore, EventStoreLeases, SERVICE_CONFIG, ServiceConfig } from '@lib/platform';
import { SCHEDULE_TIMERS, Schedules } from './application/schedules/schedules';

/**
 * Agent schedules (docs/schedules.md): their settings and timers. The runner is composed by the worker wing
 * (apps/worker), whose DURABLE_TIMERS fire the timers armed here; the agents are reached through
 * `@lib/agents/runs` (AGENT_RUNS, AGENT_DIRECTORY, provided by the global AgentsModule).
 */
@Module({
  providers: [
    Schedules,
    {
      // Arms and cancels timers only (it is never started: firing is the worker wing's), so its leases go unused.
      provide: SCHEDULE_TIMERS,
      inject: [EVENT_STORE, CLOCK, SERVICE_CONFIG],
      useFactory: (store: EventStore, clock: Clock, config: ServiceConfig) => new DurableTimers(store, clock, new EventStoreLeases(store, clock, { ttlMs: config.leaseTtlMs, renewMs: config.leaseRenewMs }), { pollMs: 60_000 }),
    },
  ],
  exports: [Schedules],
})
export class SchedulesModule {}
