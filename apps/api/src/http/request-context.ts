import { randomUUID } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';
import type { Actor, Clock } from '@lib/platform';

declare module 'express-serve-static-core' {
  interface Request {
    requestId: string;
    actor?: Actor;
    /** When the request arrived, by the service's clock: the `now` of every decision it makes. */
    receivedAt: Date;
  }
}

const SAFE_REQUEST_ID = /^[A-Za-z0-9._-]{1,128}$/;

/**
 * Gives every request an id (the caller's `x-request-id` when well-formed), echoed in the response, and its
 * arrival time from the injected clock.
 */
export const requestContext = (clock: Clock) => (req: Request, res: Response, next: NextFunction): void => {
  req.receivedAt = clock.now();
  const given = req.header('x-request-id');
  req.requestId = given && SAFE_REQUEST_ID.test(given) ? given : randomUUID().replace(/-/g, '');
  res.setHeader('x-request-id', req.requestId);
  next();
};
