import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, before, test } from 'node:test';
import { describeEachDatabase } from '../helpers/app.ts';

/** Sends raw bytes and reads the whole answer until the server closes the connection. */
function exchange(port: number, request: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let answer = '';
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => {
      answer += chunk;
    });
    socket.on('error', reject);
    socket.on('close', () => resolve(answer));
    socket.write(request);
  });
}

function parse(answer: string) {
  const [head = '', body = ''] = answer.split('\r\n\r\n');
  const [statusLine = '', ...lines] = head.split('\r\n');
  const headers = Object.fromEntries(
    lines.map((line) => [
      line.slice(0, line.indexOf(':')).toLowerCase(),
      line.slice(line.indexOf(':') + 1).trim(),
    ]),
  );
  return { status: Number(statusLine.split(' ')[1]), headers, body: JSON.parse(body) };
}

// A quote body of 349,101 items where 100 are allowed: refused at its 101st, in `opening`; `rest` is what follows.
const opening = `{"currency":"USD","bundles":[${'1,'.repeat(101)}`;
const rest = `${'1,'.repeat(349_000)}1]}`;

/** The head of a POST of a quote body of `length` bytes, then `body` (all of it, or its start). */
function quotePost(key: string, length: number, body: string, headers = ''): string {
  return (
    `POST /v1/quotes/price HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n` +
    `X-Api-Key: ${key}\r\n${headers}Content-Length: ${length}\r\n\r\n${body}`
  );
}

// The parser's refusals come before any database work; the suite runs on both only because the app needs one.
describeEachDatabase(
  "requests Node's HTTP parser refuses are answered as problems with a request id",
  (ctx) => {
    let port = 0;
    before(async () => {
      await ctx.app.listen({ port: 0, host: '127.0.0.1' });
      port = (ctx.app.server.address() as { port: number }).port;
    });
    after(async () => {
      await ctx.app.close();
    });

    const cases = [
      {
        name: 'headers over 16 KiB',
        request: `GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`,
        status: 431,
        code: 'headers_too_large',
      },
      {
        name: 'a URL over 16 KiB',
        request: `GET /v1/bundles?q=${'a'.repeat(20_000)} HTTP/1.1\r\nHost: x\r\n\r\n`,
        status: 431,
        code: 'headers_too_large',
      },
      {
        name: 'a header name with a space',
        request: 'GET /healthz HTTP/1.1\r\nHost: x\r\nBad Header: 1\r\n\r\n',
        status: 400,
        code: 'bad_request',
      },
      {
        name: 'a header value with a control character',
        request: 'GET /healthz HTTP/1.1\r\nHost: x\r\nX-Bad: a\u0001b\r\n\r\n',
        status: 400,
        code: 'bad_request',
      },
      {
        name: 'both Content-Length and Transfer-Encoding',
        request:
          'POST /v1/bundles HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 5\r\n' +
          'Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n',
        status: 400,
        code: 'bad_request',
      },
    ];
    for (const { name, request, status, code, detail } of cases as {
      name: string;
      request: string;
      status: number;
      code: string;
      detail?: RegExp;
    }[]) {
      test(`${name}: ${status} ${code}`, async () => {
        const answer = parse(await exchange(port, request));
        assert.equal(answer.status, status, JSON.stringify(answer));
        assert.equal(answer.headers['content-type'], 'application/problem+json');
        assert.match(answer.headers['x-request-id'] ?? '', /^req_[0-9A-Z]{26}$/);
        assert.deepEqual(Object.keys(answer.body).sort(), [
          'code',
          'detail',
          'instance',
          'requestId',
          'status',
          'title',
          'type',
        ]);
        assert.equal(answer.body.code, code);
        if (detail) assert.match(answer.body.detail, detail);
        assert.equal(answer.body.status, status);
        assert.equal(answer.body.type, `urn:problem-type:cpq:${code}`);
        assert.equal(answer.body.requestId, answer.headers['x-request-id']);
      });
    }

    test('a body is refused at the piece that shows it, before the rest is sent, and its connection closed', async () => {
      const socket = connect(port, '127.0.0.1');
      socket.setEncoding('latin1');
      let received = '';
      socket.on('data', (chunk: string) => {
        received += chunk;
      });
      const closed = new Promise((resolve, reject) => {
        socket.on('error', reject);
        socket.on('close', resolve);
        // Not a measure of speed: a server that waits for the rest of the body never answers at all.
        setTimeout(() => {
          socket.destroy();
          reject(new Error('no answer before the rest of the body'));
        }, 10_000).unref();
      });
      socket.write(quotePost(ctx.key, opening.length + rest.length, opening));
      // Answered and closed with 698 KB of the body unsent: nothing waited for the rest, nor kept it. Fastify
      // closes the connection of every body refused while parsed, as the client may still be sending.
      await closed;
      const refusal = parse(received);
      assert.equal(refusal.status, 400);
      assert.equal(refusal.headers.connection, 'close');
      assert.deepEqual(refusal.body.errors[0], {
        code: 'invalid_max_items',
        in: 'body',
        pointer: '/bundles',
        message: 'must NOT have more than 100 items',
      });
    });

    test('a client that goes on sending the body it was refused for still gets the answer, not a reset', async () => {
      // Half-open, as a client writing its body is: the service's end of the connection does not end its own.
      const socket = connect({ port, host: '127.0.0.1', allowHalfOpen: true });
      socket.setEncoding('latin1');
      let received = '';
      socket.on('data', (chunk: string) => {
        received += chunk;
      });
      const errors: Error[] = [];
      socket.on('error', (error) => errors.push(error));
      const answered = new Promise((resolve) => socket.once('end', resolve));
      const closed = new Promise((resolve) => socket.once('close', resolve));
      socket.write(quotePost(ctx.key, opening.length + rest.length, opening));
      await answered;
      // The answer and the end of the service's side are in; the client still writes what it had to send. A
      // service that closed its socket at once would reset the connection under this write (EPIPE, ECONNRESET).
      socket.end(rest);
      await closed;
      assert.deepEqual(errors, []);
      const refusal = parse(received);
      assert.equal(refusal.status, 400);
      assert.equal(refusal.body.errors[0].code, 'invalid_max_items');
    });

    test('after a body refused while it arrived, the next connection has its body read whole', async () => {
      // Node hands the refused connection's parser to the next connection once it closes: nothing done to the
      // refused one may lose the next one's body.
      const refused = parse(
        await exchange(port, quotePost(ctx.key, opening.length + rest.length, opening + rest)),
      );
      assert.equal(refused.status, 400);
      assert.equal(refused.body.errors[0].code, 'invalid_max_items');
      const body = '{"currency":"USD","bundles":[7]}';
      const answer = parse(
        await exchange(port, quotePost(ctx.key, body.length, body, 'Connection: close\r\n')),
      );
      assert.equal(answer.status, 400);
      assert.equal(answer.body.errors[0].pointer, '/bundles/0');
    });

    test('the server goes on serving after refusing', async () => {
      const answer = parse(
        await exchange(port, 'GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n'),
      );
      assert.equal(answer.status, 200);
      assert.deepEqual(answer.body, { status: 'ok' });
    });
  },
);
