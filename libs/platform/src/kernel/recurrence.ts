/** When something recurs: every ISO 8601 interval, or on a cron expression (schedules' and pipelines' triggers). */
export type ScheduleSpec = { readonly type: 'interval'; readonly interval: string } | { readonly type: 'cron'; readonly cron_expression: string };
