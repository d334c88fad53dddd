import type { Response } from 'express';
import type { WriteResult } from '@lib/corpora';

/** A write whose projections lagged past the bounded wait is still durable: 202 says so. */
export function statusFor(result: WriteResult<unknown>, ok: number, res: Response): void {
  res.status(result.visible ? ok : 202);
  if (!result.visible) res.setHeader('x-read-your-writes', 'pending');
}
