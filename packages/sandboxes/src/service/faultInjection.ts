/**
 * Carries out a fault decided by faults.ts or a script, and records in the fault log what really
 * happened: whether the handler ran and had its side effect (`acted`), and whether the client
 * could tell (`ambiguous`). A fault that acts runs the handler against a CapturedResponse, so the
 * side effect happens while its answer is lost, delayed or cut short.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Writable } from 'node:stream';
import { sleep, type Clock } from '../clock.js';
import { errorPage, faultLabel, isAmbiguous, type FaultDecision } from './faults.js';
import { sendError } from './http.js';
import type { SandboxState } from './state.js';

export interface FaultTarget {
  clock: Clock;
  state: SandboxState;
  endpoint: string;
  callId: string | undefined;
  /** The route changes state (POST): only then can a fault have acted. */
  write: boolean;
  scripted: boolean;
  /** Runs the route's handler, answering on `res`. */
  run: (res: ServerResponse) => Promise<void>;
}

type Fault = Exclude<FaultDecision, { kind: 'none' }>;

export async function injectFault(
  target: FaultTarget,
  fault: Fault,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const record = (acted: boolean) => {
    target.state.faultLog.push({
      at: new Date(target.clock.now()).toISOString(),
      endpoint: target.endpoint,
      ...(target.callId !== undefined && { callId: target.callId }),
      fault: faultLabel(fault),
      ambiguous: isAmbiguous(fault),
      acted,
      scripted: target.scripted,
    });
  };
  switch (fault.kind) {
    case 'throttle':
      record(false);
      req.resume();
      return sendError(res, 429, 'rate_limited', 'the Service is busy; retry after the given delay', {
        'retry-after': String(fault.retryAfterS),
      });
    case 'error': {
      const answer = fault.acted ? await runCaptured(target) : (req.resume(), undefined);
      record(answer?.acted ?? false);
      const page = fault.html ? errorPage(fault.status) : '';
      res.writeHead(fault.status, fault.html ? { 'content-type': 'text/html' } : { 'content-length': '0' });
      res.end(page);
      return;
    }
    case 'stall': {
      const answer = fault.acted ? await runCaptured(target) : (req.resume(), undefined);
      record(answer?.acted ?? false);
      await sleep(target.clock, fault.ms);
      // By now the client has usually given up; whoever is still there gets the late answer.
      if (answer && !res.destroyed) return answer.relay(res);
      req.socket.destroy();
      return;
    }
    case 'drop': {
      target.state.counters.dropped++;
      if (fault.phase === 'before') {
        record(false);
        req.socket.destroy();
        return;
      }
      const answer = await runCaptured(target);
      record(answer.acted);
      answer.relayHalf(res, () => req.socket.destroy());
      return;
    }
  }
}

interface CapturedAnswer {
  acted: boolean;
  relay(res: ServerResponse): void;
  /** Sends the head and half the body, then calls `cut`. */
  relayHalf(res: ServerResponse, cut: () => void): void;
}

async function runCaptured(target: FaultTarget): Promise<CapturedAnswer> {
  const captured = new CapturedResponse();
  await target.run(captured as unknown as ServerResponse);
  const body = captured.body();
  const head = (res: ServerResponse) =>
    res.writeHead(captured.statusCode, { ...captured.headers, 'content-length': String(body.length) });
  return {
    acted: target.write && captured.statusCode >= 200 && captured.statusCode < 300,
    relay: (res) => head(res).end(body),
    relayHalf: (res, cut) => {
      head(res).flushHeaders();
      res.write(body.subarray(0, Math.floor(body.length / 2)), cut);
    },
  };
}

/**
 * Stands in for a ServerResponse: the API handlers answer through writeHead + end (sendJson) or
 * by piping into it (recordings), and both land here in memory.
 */
class CapturedResponse extends Writable {
  statusCode = 200;
  headers: Record<string, string> = {};
  headersSent = false;
  private readonly chunks: Buffer[] = [];

  writeHead(status: number, headers: Record<string, string> = {}): this {
    this.statusCode = status;
    Object.assign(this.headers, headers);
    this.headersSent = true;
    return this;
  }

  override _write(chunk: Buffer | string, _encoding: BufferEncoding, done: () => void): void {
    this.chunks.push(Buffer.from(chunk));
    done();
  }

  body(): Buffer {
    return Buffer.concat(this.chunks);
  }
}
