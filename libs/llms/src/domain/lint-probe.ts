import { LLMS } from '@lib/llms';
export const probe = LLMS;
