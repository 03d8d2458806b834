// Evolution's exceptions are thrown plain objects {status, error, message} that its
// express error handler (src/main.ts) turns into {status, error, response:{message}}.
// Mirroring that keeps clients' error parsing honest against the simulator.

export class EvolutionError extends Error {
  readonly status: number;
  readonly error: string;
  readonly payload: unknown;

  constructor(status: number, error: string, payload: unknown) {
    super(typeof payload === 'string' ? payload : error);
    this.status = status;
    this.error = error;
    this.payload = payload;
  }

  body(): EvolutionErrorBody {
    return { status: this.status, error: this.error, response: { message: this.payload } };
  }
}

export interface EvolutionErrorBody {
  status: number;
  error: string;
  response: { message: unknown };
}

// Evolution's exception classes wrap their rest arguments in an array
// (`message: objectError.length > 0 ? objectError : ...`), hence `[...]` below.

export const badRequest = (...details: unknown[]) => new EvolutionError(400, 'Bad Request', details);

/** `new UnauthorizedException()` without arguments answers the literal 'Unauthorized'. */
export const unauthorized = () => new EvolutionError(401, 'Unauthorized', 'Unauthorized');

export const forbidden = (...details: unknown[]) => new EvolutionError(403, 'Forbidden', details);

export const notFound = (...details: unknown[]) => new EvolutionError(404, 'Not Found', details);

export const internalServerError = (...details: unknown[]) =>
  new EvolutionError(500, 'Internal Server Error', details);

const STATUS_TEXT: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  413: 'Payload Too Large',
  415: 'Unsupported Media Type',
  500: 'Internal Server Error',
};

/** For errors raised by fastify itself (bad JSON, wrong content type...). */
export function genericErrorBody(status: number, message: string): EvolutionErrorBody {
  return { status, error: STATUS_TEXT[status] ?? 'Internal Server Error', response: { message } };
}
