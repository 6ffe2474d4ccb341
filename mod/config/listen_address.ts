/**
 * A loopback address to listen on (`[portal] listen`, `gurt portal-serve --listen`): checked once
 * here, where gurt.toml is loaded and wherever else such an address is taken.
 */

/** A loopback listen address split into its parts. */
export interface ListenAddress {
  /** `127.0.0.1`, `::1` or `localhost` (without brackets). */
  hostname: string;
  /** 0 (any free port) to 65535. */
  port: number;
}

const LOOPBACK = /^(127\.0\.0\.1|\[::1\]|localhost):([0-9]{1,5})$/;

/** Splits a loopback `host:port`, or returns what is wrong with it as a sentence's end. */
export function parseListenAddress(value: string): ListenAddress | { problem: string } {
  const match = LOOPBACK.exec(value);
  if (match === null) {
    return { problem: "must be a loopback address with a port, such as 127.0.0.1:7780" };
  }
  const port = Number(match[2]);
  if (port > 65535 || (match[2].length > 1 && match[2].startsWith("0"))) {
    return {
      problem: `has the port ${match[2]}, which is not a number from 0 (any free port) to 65535`,
    };
  }
  return { hostname: match[1].replace(/^\[|\]$/g, ""), port };
}
