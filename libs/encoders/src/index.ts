export * from './encoder.port';
export * from './encoder-config';
export * from './encoder-registry';
export * from './encoders.module';
export * from './glove/glove-encoder';
export * from './openai/openai-embeddings-encoder';
export * from './use-lite/use-lite-encoder';
export { dot, normalize } from './vectors';
