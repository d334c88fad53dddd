export * from './domain/schedule';
export * from './read-models';
export * from './application/schedules/schedules';
export * from './application/schedules/schedule-runner';
export * from './schedules.module';
