/**
 * The sandbox's own records and the JSON shapes it answers with (CONTRACT.md "Call resources").
 */
export interface Participant {
  name: string;
  email: string;
  /** Absent for people without a company (free-mail contacts): the spec types it, real data omits it. */
  company?: string;
}

/** CONTRACT.md: assumed status values. */
export type KnownCallStatus =
  'scheduled' | 'in_progress' | 'completed' | 'processing' | 'analyzed' | 'failed';
/** Any other value (e.g. `cancelled`) can be set through the admin API: clients must keep it. */
export type CallStatus = KnownCallStatus | (string & {});

export interface Scoring {
  overall: number;
  rapport: number;
  discovery: number;
  objection_handling: number;
  closing: number;
}

export interface Objection {
  type: string;
  text: string;
  handled: boolean;
  at_seconds: number;
}

export interface TranscriptSegment {
  speaker: string;
  start_seconds: number;
  end_seconds: number;
  text: string;
}

export interface Transcript {
  call_id: string;
  language: string;
  segments: TranscriptSegment[];
}

export interface Analysis {
  call_id: string;
  summary: string;
  scoring: Scoring;
  objections: Objection[];
  next_steps: string[];
  methodology: string;
}

export interface FollowupDraft {
  id: string;
  subject: string;
  body: string;
  to: string[];
  created_at: string;
}

/** One call as the sandbox keeps it; `callToJson` turns it into the API's call object. */
export interface CallRecord {
  id: string;
  status: CallStatus;
  createdAtMs: number;
  durationSeconds?: number;
  platform: string;
  methodology: string;
  participant: Participant;
  transcript?: Transcript;
  analysis?: Analysis;
  /** Size of the generated recording, fixed per call so repeated downloads agree. */
  recordingBytes: number;
}

export interface CallJson {
  id: string;
  status: CallStatus;
  created_at: string;
  duration_seconds?: number;
  platform: string;
  participant: Participant;
  scoring?: Scoring;
  objections_detected?: number;
  objections_handled?: number;
  methodology: string;
  links: { transcript: string; analysis: string; recording: string; followups: string };
}

export const EVENT_TYPES = [
  'call.started',
  'call.completed',
  'transcript.ready',
  'analysis.ready',
  'followup.generated',
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

export interface WebhookEvent {
  id: string;
  type: EventType;
  created_at: string;
  data: { call_id: string; call?: CallJson; followup?: FollowupDraft };
}

/** An emitted event and the exact bytes sent, so that a replay re-sends identical bodies. */
export interface EmittedEvent {
  event: WebhookEvent;
  body: string;
}

export function callToJson(call: CallRecord): CallJson {
  const base = `/v1/calls/${encodeURIComponent(call.id)}`;
  // Scores and objection counts appear only once analysed: a missing scoring means "not scored yet".
  const analysis = call.status === 'analyzed' ? call.analysis : undefined;
  return {
    id: call.id,
    status: call.status,
    created_at: new Date(call.createdAtMs).toISOString(),
    ...(call.durationSeconds !== undefined && { duration_seconds: call.durationSeconds }),
    platform: call.platform,
    participant: { ...call.participant },
    ...(analysis && {
      scoring: { ...analysis.scoring },
      objections_detected: analysis.objections.length,
      objections_handled: analysis.objections.filter((o) => o.handled).length,
    }),
    methodology: call.methodology,
    links: {
      transcript: `${base}/transcript`,
      analysis: `${base}/analysis`,
      recording: `${base}/recording`,
      followups: `${base}/followups`,
    },
  };
}
