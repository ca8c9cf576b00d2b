/**
 * Deterministic seeded calls. The first calls (oldest, so first in `GET /v1/calls`) use
 * SANDBOX_PARTICIPANTS, which the HubSpot and Salesforce sandboxes seed to hit the tricky CRM
 * lookups: mixed-case emails, a lead rather than a contact, nobody yet, free-mail, a deal.
 */
import { makeAnalysis, makeFollowupDrafts, makeTranscript } from './content.js';
import { hashString, hexId, intBetween, pick, seededRandom, type Random } from './rng.js';
import type { CallRecord, CallStatus, FollowupDraft, Participant } from './types.js';

export const SANDBOX_PARTICIPANTS: readonly Participant[] = [
  { name: 'Jane Doe', email: 'jane.doe@acme.example', company: 'Acme Corp' },
  { name: 'Bob Smith', email: 'Bob.Smith@ACME.example', company: 'Acme Corp' },
  { name: 'Lena Lead', email: 'lena.lead@globex.example', company: 'Globex' },
  { name: 'New Person', email: 'newperson@initech.example', company: 'Initech' },
  { name: 'Sam Solo', email: 'sam@gmail.com' },
  { name: 'Dana Deals', email: 'dana@umbrella.example', company: 'Umbrella Inc' },
];

export const PLATFORMS = ['zoom', 'google_meet', 'microsoft_teams', 'webex', 'phone'] as const;
export const METHODOLOGIES = ['MEDDIC', 'SPIN', 'Challenger', 'BANT', 'Sandler'] as const;

const FIRST_NAMES = ['Olivia', 'Liam', 'Emma', 'Noah', 'Ava', 'Mateo', 'Sofia', 'Yuki', 'Amara', 'Lukas'];
const LAST_NAMES = ['Garcia', 'Okafor', 'Nguyen', 'Schmidt', 'Rossi', 'Kowalski', 'Tanaka', 'Haddad'];
const COMPANIES: readonly { name: string; domain: string }[] = [
  { name: 'Acme Corp', domain: 'acme.example' },
  { name: 'Globex', domain: 'globex.example' },
  { name: 'Initech', domain: 'initech.example' },
  { name: 'Umbrella Inc', domain: 'umbrella.example' },
  { name: 'Hooli', domain: 'hooli.example' },
  { name: 'Stark Industries', domain: 'stark.example' },
  { name: 'Wayne Enterprises', domain: 'wayne.example' },
];
const FREE_MAIL = ['gmail.com', 'outlook.com', 'yahoo.com', 'proton.me'];

/** Per-call random source: the same call id and seed always produce the same content. */
export function callRandom(seed: number, callId: string, purpose: string): Random {
  return seededRandom(hashString(`${purpose}:${callId}`, seed >>> 0));
}

/** Some emails keep the sender's capitalisation (Jane.Doe@Acme.example), some are free-mail. */
export function makeParticipant(random: Random): Participant {
  const first = pick(random, FIRST_NAMES);
  const last = pick(random, LAST_NAMES);
  const roll = random();
  if (roll < 0.2) {
    return { name: `${first} ${last}`, email: `${first}.${last}@${pick(random, FREE_MAIL)}`.toLowerCase() };
  }
  const company = pick(random, COMPANIES);
  const local = `${first}.${last}`;
  if (roll < 0.45) {
    const domain = company.domain.charAt(0).toUpperCase() + company.domain.slice(1);
    return { name: `${first} ${last}`, email: `${local}@${domain}`, company: company.name };
  }
  return {
    name: `${first} ${last}`,
    email: `${local}@${company.domain}`.toLowerCase(),
    company: company.name,
  };
}

function pickStatus(random: Random): CallStatus {
  const roll = random();
  if (roll < 0.7) return 'analyzed';
  if (roll < 0.8) return 'completed';
  if (roll < 0.9) return 'processing';
  return 'failed';
}

/** Recordings of several hundred KB: big enough to prove streaming, small enough for CI. */
function recordingBytes(random: Random): number {
  return intBetween(random, 200, 800) * 1024;
}

/** Builds a new call record (no transcript or analysis yet). */
export function newCallRecord(
  id: string,
  createdAtMs: number,
  participant: Participant,
  random: Random,
): CallRecord {
  return {
    id,
    status: 'in_progress',
    createdAtMs,
    platform: pick(random, PLATFORMS),
    methodology: pick(random, METHODOLOGIES),
    participant,
    recordingBytes: recordingBytes(random),
  };
}

/** Sets a completed call's transcript, and with `analyse` its analysis too. */
export function fillContent(call: CallRecord, seed: number, analyse: boolean): void {
  call.transcript ??= makeTranscript(call, callRandom(seed, call.id, 'transcript'));
  if (analyse) call.analysis ??= makeAnalysis(call, callRandom(seed, call.id, 'analysis'));
}

export interface SeedOptions {
  count: number;
  seed: number;
  /** The newest seeded call is a few hours before this instant. */
  nowMs: number;
}

export interface SeededData {
  calls: CallRecord[];
  followups: Map<string, FollowupDraft[]>;
}

/**
 * `count` calls spaced about six hours apart, oldest first. The first six use
 * SANDBOX_PARTICIPANTS and are analysed; the last two are still running or scheduled.
 */
export function seedCalls(options: SeedOptions): SeededData {
  const { count, seed, nowMs } = options;
  const random = seededRandom(seed);
  const spacingMs = 6 * 3600_000;
  const start = Math.floor((nowMs - count * spacingMs) / 1000) * 1000;
  const calls: CallRecord[] = [];
  const followups = new Map<string, FollowupDraft[]>();
  for (let i = 0; i < count; i++) {
    const special = SANDBOX_PARTICIPANTS[i];
    const participant =
      special ?? (random() < 0.4 ? pick(random, SANDBOX_PARTICIPANTS) : makeParticipant(random));
    const createdAtMs = start + i * spacingMs + intBetween(random, 0, 3 * 3600) * 1000;
    const call = newCallRecord(`call_${hexId(random, 16)}`, createdAtMs, { ...participant }, random);
    const tail = count - i;
    call.status = special
      ? 'analyzed'
      : tail === 1
        ? 'scheduled'
        : tail === 2
          ? 'in_progress'
          : pickStatus(random);
    if (call.status !== 'scheduled' && call.status !== 'in_progress') {
      call.durationSeconds = intBetween(random, 8 * 60, 55 * 60);
      fillContent(call, seed, call.status === 'analyzed');
    }
    // A few older analysed calls already have drafts; the six CRM-case calls start clean.
    if (!special && call.status === 'analyzed' && random() < 0.3) {
      followups.set(
        call.id,
        makeFollowupDrafts(call, {}, callRandom(seed, call.id, 'followup'), createdAtMs),
      );
    }
    calls.push(call);
  }
  return { calls, followups };
}
