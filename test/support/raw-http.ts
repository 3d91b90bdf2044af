/** Raw HTTP/1.1 on a socket, for what fetch cannot send: malformed requests, stalled headers. */
import { connect } from 'node:net';

export interface RawReply {
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly body: string;
  readonly closedAfterMs: number;
}

/** Writes `text` to the server at `baseUrl` and reads what it sends until it closes the connection. */
export function rawExchange(baseUrl: string, text: string | Buffer): Promise<RawReply> {
  const { hostname, port } = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const socket = connect(Number(port), hostname, () => socket.write(text));
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', reject);
    socket.on('close', () => resolve({ ...parseReply(Buffer.concat(chunks).toString('latin1')), closedAfterMs: Date.now() - started }));
    socket.setTimeout(10_000, () => socket.destroy(new Error('the server never closed the connection')));
  });
}

function parseReply(reply: string): Omit<RawReply, 'closedAfterMs'> {
  const [head = '', ...rest] = reply.split('\r\n\r\n');
  const [statusLine = '', ...lines] = head.split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const at = line.indexOf(':');
    headers[line.slice(0, at).trim().toLowerCase()] = line.slice(at + 1).trim();
  }
  return { status: Number(statusLine.split(' ')[1]), headers, body: rest.join('\r\n\r\n') };
}
