export type { WriteResult } from '@lib/platform';
