import type { Response } from 'express';

/** A write whose projections lagged past the bounded wait is still durable: 202 says so. */
export function statusFor(result: { readonly visible: boolean }, ok: number, res: Response): void {
  res.status(result.visible ? ok : 202);
  if (!result.visible) res.setHeader('x-read-your-writes', 'pending');
}
