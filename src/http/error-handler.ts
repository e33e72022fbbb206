import type { Socket } from 'node:net';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { StaleVersionError, unavailability } from '../db/errors.ts';
import { newId } from '../ids.ts';
import {
  AppError,
  MAX_PROBLEM_ITEMS,
  type Problem,
  type ProblemCode,
  type ProblemItem,
  pointerToken,
  problemCodes,
  problemType,
} from '../problems.ts';
import { nodeHttp } from './node-http.ts';
import { routeOf } from './route-of.ts';

const { maxHeaderSize, STATUS_CODES } = nodeHttp;

type ValidationContext = 'body' | 'querystring' | 'params' | 'headers';

const locations: Record<ValidationContext, ProblemItem['in']> = {
  body: 'body',
  querystring: 'query',
  params: 'path',
  headers: 'header',
};

export interface AjvError {
  keyword: string;
  instancePath: string;
  message?: string;
  params: Record<string, unknown>;
  /** Set by Ajv on the errors of a name that propertyNames rejected. */
  propertyName?: string;
}

// anyOf/oneOf report the summary after the branch errors; the branch errors say more. So does propertyNames: the
// error on the name itself follows, carrying the name.
const summaryKeywords = new Set(['anyOf', 'oneOf', 'if', 'propertyNames']);

/**
 * The problems of Ajv's errors, each once: the first MAX_PROBLEM_ITEMS of them, and how many there are. A body of
 * many thousand bad elements makes as many errors; only the kept ones become items.
 */
export function ajvItems(
  errors: AjvError[],
  context: ValidationContext,
): { items: ProblemItem[]; count: number } {
  const seen = new Set<string>();
  const items: ProblemItem[] = [];
  for (const error of errors) {
    if (summaryKeywords.has(error.keyword)) continue;
    let at = error.instancePath;
    if (error.keyword === 'required') at += `/${pointerToken(String(error.params.missingProperty))}`;
    if (error.keyword === 'additionalProperties')
      at += `/${pointerToken(String(error.params.additionalProperty))}`;
    const propertyName = error.propertyName;
    if (typeof propertyName === 'string') at += `/${pointerToken(propertyName)}`;
    const message =
      error.keyword === 'required'
        ? 'is required'
        : error.keyword === 'additionalProperties'
          ? 'is not a known field'
          : typeof propertyName === 'string'
            ? `name ${error.message ?? 'is not valid'}`
            : (error.message ?? 'is not valid');
    const key = `${at} ${message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    if (items.length === MAX_PROBLEM_ITEMS) continue;
    items.push({
      code: `invalid_${error.keyword.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)}`,
      in: locations[context],
      pointer: at,
      message,
    });
  }
  return { items, count: seen.size };
}

/**
 * For Fastify's schemaErrorFormatter option. The default joins every error into one message, work and memory that
 * grow with a hostile body; the problem is made from `error.validation` by ajvItems instead.
 */
export function schemaErrorFormatter(errors: unknown[], dataVar: string): Error {
  return new Error(`${errors.length} schema errors in the ${dataVar}`);
}

const fastifyStatusCodes: Record<number, ProblemCode> = {
  400: 'bad_request',
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
  errors: ProblemItem[] = [],
  errorCount = errors.length,
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
  if (errors.length > 0) {
    body.errors = errors.slice(0, MAX_PROBLEM_ITEMS);
    body.errorCount = errorCount;
    if (errorCount > body.errors.length) body.detail += `; the first ${body.errors.length} are listed`;
  }
  // Set here as well as in onRequest: framework errors (a bad URL) answer before any hook runs.
  reply.header('x-request-id', request.id);
  return reply.code(status).type('application/problem+json').send(body);
}

interface Classified {
  code: ProblemCode;
  detail: string;
  errors?: ProblemItem[] | undefined;
  /** How many problems there are when `errors` holds only the first of them. */
  errorCount?: number;
}

function classify(error: FastifyError, request: FastifyRequest): Classified {
  if (error instanceof AppError) return { code: error.code, detail: error.message, errors: error.errors };
  if (error.validation) {
    const context = (error.validationContext ?? 'body') as ValidationContext;
    if (context === 'body' && request.body === undefined) {
      return {
        code: 'validation_failed',
        detail: 'This request needs a JSON body',
        errors: [{ code: 'invalid_required', in: 'body', pointer: '', message: 'a JSON body is required' }],
      };
    }
    const { items, count } = ajvItems(error.validation as AjvError[], context);
    const first = items[0];
    const detail =
      count === 1 && first
        ? `${locations[context]} ${first.pointer || '/'}: ${first.message}`
        : `${count} problems were found in the ${locations[context]}`;
    return { code: 'validation_failed', detail, errors: items, errorCount: count };
  }
  switch (error.code) {
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
    case 'FST_ERR_CTP_INVALID_TYPE': {
      const sent = request.headers['content-type'];
      return {
        code: 'unsupported_media_type',
        detail: `Send the body as application/json${sent ? ` (this request says ${JSON.stringify(sent)})` : ' with a Content-Type header'}`,
      };
    }
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return {
        code: 'payload_too_large',
        detail: `The request body is over the limit of ${routeOf(request).bodyLimit} bytes`,
      };
  }
  if (error instanceof StaleVersionError) return { code: 'precondition_failed', detail: error.message };
  const fault = unavailability(error);
  if (fault) {
    const reason = fault.reason.charAt(0).toUpperCase() + fault.reason.slice(1);
    return { code: 'service_unavailable', detail: `${reason}; try again shortly` };
  }
  const status = error.statusCode ?? 500;
  const mapped = fastifyStatusCodes[status] ?? (status >= 400 && status < 500 ? 'bad_request' : undefined);
  if (mapped && status < 500) return { code: mapped, detail: error.message };
  return { code: 'internal_error', detail: 'The server failed to answer this request; it has been logged' };
}

function respond(error: FastifyError, request: FastifyRequest, reply: FastifyReply) {
  const { code, detail, errors, errorCount } = classify(error, request);
  const status = problemCodes[code].status;
  if (status >= 500) {
    request.log.error({ err: error, code }, 'request failed');
  } else {
    request.log.info({ code, detail }, 'request rejected');
  }
  if (code === 'service_unavailable') reply.header('retry-after', '1');
  if (error instanceof AppError) reply.headers(error.headers);
  return sendProblem(request, reply, code, detail, errors, errorCount);
}

/** For Fastify's frameworkErrors option: errors raised before routing (a URL that cannot be decoded). */
export function frameworkErrorHandler(
  error: FastifyError,
  request: FastifyRequest,
  reply: FastifyReply,
): void {
  respond(error, request, reply);
}

/** The one place errors become responses: every error body is an RFC 9457 problem. */
export function registerErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError, request, reply) => respond(error, request, reply));

  app.setNotFoundHandler((request, reply) =>
    sendProblem(request, reply, 'not_found', `No route ${request.method} ${request.url.split('?')[0]}`),
  );
}

/** What Node's HTTP parser refused, by its error code, as a problem. */
function parserRefusal(code: string | undefined): { code: ProblemCode; detail: string } {
  switch (code) {
    case 'HPE_HEADER_OVERFLOW':
      return {
        code: 'headers_too_large',
        detail: `The request line and headers are over the limit of ${maxHeaderSize} bytes`,
      };
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return { code: 'request_timeout', detail: 'The request did not arrive in time; send it again' };
    case 'HPE_UNEXPECTED_CONTENT_LENGTH':
      return {
        code: 'bad_request',
        detail: 'The request has both Content-Length and Transfer-Encoding; send one of them',
      };
    case 'HPE_INVALID_HEADER_TOKEN':
      return { code: 'bad_request', detail: 'A header name or value holds characters HTTP does not allow' };
    default:
      return { code: 'bad_request', detail: 'The request is not valid HTTP/1.1' };
  }
}

/** How long a connection refused by the HTTP parser stays open after its answer for the client to read it. */
const REFUSED_LINGER_MS = 1000;

/**
 * For Fastify's clientErrorHandler option: requests Node's HTTP parser refuses never reach Fastify, and Node's own
 * answer is not a problem document. No request exists yet, so the id is a new one and the instance is empty.
 */
export function clientErrorHandler(
  this: FastifyInstance,
  error: NodeJS.ErrnoException,
  socket: Socket,
): void {
  // A reset connection has nobody to answer; a response already under way cannot be replaced.
  const response = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  if (error.code === 'ECONNRESET' || socket.destroyed || !socket.writable || response?.headersSent) {
    socket.destroy(error);
    return;
  }
  const { code, detail } = parserRefusal(error.code);
  const { status, title } = problemCodes[code];
  const requestId = newId('request');
  const problem: Problem = { type: problemType(code), title, status, detail, instance: '', code, requestId };
  const body = JSON.stringify(problem);
  this.log.info({ requestId, code, parserError: error.code }, 'request refused by the HTTP parser');
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/problem+json\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nx-request-id: ${requestId}\r\nConnection: close\r\n\r\n${body}`,
  );
  // end() closes only our half: a client that never closes its own would keep the socket and its descriptor for
  // ever. It has a moment to read the answer (cut at once, what it still sends could reset the connection first).
  const linger = setTimeout(() => socket.destroy(), REFUSED_LINGER_MS);
  linger.unref();
  socket.once('close', () => clearTimeout(linger));
}
