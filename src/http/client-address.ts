/**
 * Who a request comes from, behind the proxies of TRUSTED_PROXIES (docs/operations.md): Koa reads
 * X-Forwarded-For once `app.proxy` is on, but takes its first entry, which any client can write.
 * Here the header counts only when the connection comes from a trusted proxy, and the client is
 * the last address in it that is not a trusted proxy: each proxy appends the address it saw.
 */
import { BlockList, isIP } from 'node:net';
import type { Middleware } from 'koa';

export class TrustedProxies {
  private readonly ranges = new BlockList();

  /** `ranges` as TRUSTED_PROXIES gives them: `address/prefix`, checked at boot (src/config.ts). */
  constructor(ranges: readonly string[]) {
    for (const range of ranges) {
      const [address, prefix] = range.split('/') as [string, string];
      this.ranges.addSubnet(address, Number(prefix), isIP(address) === 6 ? 'ipv6' : 'ipv4');
    }
  }

  has(address: string): boolean {
    const family = isIP(address);
    return family !== 0 && this.ranges.check(address, family === 6 ? 'ipv6' : 'ipv4');
  }

  /** The client's address: the peer's own unless the peer is trusted; then the header's last untrusted hop. */
  clientOf(peer: string, forwardedFor: readonly string[]): string {
    if (!this.has(peer)) return peer;
    for (let i = forwardedFor.length - 1; i >= 0; i--) {
      if (!this.has(forwardedFor[i]!)) return forwardedFor[i]!;
    }
    return forwardedFor[0] ?? peer;
  }
}

/** Sets `ctx.ip` to the client behind the trusted proxies before anything reads it (Koa's `ctx.ips` is the header, under `app.proxy`). */
export function clientAddressMiddleware(proxies: TrustedProxies): Middleware {
  return (ctx, next) => {
    ctx.request.ip = proxies.clientOf(ctx.socket.remoteAddress ?? '', ctx.ips);
    return next();
  };
}
