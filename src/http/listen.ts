import type { FastifyInstance } from 'fastify';
import { ConfigError } from '../config/config.js';

/** Errors from `listen` that mean the HOST or PORT setting is wrong, not that the worker is broken. */
const HOST_CODES = new Set(['ENOTFOUND', 'EAI_AGAIN', 'EADDRNOTAVAIL', 'EAI_NONAME']);
const PORT_CODES = new Set(['EADDRINUSE', 'EACCES']);

/**
 * Binds the HTTP server; when the address cannot be used, throws a ConfigError naming the
 * variable (HOST or PORT) instead of a bare `getaddrinfo ENOTFOUND`.
 */
export async function listenOrNameTheSetting(
  http: FastifyInstance,
  settings: { host: string; port: number },
): Promise<void> {
  try {
    await http.listen({ host: settings.host, port: settings.port });
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? '';
    if (HOST_CODES.has(code)) {
      throw new ConfigError([
        `HOST: cannot listen on "${settings.host}" (${code}): expected an address of this machine, such as 0.0.0.0, :: or 127.0.0.1`,
      ]);
    }
    if (PORT_CODES.has(code)) {
      const why = code === 'EADDRINUSE' ? 'already in use' : 'not permitted for this user';
      throw new ConfigError([`PORT: cannot listen on port ${settings.port} (${why})`]);
    }
    throw err;
  }
}
