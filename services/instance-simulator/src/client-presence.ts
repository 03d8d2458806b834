import type { FastifyReply } from 'fastify';

/**
 * Aborts when the HTTP client goes away before we answered (request aborted, socket closed,
 * process killed). `ServerResponse` emits 'close' on a connection lost before `end()`;
 * IncomingMessage's 'close' would not do: it also fires once the body is read.
 */
export function clientGoneSignal(reply: FastifyReply): { signal: AbortSignal; dispose: () => void } {
  const controller = new AbortController();
  const response = reply.raw;
  const onClose = () => {
    if (!response.writableFinished) controller.abort();
  };
  if (response.destroyed || response.socket?.destroyed) controller.abort();
  response.once('close', onClose);
  return { signal: controller.signal, dispose: () => response.off('close', onClose) };
}
