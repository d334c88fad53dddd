/**
 * The events entry of the schedules context (`@lib/schedules/events`): the event types of its streams. Domain code
 * only.
 */
export type { ScheduleEvent } from './domain/schedule';
export { SCHEDULE_MAX_ATTEMPTS } from './domain/schedule';
