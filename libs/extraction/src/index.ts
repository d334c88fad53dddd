export * from './extracted';
export * from './extract';
export * from './extract-thread';
