import { isUtf8 } from 'node:buffer';
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

/** How long a connection whose body was refused while it arrived is read on, and dropped, after the answer. */
const LINGER_MS = 5_000;

/**
 * Closes the connection of a body refused while it arrives without losing the answer: closing on a client still
 * sending resets the connection, which can overtake the answer. As nginx's lingering close does, the rest is read
 * and dropped until the client ends its side, or LINGER_MS passes.
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
    socket.resume();
  };
}

/**
 * JSON is the only body read (others get 415; an empty one counts as none). Its structure is checked as it arrives
 * (StructureScan), so a body too deep, too long or past an array's bound is refused at the piece that shows it,
 * without waiting for or keeping the rest; the route's bodyLimit is held here, as Fastify's own parser would.
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
