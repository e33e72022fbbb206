import { isUtf8 } from 'node:buffer';
import { createRequire } from 'node:module';
import type { Socket } from 'node:net';
import { errorCodes, type FastifyInstance } from 'fastify';
import {
  forbiddenKey,
  type Json,
  MAX_JSON_DEPTH,
  poisonedAt,
  refused,
  refusedAt,
} from '../shared/json-safety.ts';
import { mayHoldUnstorable } from '../shared/unstorable-text.ts';
import { arrayBoundsOf, type StructuralProblem, StructureScan } from './body-bounds.ts';
import { routeOf } from './route-of.ts';

const tooDeep = () =>
  refused('validation_failed', 'too_deep', `nests arrays and objects more than ${MAX_JSON_DEPTH} deep`);

/** The problem the validator reports for an array past its maxItems, found before the body is parsed. */
const tooManyItems = (at: string, maxItems: number) =>
  refusedAt('invalid_max_items', at, `must NOT have more than ${maxItems} items`);

const structureRefusal = (problem: StructuralProblem): Error =>
  problem.kind === 'too_deep' ? tooDeep() : tooManyItems(problem.pointer, problem.maxItems);

/**
 * The slot of Node's HTTP parser that it calls with each piece of a request's body, or undefined on a Node that does
 * not say (the parser is Node's internals, not its API: without the slot, stopBodyCopies does nothing).
 */
const parserBodySlot = (() => {
  const { HTTPParser } = createRequire(import.meta.url)('_http_common') as {
    HTTPParser?: { kOnBody?: unknown };
  };
  return typeof HTTPParser?.kOnBody === 'number' ? HTTPParser.kOnBody : undefined;
})();

/**
 * Has Node's HTTP parser stop handing over the rest of a refused body, which is read only to be dropped. It copies
 * each piece into a new Buffer of up to 64 KB, which goes back only when V8 next collects: four clients posting
 * refused 698 KB bodies as fast as they were answered kept 14-23 MB of them in flight (the bench's hostile
 * scenario, the quote attack alone on SQLite; 1-2 MB without the copies). The parser still reads the body through,
 * so the connection ends as before. Node keeps its parsers for other connections once this one closes, and the
 * slot is put back then.
 */
function stopBodyCopies(socket: Socket): void {
  const parser = (socket as Socket & { parser?: Record<number, unknown> | null }).parser;
  if (parserBodySlot === undefined || !parser) return;
  const onBody = parser[parserBodySlot];
  parser[parserBodySlot] = null;
  socket.once('close', () => {
    parser[parserBodySlot] = onBody;
  });
}

/** How long a connection whose body was refused while it arrived is read on, and dropped, after the answer. */
const LINGER_MS = 5_000;

/**
 * Closes the connection of a body refused while it arrives without losing the answer. Closing a socket whose
 * client is still sending makes the kernel reset the connection, and a reset can reach the client before it has
 * read the answer: a client writing the rest of a 698 KB body met EPIPE instead of its 400. So, as web servers do
 * (nginx's lingering close), the answer goes out with the end of the service's side, what the client still sends
 * is read and dropped, and the connection closes once the client ends its side, or after LINGER_MS at most.
 */
function lingerAfterAnswer(socket: Socket): void {
  const closeAsUsual = socket.destroySoon;
  socket.destroySoon = () => {
    // A client that has ended its side already sends nothing more.
    if (socket.readableEnded) {
      closeAsUsual.call(socket);
      return;
    }
    const timer = setTimeout(() => socket.destroy(), LINGER_MS);
    timer.unref();
    socket.once('end', () => socket.destroy());
    socket.once('close', () => clearTimeout(timer));
    socket.end();
    stopBodyCopies(socket);
    socket.resume();
  };
}

/**
 * application/json is the only body the service reads; without a parser for anything else, Fastify answers 415.
 * An empty body counts as no body, so a body-less POST that still says application/json is not refused; a route
 * that needs a body then reports it missing.
 *
 * The body's structure is read as its pieces arrive (StructureScan): a body nested too deep, or holding an array
 * past its bound, is refused at the piece that shows it. The answer goes out at once, with Connection: close (as
 * Fastify answers every body refused while it is read), so the rest is neither waited for nor kept; what still
 * arrives is dropped until the client ends the connection (lingerAfterAnswer). The route's
 * bodyLimit, which Fastify holds a body it collects to, is held here; Node's HTTP parser ends a body at its
 * Content-Length, and a body cut short ends in an error instead.
 */
export function registerJsonBody(app: FastifyInstance): void {
  const parse = app.getDefaultJsonParser('error', 'error');
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', (request, payload, done) => {
    const limit = routeOf(request).bodyLimit;
    const declared = Number(request.headers['content-length']);
    if (declared > limit) {
      lingerAfterAnswer(request.raw.socket);
      done(new errorCodes.FST_ERR_CTP_BODY_TOO_LARGE(), undefined);
      return;
    }
    const scan = new StructureScan(arrayBoundsOf(routeOf(request).schema?.body), MAX_JSON_DEPTH);
    const pieces: Buffer[] = [];
    let received = 0;
    // Once refused, the stream flows on with nobody listening until the connection closes: what arrives is dropped.
    const detach = () => {
      payload.removeListener('data', onData);
      payload.removeListener('end', onEnd);
      payload.removeListener('error', onEnd);
    };
    const stop = (error: Error) => {
      detach();
      done(error, undefined);
    };
    const refuseArriving = (error: Error) => {
      lingerAfterAnswer(request.raw.socket);
      stop(error);
    };
    const onData = (piece: Buffer) => {
      received += piece.length;
      if (received > limit) {
        refuseArriving(new errorCodes.FST_ERR_CTP_BODY_TOO_LARGE());
        return;
      }
      const problem = scan.feed(piece);
      if (problem !== null) {
        refuseArriving(structureRefusal(problem));
        return;
      }
      pieces.push(piece);
    };
    const onEnd = (error?: Error & { statusCode?: number }) => {
      if (error) {
        // A body cut short by its client.
        if (!(typeof error.statusCode === 'number' && error.statusCode >= 400)) error.statusCode = 400;
        stop(error);
        return;
      }
      const problem = scan.end();
      if (problem !== null) {
        stop(structureRefusal(problem));
        return;
      }
      detach();
      parseWhole(Buffer.concat(pieces, received));
    };
    const parseWhole = (bytes: Buffer) => {
      // Decoding would turn bytes that are not UTF-8 into U+FFFD, and the service would store what was not sent.
      if (!isUtf8(bytes)) {
        done(refused('malformed_json', 'invalid_utf8', 'is not valid UTF-8'), undefined);
        return;
      }
      const text = bytes.toString('utf8');
      if (text.trim() === '') {
        done(null, undefined);
        return;
      }
      parse(request, text, (error, parsed) => {
        if (!error) {
          // Most bodies hold no escape that could spell such text, and are then not walked for it.
          request.bodyMayHoldUnstorable = mayHoldUnstorable(bytes, text);
          done(null, parsed);
          return;
        }
        // The safe parser refuses both bad syntax and prototype-poisoning keys; on this failure path only, tell
        // them apart, so a client learns which key to drop.
        let plain: Json;
        try {
          plain = JSON.parse(text);
        } catch {
          done(refused('malformed_json', 'invalid_json', 'is not valid JSON'), undefined);
          return;
        }
        done(forbiddenKey(poisonedAt(plain) ?? ''), undefined);
      });
    };
    payload.on('data', onData);
    payload.on('end', onEnd);
    payload.on('error', onEnd);
  });
}
