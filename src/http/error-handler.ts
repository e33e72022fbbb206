import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { isDatabaseUnavailable } from '../db/errors.ts';
import {
  AppError,
  type Problem,
  type ProblemCode,
  type ProblemItem,
  problemCodes,
  problemType,
} from './errors.ts';

type ValidationContext = 'body' | 'querystring' | 'params' | 'headers';

const locations: Record<ValidationContext, ProblemItem['in']> = {
  body: 'body',
  querystring: 'query',
  params: 'path',
  headers: 'header',
};

interface AjvError {
  keyword: string;
  instancePath: string;
  message?: string;
  params: Record<string, unknown>;
}

function ajvItems(errors: AjvError[], context: ValidationContext): ProblemItem[] {
  const seen = new Set<string>();
  const items: ProblemItem[] = [];
  for (const error of errors) {
    // anyOf/oneOf report the summary after the branch errors; the branch errors say more.
    if (error.keyword === 'anyOf' || error.keyword === 'oneOf' || error.keyword === 'if') continue;
    let at = error.instancePath;
    if (error.keyword === 'required') at += `/${String(error.params.missingProperty)}`;
    if (error.keyword === 'additionalProperties') at += `/${String(error.params.additionalProperty)}`;
    const message =
      error.keyword === 'required'
        ? 'is required'
        : error.keyword === 'additionalProperties'
          ? 'is not a known field'
          : (error.message ?? 'is not valid');
    const key = `${at} ${message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    items.push({
      code: `invalid_${error.keyword.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)}`,
      in: locations[context],
      pointer: at,
      message,
    });
  }
  return items;
}

const fastifyStatusCodes: Record<number, ProblemCode> = {
  400: 'validation_failed',
  401: 'unauthorized',
  403: 'forbidden',
  404: 'not_found',
  409: 'conflict',
  412: 'precondition_failed',
  413: 'payload_too_large',
  415: 'unsupported_media_type',
  429: 'rate_limited',
  503: 'service_unavailable',
};

export function sendProblem(
  request: FastifyRequest,
  reply: FastifyReply,
  code: ProblemCode,
  detail: string,
  errors?: ProblemItem[],
): FastifyReply {
  const { status, title } = problemCodes[code];
  const body: Problem = {
    type: problemType(code),
    title,
    status,
    detail,
    instance: request.url.split('?')[0] ?? request.url,
    code,
    requestId: request.id,
  };
  if (errors && errors.length > 0) body.errors = errors;
  return reply.code(status).type('application/problem+json').send(body);
}

function classify(error: FastifyError): { code: ProblemCode; detail: string; errors?: ProblemItem[] } {
  if (error instanceof AppError) return { code: error.code, detail: error.message, errors: error.errors };
  if (error.validation) {
    const context = (error.validationContext ?? 'body') as ValidationContext;
    const errors = ajvItems(error.validation as AjvError[], context);
    const first = errors[0];
    const detail =
      errors.length === 1 && first
        ? `${locations[context]} ${first.pointer || '/'}: ${first.message}`
        : `${errors.length} problems were found in the ${locations[context]}`;
    return { code: 'validation_failed', detail, errors };
  }
  if (error.code === 'FST_ERR_CTP_INVALID_JSON_BODY' || error instanceof SyntaxError) {
    return { code: 'malformed_json', detail: 'The request body is not valid JSON' };
  }
  if (error.code === 'FST_ERR_CTP_EMPTY_JSON_BODY') {
    return { code: 'malformed_json', detail: 'The request says it carries JSON but the body is empty' };
  }
  if (isDatabaseUnavailable(error)) {
    return { code: 'service_unavailable', detail: 'The database cannot be reached; try again shortly' };
  }
  const status = error.statusCode ?? 500;
  const mapped = fastifyStatusCodes[status];
  if (mapped && status < 500) return { code: mapped, detail: error.message };
  return { code: 'internal_error', detail: 'The server failed to answer this request; it has been logged' };
}

/** The one place errors become responses: every error body is an RFC 9457 problem. */
export function registerErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError, request, reply) => {
    const { code, detail, errors } = classify(error);
    const status = problemCodes[code].status;
    if (status >= 500) {
      request.log.error({ err: error, code }, 'request failed');
      if (code === 'service_unavailable') reply.header('retry-after', '1');
    } else {
      request.log.info({ code, detail }, 'request rejected');
    }
    if (error instanceof AppError) reply.headers(error.headers);
    return sendProblem(request, reply, code, detail, errors);
  });

  app.setNotFoundHandler((request, reply) =>
    sendProblem(request, reply, 'not_found', `No route ${request.method} ${request.url.split('?')[0]}`),
  );
}
